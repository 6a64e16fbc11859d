"""How long the workers spent on each kind of task of a fit, from Dask's task stream.

The client's own steps (:class:`service.pipeline.timings.Stopwatch`) say how long it
waited, not what the workers did meanwhile. :func:`worker_timings` adds, per kind of
task, the wall seconds from the first task's start to the last one's end (what shrinks
when the work spreads over more workers) and the seconds the tasks computed in all
(what stays): parts of a step ``on the workers`` in the fit's ``timings``, so benchmark
H's table shows which steps scale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from service.pipeline.timings import substep

__all__ = ["KINDS", "STEP", "worker_timings"]

#: The step the workers' parts are listed under.
STEP = "on the workers"
#: Task functions (by name) and what they are called in the timings, in this order.
KINDS: dict[str, str] = {
    "warm_up": "loading the code",
    "keep": "receiving the votes",
    "bootstrap_batch": "Elo bootstrap",
    "shrinkage_alpha": "shrinkage strength",
    "partition_users": "per-user fits",
    "embed_batches": "query embeddings",
}


def _name(key: Any) -> str:
    """The function of a task key: ``bootstrap_batch-1f0e...`` gives ``bootstrap_batch``."""
    from dask.utils import key_split

    return str(key_split(key))


def worker_timings(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Per kind of task in :data:`KINDS`: its span and its task seconds, as timings parts.

    Parameters
    ----------
    records : iterable of mapping
        Dask's task stream (``distributed.get_task_stream(...).data``): each task's
        ``key`` and ``startstops`` (``action``, ``start``, ``stop``).

    Returns
    -------
    dict of str to float
        ``"on the workers / KIND"``: seconds from the first start to the last end of
        the kind's computations; ``"on the workers / KIND, task seconds"``: their sum.
        Kinds that did not run are left out; so are the others' tasks (Dask's own).
    """
    spans: dict[str, list[float]] = {}
    for record in records:
        kind = KINDS.get(_name(record.get("key")))
        if kind is None:
            continue
        for interval in record.get("startstops", ()):
            if interval.get("action") != "compute":
                continue
            start, stop = float(interval["start"]), float(interval["stop"])
            first, last, busy = spans.get(kind, [start, stop, 0.0])
            spans[kind] = [min(first, start), max(last, stop), busy + stop - start]
    timings: dict[str, float] = {}
    for kind in dict.fromkeys(KINDS.values()):
        if kind in spans:
            first, last, busy = spans[kind]
            timings[substep(STEP, kind)] = round(last - first, 3)
            timings[substep(STEP, f"{kind}, task seconds")] = round(busy, 3)
    return timings
