"""``plb history``: a board a period of a log, and the drift flags; exit 2 naming the
option on what cannot work."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from service.cli import main
from tests.reference.drift_arena import drift_arena


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6,000 votes over four months; m0 gains 300 points on March 1."""
    data, t = drift_arena(3, 300.0, 6000)
    names = list(data.models)
    frame = pd.DataFrame(
        {
            "model_a": [names[i] for i in data.matchups[:, 0]],
            "model_b": [names[i] for i in data.matchups[:, 1]],
            "winner": ["model_a" if o == 1.0 else "model_b" for o in data.outcomes],
            "tstamp": t,
        }
    )
    path = tmp_path_factory.mktemp("history") / "battles.csv"
    frame.to_csv(path, index=False)
    return path


def test_the_model_that_moved_is_flagged(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", str(log), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["unit"] == "month"
    assert [p["label"] for p in document["periods"]] == ["2024-01", "2024-02", "2024-03", "2024-04"]
    assert document["drifting"] == ["m0"]
    (flag,) = [t for t in document["drift"] if t["flagged"]]
    assert (flag["before"], flag["after"]) == ("2024-02", "2024-03") and flag["change"] > 150
    assert main(["history", str(log)]) == 0
    table = capsys.readouterr().out
    assert "Drifting: m0" in table and "2024-03 +" in table


def test_options(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["history", str(log), "--format", "json", "--unit", "2", "--since", "2024-02-01"]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["unit"] == "equal" and len(document["periods"]) == 2
    assert document["window"] == {"since": "2024-02-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--unit", "year"], "--unit: 'year' is not"),
        (["--level", "1.5"], "--level"),
        (["--min-votes", "0"], "--min-votes"),
    ],
)
def test_bad_options_exit_2(
    options: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["history", "/nonexistent/battles.csv", *options]) == 2
    assert expected in capsys.readouterr().err


def test_a_log_without_tstamp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("model_a,model_b,winner\nx,y,model_a\n", encoding="utf-8")
    assert main(["history", str(path)]) == 2
    assert "carry no tstamp" in capsys.readouterr().err
