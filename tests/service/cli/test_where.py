"""``plb leaderboard --where``: what cannot work is refused before the rows are read.

The logs here have a valid header over rows that reading would reject (a winner that
is no winner): an answer about ``--where`` instead of about the rows shows that only
the header was read.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.cli import main
from service.cli.where import check_where, header_columns

HEADER = "id,model_a,model_b,winner,math,lang\n"
BAD_ROWS = "b1,x,y,maybe,1,de\nb2,x,z,nah,0,en\n"
GOOD_ROWS = "b1,x,y,model_a,1,de\nb2,x,z,model_b,0,en\nb3,y,z,tie,1,de\n"


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line ``plb`` prints on stderr for ``argv``, which must exit with 2."""
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and captured.out == "", captured.err
    return lines[0]


@pytest.mark.parametrize("gz", [False, True], ids=["csv", "csv.gz"])
def test_a_column_no_header_holds_is_refused_before_the_rows_are_read(
    gz: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / ("bad.csv.gz" if gz else "bad.csv")
    text = (HEADER + BAD_ROWS).encode()
    path.write_bytes(gzip.compress(text) if gz else text)
    line = error_line(capsys, "leaderboard", str(path), "--where", "foo=1")
    assert line.startswith("plb leaderboard: error: --where 'foo=1': column 'foo' is not in")
    assert f"(the label columns of {path}: lang, math)" in line
    assert "maybe" not in line and "winner" not in line  # the rows were never read
    # a column the header holds passes the check, and the rows are read (and refused)
    assert "'maybe'" in error_line(capsys, "leaderboard", str(path), "--where", "math=1")


@pytest.mark.parametrize("column", ["user_id", "prompt", "winner", "id", "tstamp"])
def test_the_vote_and_what_identifies_are_refused_without_any_file(
    column: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = error_line(capsys, "leaderboard", "/nonexistent/battles.csv", "--where", f"{column}=1")
    assert line.startswith(f"plb leaderboard: error: --where '{column}=1': '{column}' cannot")
    assert "battles.csv" not in line


def test_a_refused_column_is_told_the_labels_where_the_header_has_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + BAD_ROWS)
    line = error_line(capsys, "leaderboard", str(path), "--where", "user_id=u1")
    assert "'user_id' cannot be filtered on" in line
    assert line.endswith(f"(the label columns of {path}: lang, math)")


def test_a_column_of_any_log_passes_and_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.csv"
    first.write_text(HEADER + GOOD_ROWS)
    second = tmp_path / "second.csv"
    second.write_text("model_a,model_b,winner,topic\nx,y,model_b,code\n")
    argv = ["leaderboard", str(first), str(second), "--min-votes", "0", "--format", "json"]
    assert main([*argv, "--where", "topic=code"]) == 0
    assert json.loads(capsys.readouterr().out)["n_battles"] == 1
    line = error_line(capsys, *argv, "--where", "math=1", "--where", "colour=red")
    assert "--where 'colour=red': column 'colour'" in line
    assert f"(the label columns of {first}, {second}: lang, math, topic)" in line


def test_json_lines_are_checked_once_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON Lines record may hold keys the first one lacks: only reading can tell."""
    path = tmp_path / "log.jsonl"
    rows = [{"model_a": "x", "model_b": "y", "winner": "model_a"}, {"model_a": "y",
            "model_b": "x", "winner": "tie", "lang": "de"}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert header_columns(str(path)) is None
    assert check_where(["lang=de"], [str(path)]) == [("lang", "de")]
    line = error_line(capsys, "leaderboard", str(path), "--where", "foo=1")
    assert "'foo' is not in the battles" in line


def test_header_columns_of_each_format(tmp_path: Path) -> None:
    csv = tmp_path / "log.csv"
    csv.write_text('model_a,model_b,winner,"a, b"\nx,y,tie,1\n')
    assert header_columns(str(csv)) == ["model_a", "model_b", "winner", "a, b"]
    parquet = tmp_path / "log.parquet"
    meta = pa.array([{"lang": "de", "tags": {"math": 1}}])
    table = pa.table({"model_a": ["x"], "model_b": ["y"], "winner": ["tie"], "meta": meta})
    pq.write_table(table, parquet)
    assert header_columns(str(parquet)) == [
        "model_a", "model_b", "winner", "meta.lang", "meta.tags.math",
    ]  # fmt: skip
    assert header_columns(str(tmp_path / "absent.csv")) is None  # the reader says why
    garbled = tmp_path / "garbled.csv.gz"
    garbled.write_bytes(b"not gzip at all")
    assert header_columns(str(garbled)) is None


def test_a_nested_parquet_column_filters_by_its_dotted_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.parquet"
    meta = pa.array([{"lang": "de"}, {"lang": "en"}, {"lang": "de"}])
    table = pa.table(
        {"model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"], "winner": ["tie"] * 3}
    ).append_column("meta", meta)
    pq.write_table(table, path)
    argv = ["leaderboard", str(path), "--min-votes", "0", "--format", "json"]
    assert main([*argv, "--where", "meta.lang=de"]) == 0
    assert json.loads(capsys.readouterr().out)["n_battles"] == 2
    assert "column 'lang'" in error_line(capsys, *argv, "--where", "lang=de")
