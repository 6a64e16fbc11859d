"""``plb leaderboard --format csv|parquet`` (docs/SPEC.md section 3)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main


@pytest.fixture(scope="module")
def battles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = write_simulation(simulate(40, 20, 5, rng=3), tmp_path_factory.mktemp("sim"))
    return files["battles"]


def _json_board(battles: Path, capsys: pytest.CaptureFixture[str], *options: str) -> dict:
    assert main(["-q", "leaderboard", str(battles), *options, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_csv_is_the_json_board_as_rows(battles: Path, capsys: pytest.CaptureFixture[str]) -> None:
    board = _json_board(battles, capsys, "--method", "elo", "--rounds", "20")
    assert main(["-q", "leaderboard", str(battles), "--method", "elo", "--rounds", "20",
                 "--format", "csv"]) == 0  # fmt: skip
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert frame["model"].tolist() == [m["model"] for m in board["models"]]
    assert frame["rating"].tolist() == pytest.approx([m["rating"] for m in board["models"]])
    assert frame["p_best"].tolist() == pytest.approx([m["p_best"] for m in board["models"]])


def test_parquet_goes_to_a_redirected_stdout(
    battles: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["-q", "leaderboard", str(battles), "--format", "parquet"]) == 0
    data = capsysbinary.readouterr().out
    table = pq.read_table(io.BytesIO(data))
    assert table.num_rows == 5
    assert json.loads(table.schema.metadata[b"leaderboard"])["method"] == "bt"


def test_parquet_to_a_terminal_is_refused(
    battles: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["-q", "leaderboard", str(battles), "--format", "parquet"]) == 2
    assert "--format parquet writes a binary file" in capsys.readouterr().err


def test_other_commands_offer_no_table_formats(
    battles: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["users", str(battles), "--format", "csv"])
    assert stopped.value.code == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err


def test_csv_model_names_never_run_as_formulas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    formulas = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3"]
    names = [*formulas, "plain"]
    log = tmp_path / "formulas.jsonl"
    votes = [  # the earlier name beats the later one, or ties
        {"model_a": a, "model_b": b, "winner": "model_a" if i < j else "tie", "user_id": f"u{k}"}
        for k in range(3)
        for i, a in enumerate(names)
        for j, b in enumerate(names)
        if a != b
    ]
    log.write_text("".join(json.dumps(vote) + "\n" for vote in votes))
    argv = ["-q", "leaderboard", str(log), "--min-votes", "0", "--anchor", "plain=-50"]
    assert main([*argv, "--format", "csv"]) == 0
    header, *rows = list(csv.reader(io.StringIO(capsys.readouterr().out, newline="")))
    cells = [row[header.index("model")] for row in rows]
    assert sorted(cells) == sorted(["'" + f for f in formulas] + ["plain"])
    ratings = [row[header.index("rating")] for row in rows]
    assert ratings[-1] == "-50.0"  # the anchored weakest: a negative number stays a number
    assert all(float(r) > -50 for r in ratings[:-1])
