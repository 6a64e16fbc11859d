"""The progress protocol of the maths: an optional reporter, started per stage."""

from __future__ import annotations

from ranking.progress import start
from tests.conftest import RecordedProgress


def test_start_without_a_reporter_does_nothing() -> None:
    advance = start(None, "anything", 10, "rounds")
    assert advance(3) is None


def test_start_hands_the_stage_to_the_reporter() -> None:
    progress = RecordedProgress()
    advance = start(progress, "Elo bootstrap", 5, "rounds")
    advance(2)
    advance(3)
    assert [(s.name, s.total, s.unit, s.done) for s in progress.stages] == [
        ("Elo bootstrap", 5, "rounds", 5)
    ]
    start(progress, "next", 1)
    assert progress.stages[-1].unit == "steps"
