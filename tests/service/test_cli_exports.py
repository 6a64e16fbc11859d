"""``plb leaderboard --format csv|parquet`` (docs/SPEC.md section 3)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from data.simulate import simulate, write_simulation
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
