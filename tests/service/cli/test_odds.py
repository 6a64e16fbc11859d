"""``plb leaderboard`` and ``plb users`` with the odds of docs/SPEC.md section 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.api.schemas import ModelRatingPublic
from service.cli import main


@pytest.fixture(scope="module")
def battles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = write_simulation(simulate(60, 30, 6, rng=2), tmp_path_factory.mktemp("sim"))
    return files["battles"]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["-q", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("method", "ci"), [("bt", "sandwich"), ("bt", "bootstrap"), ("elo", "bootstrap")]
)
def test_leaderboard_rows_carry_odds(
    battles: Path, capsys: pytest.CaptureFixture[str], method: str, ci: str
) -> None:
    argv = ["leaderboard", str(battles), "--method", method, "--ci", ci, "--rounds", "30"]
    rows = run_json(capsys, *argv)["models"]
    assert sum(r["p_best"] for r in rows) == pytest.approx(1.0, abs=1e-3)
    assert all(1 <= r["rank_lower"] <= r["rank_upper"] <= len(rows) for r in rows)
    assert all(r["lower"] <= r["rating"] <= r["upper"] for r in rows)
    assert main(["-q", *argv]) == 0
    table = capsys.readouterr().out
    lines = table.splitlines()
    assert lines[0].startswith(f"{method.upper()} leaderboard: ")
    assert lines[1].startswith("Likeliest best (95% rank range): ")
    likeliest = max(rows, key=lambda r: r["p_best"])
    assert f"{likeliest['model']} " in lines[1]


def test_no_interval_no_odds(battles: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "leaderboard", str(battles), "--ci", "none")["models"]
    assert not any("p_best" in r for r in rows)
    assert main(["-q", "leaderboard", str(battles), "--ci", "none"]) == 0
    assert "Likeliest best" not in capsys.readouterr().out


def test_users_carry_their_odds(battles: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = run_json(capsys, "users", str(battles), "--min-battles", "5")
    assert document["users"]
    for entry in document["users"]:
        assert set(entry["p_best"]) == set(entry["ratings"])
        assert sum(entry["p_best"].values()) == pytest.approx(1.0, abs=1e-2)
        assert all(entry["rank_lower"][m] <= entry["rank_upper"][m] for m in entry["ratings"])
    assert "p_best" in document["aggregate"]["models"][0]
    assert main(["-q", "users", str(battles), "--show", "3"]) == 0
    assert "likeliest best (p_best)" in capsys.readouterr().out
    elo = run_json(capsys, "users", str(battles), "--method", "elo", "--min-battles", "5")
    assert not any("p_best" in entry for entry in elo["users"])


def test_the_rest_schema_keeps_the_odds() -> None:
    row = {
        "model": "m",
        "rating": 1010.0,
        "lower": 990.0,
        "upper": 1030.0,
        "rank": 1,
        "battles": 9,
        "wins": 5,
        "losses": 3,
        "ties": 1,
    }
    with_odds = {**row, "p_best": 0.61, "rank_lower": 1, "rank_upper": 2}
    assert ModelRatingPublic.model_validate(with_odds).model_dump() == with_odds
    assert ModelRatingPublic.model_validate(row).model_dump() == row  # no null odds
    properties = ModelRatingPublic.model_json_schema(mode="serialization")["properties"]
    assert {"p_best", "rank_lower", "rank_upper", "ties"} <= set(properties)
