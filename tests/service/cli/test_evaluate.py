"""``plb evaluate``'s new users in a few lines; every row with ``--all`` (issue 32, item 10).

The new-users section comes from the held-out evaluation of a real run
(``tests/data/evaluate_new_users.json``: ``plb evaluate`` of an 80-user simulation with
its truth, 25 rating rows and 18 later-vote rows), so the summary is checked against
what the command really produces.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main
from service.cli.evaluate import format_new_users
from service.cli.evaluation_summary import summarise_new_users

SECTION_PATH = Path(__file__).resolve().parents[2] / "data" / "evaluate_new_users.json"


@pytest.fixture(scope="module")
def section() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SECTION_PATH.read_text())
    return document


def test_the_summary_is_short_and_names_each_answer(section: dict[str, Any]) -> None:
    text = summarise_new_users(section)
    full = format_new_users(section)
    assert len(text.splitlines()) < len(full.splitlines()) / 2
    assert all(len(line) <= 100 for line in text.splitlines())
    assert text.startswith("New users: 16 users held out whole")
    # the served (shrunk) ratings: the closest prediction that is not told the truth
    assert "BT: contextual BT, expected fit is 7% closer than the mean of the others" in text
    assert "absolute error 32.61 against 35.22" in text
    assert "Elo: contextual BT, expected Elo is 11% closer" in text
    assert "true ratings" not in text  # the yardstick told the truth is never "best"
    # one row a number of first votes, the best way beside the aggregate's
    assert "\n5 votes   977    per prompt " in text
    assert "0.6685    0.6903       -0.0218 (0.0061)  59.1% vs 53.9%" in text
    assert "\n20 votes  742    blend of queries and votes  0.6675" in text
    assert (
        "Against the truth: their predicted rankings 0.722 (Spearman), the aggregate's 0.374"
        in text
    )
    assert text.rstrip().endswith("plb evaluate --all (or --format json).")


def test_no_prediction_closer_than_the_mean_is_said(section: dict[str, Any]) -> None:
    worse = json.loads(json.dumps(section))
    for row in worse["ratings"]:
        if row["target"] == "shrunk" and row["method"] == "bt" and "mae" in row:
            row["mae"] = row["mae_mean_predictor"] + 1.0
    worse["votes"] = []
    worse["ratings"] = [r for r in worse["ratings"] if r["target"] != "truth"]
    text = summarise_new_users(worse)
    assert "BT: ridge on profile is no closer than the mean of the others" in text
    assert "Their later votes" not in text and "Against the truth" not in text


@pytest.fixture(scope="module")
def battles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_simulation(simulate(40, 20, 5, rng=2), tmp_path_factory.mktemp("sim"))["battles"]


class _Section:
    """What ``evaluate_cold_start`` returns, reduced to what ``plb evaluate`` reads."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def to_dict(self) -> dict[str, Any]:
        return self.document


@pytest.mark.parametrize("everything", [False, True], ids=["summary", "--all"])
def test_evaluate_prints_the_summary_unless_all(
    everything: bool,
    section: dict[str, Any],
    battles: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The new users' evaluation itself is replaced by the recorded one: its fit is
    minutes of CPU, and what is tested here is which tables print."""
    monkeypatch.setattr(
        "features.cold_start.evaluate_cold_start", lambda *a, **k: _Section(section)
    )
    argv = ["-q", "evaluate", str(battles), "--method", "bt"]
    assert main([*argv, *(["--all"] if everything else [])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Held-out evaluation: each user's latest 20% of votes")
    assert ("true ratings, expected fit" in out) is everything
    assert ("plb evaluate --all" in out) is not everything
    assert main([*argv, "--format", "json", *(["--all"] if everything else [])]) == 0
    assert json.loads(capsys.readouterr().out)["new_users"] == section  # JSON: all of it
