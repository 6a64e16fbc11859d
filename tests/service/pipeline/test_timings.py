"""A fit's step timings (:mod:`service.pipeline.timings`) and ``plb fit``'s step table."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main
from service.pipeline.timings import SEPARATOR, Stopwatch, substep, timed_stages


def test_steps_add_up_in_order_and_parts_nest() -> None:
    watch = Stopwatch()
    with watch.step("a"):
        time.sleep(0.01)
    with watch.step("b"), watch.step(substep("b", "x")):
        time.sleep(0.01)
    with watch.step("a"):
        time.sleep(0.01)
    seconds = watch.to_dict()
    assert list(seconds) == ["a", "b", f"b{SEPARATOR}x"]  # in the order they started
    assert seconds["a"] >= 0.02
    assert seconds["b"] >= seconds[f"b{SEPARATOR}x"] >= 0.01


def test_laps_end_where_the_next_begins() -> None:
    watch = Stopwatch()
    watch.begin("first")
    time.sleep(0.01)
    watch.begin("second")
    watch.end()
    watch.end()  # nothing open: no effect
    seconds = watch.to_dict()
    assert list(seconds) == ["first", "second"]
    assert seconds["first"] >= 0.01 > seconds["second"]


def test_timed_stages_time_each_stage_as_a_part_and_pass_it_on() -> None:
    watch, told = Stopwatch(), []

    def progress(stage: str, total: int, unit: str) -> object:
        told.append((stage, total, unit))
        return lambda steps: told.append(steps)

    parts = timed_stages(watch, "features", progress)
    with watch.step("features"):
        parts("embedding", 10, "queries")(3)
        time.sleep(0.01)
        parts("topics", 1, "fits")
        watch.end()
    assert told == [("embedding", 10, "queries"), 3, ("topics", 1, "fits")]
    seconds = watch.to_dict()
    assert list(seconds) == [
        "features",
        substep("features", "embedding"),
        substep("features", "topics"),
    ]
    assert seconds["features"] >= seconds[substep("features", "embedding")] >= 0.01
    timed_stages(Stopwatch(), "alone")("stage", 1, "steps")(1)  # no progress to pass on


@pytest.fixture(scope="module")
def battles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_simulation(simulate(30, 20, 5, rng=4), tmp_path_factory.mktemp("sim"))["battles"]


def test_plb_fit_lists_its_steps(
    battles: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fit"
    argv = ["-q", "fit", str(battles), "--out", str(out), "--no-features", "--format", "json"]
    assert main(argv) == 0
    timings = json.loads(capsys.readouterr().out)["timings"]
    steps = [name for name in timings if SEPARATOR not in name]
    assert steps == [
        "ingest",
        "votes to arrays",
        "aggregate boards",
        "per-user fits",
        "held-out evaluation",
        "writing",
    ]
    cells = [name.partition(SEPARATOR)[2] for name in timings if name.startswith("per-user")]
    assert cells[1:] == ["bt cv", "bt none", "elo cv", "elo none"]
    assert all(seconds >= 0 for seconds in timings.values())
    assert main(["-q", "fit", str(battles), "--out", str(tmp_path / "t"), "--no-features"]) == 0
    table = capsys.readouterr().out
    assert "Steps (wall seconds)" in table
    assert "\n  bt cv " in table and "\ntotal " in table
