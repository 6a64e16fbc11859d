"""How long each step of a fit took: :class:`Stopwatch`, for ``plb fit``'s step table."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from ranking.progress import Advance, Progress, start

__all__ = ["SEPARATOR", "Stopwatch", "substep", "timed_stages"]

#: Between a step and a part of it, in a step's name: ``"per-user fits / bt cv"``.
SEPARATOR = " / "


def substep(step: str, part: str) -> str:
    """The name of ``part`` of ``step``: timed inside it, so not added to the total."""
    return f"{step}{SEPARATOR}{part}"


class Stopwatch:
    """The wall seconds of named steps, in the order they first ran.

    A step timed twice adds up. A part of a step (named by :func:`substep`) is timed
    inside it: the steps without a separator in their names add up to the whole.

    Examples
    --------
    >>> watch = Stopwatch()
    >>> with watch.step("ingest"):
    ...     pass
    >>> list(watch.to_dict())
    ['ingest']
    """

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}
        self._lap: tuple[str, float] | None = None

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Time the ``with`` block as step ``name``."""
        self._seconds.setdefault(name, 0.0)
        start = time.perf_counter()
        try:
            yield
        finally:
            self._seconds[name] += time.perf_counter() - start

    def begin(self, name: str) -> None:
        """End the step :meth:`begin` started last, if any, and start step ``name``.

        For a pipeline whose steps overlap (the Dask fit waits on futures): each step
        lasts until the next begins, so the steps add up to the whole.
        """
        self.end()
        self._seconds.setdefault(name, 0.0)
        self._lap = (name, time.perf_counter())

    def end(self) -> None:
        """End the step :meth:`begin` started, if any."""
        if self._lap is not None:
            name, start = self._lap
            self._seconds[name] += time.perf_counter() - start
            self._lap = None

    def to_dict(self) -> dict[str, float]:
        """Step to seconds (3 decimals), in order: the ``timings`` of ``plb fit``'s JSON."""
        return {name: round(seconds, 3) for name, seconds in self._seconds.items()}


def timed_stages(watch: Stopwatch, step: str, progress: Progress | None = None) -> Progress:
    """A :class:`~ranking.progress.Progress` that times each stage it is told of as a part
    of ``step`` (each until the next stage begins), and passes it on to ``progress``.

    For a step whose parts are announced by the code it calls (the query features'
    embedding, topics and rating predictor), which knows nothing of stopwatches. End the
    last part with :meth:`Stopwatch.end`.
    """

    def stage(name: str, total: int, unit: str) -> Advance:
        watch.begin(substep(step, name))
        return start(progress, name, total, unit)

    return stage
