"""What ``plb`` says on stderr while it works: progress bars and one-line notes.

Decided once a run, by :func:`configure` (``plb``'s ``main`` calls it): bars are drawn
when stderr is a terminal and ``-q/--quiet`` was not given; notes ("plb: fitting
topics ...") are printed unless ``--quiet``. Warnings, what reading left out, and errors
are not progress and are always printed. Stdout is never touched, so ``--format json``
stays one document.

The maths (``ranking``, ``features``) knows nothing of this: it is handed a
:class:`ranking.progress.Progress`, which :func:`stages` makes here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ranking.progress import Advance, Progress

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["bar", "bars_on", "configure", "note", "quiet", "stages", "stderr_is_terminal"]

_settings = {"bars": False, "quiet": False}


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (where a bar redrawn in place reads well)."""
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # replaced by something odd, or closed
        return False


def configure(*, quiet: bool) -> None:
    """Decide, once a run, whether to draw bars and print notes."""
    _settings["quiet"] = quiet
    _settings["bars"] = not quiet and stderr_is_terminal()


def bars_on() -> bool:
    """Whether :func:`bar` draws anything in this run."""
    return _settings["bars"]


def quiet() -> bool:
    """Whether ``--quiet`` was given."""
    return _settings["quiet"]


def note(message: str) -> None:
    """Say on stderr, on one line, what ``plb`` is doing; nothing with ``--quiet``."""
    if not _settings["quiet"]:
        print(f"plb: {message}", file=sys.stderr, flush=True)


def bar(
    *, desc: str, total: int | None = None, unit: str = "it", unit_scale: bool = False
) -> tqdm[Any]:
    """A tqdm bar on stderr named ``desc``, drawn only when :func:`bars_on`.

    It follows the terminal's width; a terminal that reports none (0 columns, as a fresh
    pseudo-terminal may) gets 80 columns and 24 rows, where tqdm would draw nothing.
    """
    from tqdm import tqdm  # here, not above: ``plb --help`` need not load it

    sized = _settings["bars"] and _stderr_columns() > 0
    return tqdm(
        desc=desc,
        total=total,
        unit=unit,
        unit_scale=unit_scale,
        file=sys.stderr,
        disable=not _settings["bars"],
        dynamic_ncols=sized,
        ncols=None if sized else 80,
        nrows=None if sized else 24,
    )


def _stderr_columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):  # not a terminal, or no file at all
        return 0


class _Bars:
    """A :class:`ranking.progress.Progress` drawing one bar a stage, one after another."""

    def __init__(self) -> None:
        self._bar: tqdm[Any] | None = None

    def __call__(self, stage: str, total: int, unit: str, /) -> Advance:
        self.close()
        if unit == "B":  # bytes: 4.13M/4.13M [..., 8.24MB/s]
            self._bar = bar(desc=stage, total=total, unit="B", unit_scale=True)
        else:
            self._bar = bar(desc=stage, total=total, unit=f" {unit}")
        return self._bar.update

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextmanager
def stages() -> Iterator[Progress]:
    """A :class:`~ranking.progress.Progress` for the maths; its last bar closes at the end."""
    bars = _Bars()
    try:
        yield bars
    finally:
        bars.close()
