"""How long computations say how far they are, without printing anything.

A function with a long loop takes ``progress: Progress | None = None``. At the start of
each stage it calls ``advance = progress(stage, total, unit)`` and then ``advance(n)``
once ``n`` more of the ``total`` steps are done; what is shown, if anything, is the
caller's business (the ``plb`` command line draws one bar a stage on stderr). Stages
follow one another: a new stage means the one before it is over. :func:`start` is the
one-liner for the optional argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Advance", "Progress", "start"]

#: Told how many more steps of the current stage are done.
Advance = Callable[[int], object]


class Progress(Protocol):
    """Starts a stage of ``total`` steps counted in ``unit`` and returns its :data:`Advance`."""

    def __call__(self, stage: str, total: int, unit: str, /) -> Advance: ...


def _ignore(steps: int) -> None:
    return None


def start(progress: Progress | None, stage: str, total: int, unit: str = "steps") -> Advance:
    """``progress(stage, total, unit)``, or a function that does nothing without one.

    Parameters
    ----------
    progress : Progress, optional
        Where to report.
    stage : str
        What is being done, e.g. ``"Elo bootstrap"``.
    total : int
        Steps the stage takes.
    unit : str
        What a step is, e.g. ``"rounds"``.

    Returns
    -------
    Advance
        Call it with the number of steps done since the last call.
    """
    if progress is None:
        return _ignore
    return progress(stage, total, unit)
