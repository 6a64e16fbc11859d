"""The workers' timings of a fit, from Dask's task stream."""

from __future__ import annotations

import uuid

import pytest

from service.scale.task_times import worker_timings

pytest.importorskip("dask")


def _record(name: str, *intervals: tuple[str, float, float]) -> dict[str, object]:
    """A task of function ``name`` (a key as Dask makes it: the name, then a token)."""
    return {
        "key": f"{name}-{uuid.uuid4().hex}",
        "startstops": tuple({"action": a, "start": s, "stop": e} for a, s, e in intervals),
    }


def test_span_and_task_seconds_per_kind() -> None:
    records = [
        _record("partition_users", ("compute", 10.0, 14.0)),
        _record("partition_users", ("transfer", 9.0, 10.0), ("compute", 11.0, 13.0)),
        _record("bootstrap_batch", ("compute", 2.0, 3.5)),
        _record("bootstrap_batch", ("compute", 3.5, 5.0)),
        _record("something_else", ("compute", 0.0, 100.0)),  # not the fit's
    ]
    assert worker_timings(records) == {
        "on the workers / Elo bootstrap": 3.0,
        "on the workers / Elo bootstrap, task seconds": 3.0,
        # two workers side by side: 6 s of work in 4 s
        "on the workers / per-user fits": 4.0,
        "on the workers / per-user fits, task seconds": 6.0,
    }


def test_nothing_recorded_is_nothing_listed() -> None:
    assert worker_timings([]) == {}
    assert worker_timings([_record("keep", ("transfer", 0.0, 1.0))]) == {}
