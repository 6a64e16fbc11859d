"""Tests for ranking.io.columnar: the columnar fast path gives what the row path gives."""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranking.io.arrow_tables as arrow_tables
import ranking.io.duplicate_ids as duplicate_ids
import ranking.io.formats as formats
from ranking.io.chunks import BattleLogError
from ranking.io.duplicate_ids import repeated_ids
from ranking.io.formats import FORMATS
from ranking.io.ingest import IngestResult, read_battles

CSV = (
    '"id","model_a","model_b","winner","tstamp","turn","score","flag","maybe","lang","empty"\n'
    "007,gpt-4,claude-2,model_a,1700000000.5,1,0.5,True,true,en,\n"
    "008,claude-2,gpt-4,tie,1700000001,2,1.5,False,,de,\n"
    '009,"llama, 2",gpt-4,both_bad,,3,2,True,false,"fr",\n'
    "010,gpt-4,gpt-4,tie,1700000003,4,NA,False,true,en,\n"
    "007,gpt-4,claude-2,model_a,1700000000.5,5,3,True,true,en,\n"  # a repeat: dropped
    "011,gpt-4,claude-2,tie (bothbad),1700000005,6,4,False,True,NA,\n"
)


def _records() -> list[dict[str, Any]]:
    return [
        {"question_id": 17, "model_a": "x", "model_b": "y", "winner": "tie", "judge": "u1"},
        {"question_id": 18, "model_a": "y", "model_b": "x", "winner": "model_a", "tstamp": 5},
        {"question_id": 17, "model_a": "x", "model_b": "y", "winner": "tie", "judge": "u1"},
        {"model_a": "\U0001f916 robo", "model_b": "x", "winner": "model_b", "tstamp": 7.5},
        {"model_a": "x", "model_b": "x", "winner": "tie", "meta": {"a": 1, "b": {"c": True}}},
        {
            "model_a": "y",
            "model_b": "z",
            "winner": "tie",
            "when": "2024-01-02T03:04:05",
            "tags": ["a", "b"],
            "meta": {"a": 2},
            "prompt": 12,
        },
    ]


def _arena() -> list[dict[str, Any]]:
    turns = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    return [
        {"model_a": "x", "model_b": "y", "winner": "tie", "conversation_a": turns},
        {"model_a": "y", "model_b": "x", "winner": "model_a", "conversation_a": turns[:1]},
        {"model_a": "y", "model_b": "x", "winner": "model_b", "conversation_a": None},
    ]


def _files(folder: Path) -> list[Path]:
    csv = folder / "labels.csv"
    csv.write_text(CSV)
    jsonl = folder / "records.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in _records()) + "\n\n")
    arena = folder / "arena.jsonl.gz"
    arena.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in _arena()).encode()))
    parquet = folder / "records.parquet"
    frame = pd.DataFrame(_arena() + _records()[:2])
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), parquet)
    packed = folder / "labels.csv.gz"
    packed.write_bytes(gzip.compress(CSV.encode()))
    return [csv, jsonl, arena, parquet, packed]


def by_rows(monkeypatch: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> IngestResult:
    """``read_battles`` on the row path only."""
    with monkeypatch.context() as patch:
        patch.setattr(formats, "FORMATS", {k: replace(f, tables=None) for k, f in FORMATS.items()})
        return read_battles(*args, **kwargs)


def by_columns(monkeypatch: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> IngestResult:
    """``read_battles`` on the fast path only: the row path would fail."""
    with monkeypatch.context() as patch:
        patch.setattr(formats, "FORMATS", {k: replace(f, chunks=None) for k, f in FORMATS.items()})
        return read_battles(*args, **kwargs)


def assert_same(ours: IngestResult, rows: IngestResult) -> None:
    pd.testing.assert_frame_equal(ours.battles, rows.battles)
    assert (ours.n_read, ours.n_skipped, ours.n_duplicates, ours.n_self_battles) == (
        rows.n_read,
        rows.n_skipped,
        rows.n_duplicates,
        rows.n_self_battles,
    )


@pytest.mark.parametrize("index", range(5), ids=["csv", "jsonl", "arena", "parquet", "csv.gz"])
@pytest.mark.parametrize("block", [arrow_tables.BLOCK_BYTES, 128])
def test_fast_path_gives_the_battles_of_the_row_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, index: int, block: int
) -> None:
    path = _files(tmp_path)[index]
    monkeypatch.setattr(arrow_tables, "BLOCK_BYTES", block)  # many blocks: types met block by block
    ours = by_columns(monkeypatch, path)
    assert_same(ours, by_rows(monkeypatch, path))
    if index in (1, 3):  # JSON types: not re-typed from text
        assert ours.battles["battle_id"].dropna().tolist() == ["17", "18"]


def test_csv_keeps_ids_as_text_and_types_labels_as_pandas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    battles = by_columns(monkeypatch, _files(tmp_path)[0]).battles
    assert battles["battle_id"].tolist() == ["007", "008", "009", "011"]
    assert battles["model_a"].tolist()[2] == "llama, 2"
    dtypes = battles.dtypes.astype(str).to_dict()
    assert {k: dtypes[k] for k in ("turn", "score", "flag", "maybe", "empty")} == {
        "turn": "int64",
        "score": "float64",
        "flag": "bool",
        "maybe": "object",
        "empty": "float64",
    }


def test_several_files_and_formats_are_deduplicated_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _files(tmp_path)
    array = tmp_path / "more.json"  # JSON arrays go by rows
    repeat = {"id": "008", "model_a": "claude-2", "model_b": "gpt-4", "winner": "tie"}
    array.write_text(json.dumps([{**repeat, "tstamp": 1700000001}]))
    seen_ours, seen_rows = {"011"}, {"011"}
    ours = read_battles([*files, array], seen_ids=seen_ours)
    assert_same(ours, by_rows(monkeypatch, [*files, array], seen_ids=seen_rows))
    assert seen_ours == seen_rows and "008" in seen_ours
    assert ours.battles["battle_id"].isin(["011"]).sum() == 0


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("short-row.csv", "model_a,model_b,winner,lang\nx,y,tie\nx,z,tie,en\n"),
        ("spaces.csv", "model_a,model_b,winner,tstamp\nx,y,tie, 12\n"),
        ("same-names.csv", "model_a,model_b,winner,x,x\nx,y,tie,1,2\n"),
        ("nan.jsonl", '{"model_a": "x", "model_b": "y", "winner": "tie", "tstamp": NaN}\n'),
        (
            "mixed.jsonl",
            '{"model_a": "x", "model_b": "y", "winner": "tie", "t": 1}\n'
            '{"model_a": "x", "model_b": "y", "winner": "tie", "t": "one"}\n',
        ),
        ("twice.jsonl", '{"model_a": "x", "model_b": "y", "winner": "tie", "winner": "model_a"}\n'),
        (
            "big-id.jsonl",
            '{"id": 123456789012345678901234, "model_a": "x", "model_b": "y", "winner": "tie"}\n',
        ),
    ],
)
def test_what_the_fast_path_leaves_is_read_by_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert_same(
        read_battles(path, skip_invalid=True), by_rows(monkeypatch, path, skip_invalid=True)
    )


@pytest.mark.parametrize("block", [arrow_tables.BLOCK_BYTES, 128])
def test_csv_text_read_as_missing_is_what_pandas_reads_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    missing = ["", "NA", "null", "#N/A N/A", "-1.#QNAN", "nan", "<NA>", "None", "n/a"]
    near = ["NAN", "na", "Null", "N/A2", "nul", "#", "-", "1", "None ", "0", "u1", "é"]
    rows = []
    for i, value in enumerate(missing + near):
        text = f'"{value}"' if i % 2 else value  # quoted or not
        rows.append(f"{i:03d}{text},m{i % 3},n{i % 3},tie,{text},{text},{text},{i % 2}")
    path = tmp_path / "missing.csv"
    path.write_text("battle_id,model_a,model_b,winner,user_id,prompt,lang,turn\n" + "\n".join(rows))
    monkeypatch.setattr(arrow_tables, "BLOCK_BYTES", block)
    ours = by_columns(monkeypatch, path)
    assert_same(ours, by_rows(monkeypatch, path))
    assert ours.battles["prompt"].isna().sum() == len(missing)
    model = tmp_path / "missing-model.csv"  # a missing model: the row path says which
    model.write_text("model_a,model_b,winner\nx,y,tie\nNA,y,tie\n")
    assert_same(
        read_battles(model, skip_invalid=True), by_rows(monkeypatch, model, skip_invalid=True)
    )


@pytest.mark.parametrize("where", ["header", "prompt", "label"])
def test_csv_that_is_not_utf8_is_named_by_the_row_path(tmp_path: Path, where: str) -> None:
    bad = "\udcff"  # the byte 0xff, written back as itself
    header = "model_a,model_b,winner,prompt,lang" + (bad if where == "header" else "")
    row = f"x,y,tie,hi{bad if where == 'prompt' else ''},en{bad if where == 'label' else ''}"
    path = tmp_path / "latin.csv"
    path.write_bytes(f"{header}\n{row}\n".encode("utf-8", "surrogateescape"))
    with pytest.raises(BattleLogError, match="not UTF-8 text"):
        read_battles(path, skip_invalid=True)


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_missing_text_is_found_in_sliced_chunks(kind: pa.DataType) -> None:
    values = ["x", "NA", "", "NAN", "null", "#N/A", "ok", None]
    column = pa.chunked_array([pa.array(values, kind).slice(1), pa.array(["nan"], kind)])
    found = arrow_tables.missing(column)
    assert found.type == kind
    assert found.to_pylist() == [None, None, "NAN", None, None, "ok", None, None]


def test_an_invalid_record_is_named_by_the_row_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [f"{i},m{i % 3},m{i % 3 + 3},tie,{i}" for i in range(1, 50)] + ["50,x,y,nope,1"]
    path = tmp_path / "a.csv"
    path.write_text("id,model_a,model_b,winner,tstamp\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(arrow_tables, "BLOCK_BYTES", 128)
    with pytest.raises(BattleLogError, match=r"a.csv: row 50: field 'winner': value 'nope'"):
        read_battles(path)
    skipped = read_battles(path, skip_invalid=True)
    assert (skipped.n_read, skipped.n_skipped, len(skipped.battles)) == (50, 1, 49)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "007", "7", "\U0001f916", "x" * 70]))),
    st.sets(st.sampled_from(["a", "7", "zz"])),
)
def test_repeated_ids_are_the_known_and_the_earlier_ones(
    ids: list[str | None], known: set[str]
) -> None:
    series = pd.Series(ids, dtype="string")
    expected = series.notna() & (series.duplicated() | series.isin(known))
    np.testing.assert_array_equal(repeated_ids(series, known), expected.to_numpy(dtype=bool))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text("ab\u00e9", min_size=3, max_size=3))))
def test_repeated_ids_of_one_length_are_hashed_exactly(ids: list[str | None]) -> None:
    series = pd.Series(ids, dtype="string")
    expected = series.notna() & series.duplicated()
    np.testing.assert_array_equal(repeated_ids(series), expected.to_numpy(dtype=bool))


@pytest.mark.parametrize("width", [3, 8, 16])
def test_repeated_ids_in_chunks_are_hashed_a_slice_at_a_time(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setattr(duplicate_ids, "_ROWS_HASHED", 3)
    ids = [f"{i % 7:0{width}d}" for i in range(40)]
    chunks = pa.chunked_array([ids[:11], ids[11:11], ids[11:]], pa.large_string())
    series = pd.Series(pd.arrays.ArrowStringArray(chunks))
    np.testing.assert_array_equal(repeated_ids(series), pd.Series(ids).duplicated().to_numpy())


def test_a_collision_of_hashes_drops_no_battle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duplicate_ids, "_MIX", np.uint64(0))  # every id hashes to 0
    series = pd.Series(["aa", "bb", "aa", "cc", "bb"], dtype="string")
    assert repeated_ids(series).tolist() == [False, False, True, False, True]


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("block", [8, 64, 1 << 20])
def test_line_blocks_are_whole_lines_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packed: bool, block: int
) -> None:
    monkeypatch.setattr(arrow_tables, "BLOCK_BYTES", block)
    lines = [b"x" * n for n in (3, 100, 0, 7, 8, 9, 300, 1)]
    data = b"\n".join(lines) + b"\nlast line without newline"
    path = tmp_path / "a.txt"
    path.write_bytes(data)
    with pa.OSFile(str(path)) as raw:
        stream = gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data))) if packed else raw
        blocks = [b.to_pybytes() for b in arrow_tables._line_blocks(stream)]
    assert b"".join(blocks) == data
    assert all(b.endswith(b"\n") for b in blocks[:-1])
