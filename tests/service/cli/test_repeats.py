"""Tests for ``service/cli/repeats.py``: ``--repeat-cap`` on ``plb fit`` and ``plb
leaderboard``, and what they say the cap did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from data.repeated_prompts import with_repeated_prompts
from data.simulate import simulate
from service.cli import main
from service.cli.repeats import format_repeats

BOT_VOTES = 400


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small arena with two bot prompts asked 400 times each (spelled several ways)."""
    arena = with_repeated_prompts(simulate(60, 30, 6, rng=0), n_bots=2, bot_votes=BOT_VOTES)
    path = tmp_path_factory.mktemp("repeats") / "battles.csv"
    arena.battles.to_csv(path, index=False)
    return path


def _fit(log: Path, out: Path, capsys: pytest.CaptureFixture[str], *options: str) -> dict[str, Any]:
    argv = ["-q", "fit", str(log), "--out", str(out), "--no-features", *options]
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plb_fit_caps_repeated_prompts_by_default_and_says_so(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _fit(log, tmp_path / "fit", capsys)
    repeats = document["repeats"]
    assert repeats["option"] == "auto" and repeats["checked"] and repeats["cap"] == 50
    assert repeats["n_repeated"] == 2 and repeats["n_touched"] == 2 * BOT_VOTES
    assert repeats["weight_removed"] == 2 * (BOT_VOTES - 50)
    assert repeats["shift"]["largest_move"] > 0 and -1 <= repeats["shift"]["spearman"] <= 1
    manifest = json.loads((tmp_path / "fit" / "manifest.json").read_text())
    assert manifest["repeats"] == repeats
    boards = json.loads((tmp_path / "fit" / "leaderboard.json").read_text())
    for method in ("bt", "elo"):  # both public boards stand on the capped votes
        assert boards[method]["n_battles"] == document["n_battles"] - 2 * (BOT_VOTES - 50)
    assert main(["-q", "fit", str(log), "--out", str(tmp_path / "t"), "--no-features"]) == 0
    table = capsys.readouterr().out
    assert "Repeated prompts (cap 50 votes; auto" in table
    assert f"2 of {repeats['n_prompts']:,} prompts over the cap" in table
    assert "The Bradley-Terry board beside the uncapped one: Spearman" in table


def test_plb_fit_takes_a_cap_and_no_cap(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capped = _fit(log, tmp_path / "a", capsys, "--repeat-cap", "10", "--seed", "3")["repeats"]
    assert capped["option"] == 10 and capped["cap"] == 10
    assert capped["weight_removed"] == 2 * (BOT_VOTES - 10)
    off = _fit(log, tmp_path / "b", capsys, "--no-repeat-cap")
    assert off["repeats"] == {"option": None, "checked": False}
    boards = json.loads((tmp_path / "b" / "leaderboard.json").read_text())
    assert boards["bt"]["n_battles"] == boards["elo"]["n_battles"] == off["n_battles"]
    assert format_repeats(off["repeats"]) == "Repeated prompts: not capped (--no-repeat-cap)"


def test_a_log_without_prompts_is_not_checked(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare.csv"
    pd.read_csv(log).drop(columns=["prompt", "topic"]).to_csv(bare, index=False)
    document = _fit(bare, tmp_path / "fit", capsys)
    assert document["repeats"] == {"option": "auto", "checked": False}
    assert format_repeats(document["repeats"]) == (
        "Repeated prompts: not checked (the log has no prompts)"
    )


@pytest.mark.parametrize("value", ["0", "-3", "many", "2.5"])
def test_a_bad_repeat_cap_is_refused_naming_the_option_and_value(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    argv = ["fit", str(log), "--out", str(tmp_path / "x"), "--repeat-cap", value]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--repeat-cap must be a whole number of votes of at least 1 or 'auto'" in err
    assert repr(value) in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_a_cap_on_a_cluster_is_refused_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fit", "absent.csv", "--out", str(tmp_path / "x"), "--repeat-cap", "20"]
    assert main([*argv, "--scheduler", "local:1"]) == 2
    assert "--repeat-cap does not run on a cluster yet" in capsys.readouterr().err


def test_format_repeats_says_when_nothing_is_over_the_cap() -> None:
    document = {
        "option": 100,
        "checked": True,
        "mode": "sample",
        "cap": 100,
        "n_prompts": 13,
        "n_repeated": 0,
        "n_votes": 8931,
        "n_touched": 0,
        "weight_removed": 0.0,
        "largest": 724,
        "shift": None,
    }
    assert format_repeats(document) == (
        "Repeated prompts (cap 100 votes): none over the cap; the most asked prompt has "
        "724 of 8,931 votes (13 distinct prompts)"
    )
    assert format_repeats(None) == ""


def test_plb_leaderboard_caps_the_same_votes_as_plb_fit(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fit(log, tmp_path / "fit", capsys, "--repeat-cap", "30")
    fitted = json.loads((tmp_path / "fit" / "leaderboard.json").read_text())["bt"]
    argv = ["-q", "leaderboard", str(log), "--repeat-cap", "30", "--min-votes", "0"]
    assert main([*argv, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["n_battles"] == fitted["n_battles"]
    assert {m["model"]: round(m["rating"], 6) for m in board["models"]} == {
        m["model"]: round(m["rating"], 6) for m in fitted["models"]
    }
    repeats = board["repeats"]
    assert repeats["cap"] == 30 and repeats["n_touched"] == 2 * BOT_VOTES
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "Repeated prompts (cap 30 votes): 2 of" in table
    assert f"{2 * (BOT_VOTES - 30):,} votes dropped" in table


def test_plb_leaderboard_without_a_cap_counts_every_vote(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["-q", "leaderboard", str(log), "--format", "json", "--min-votes", "0"]
    assert main([*argv, "--no-repeat-cap"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert "repeats" not in every
    assert main(argv) == 0
    capped = json.loads(capsys.readouterr().out)
    assert capped["n_battles"] == every["n_battles"] - 2 * (BOT_VOTES - 50)
    assert main(["leaderboard", str(log), "--repeat-cap", "0"]) == 2
    assert "--repeat-cap must be a whole number of votes of at least 1" in capsys.readouterr().err
