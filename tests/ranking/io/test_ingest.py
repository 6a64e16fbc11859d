"""Tests for ranking.io.ingest: formats, error reports, skipping, de-duplication, chunking."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ranking.io.battle_frame import WINNERS
from ranking.io.chunks import BattleLogError, NotABattleIdError
from ranking.io.column_map import BATTLE_COLUMNS
from ranking.io.formats import SUFFIXES
from ranking.io.ingest import IngestResult, read_battles, read_frame
from tests.conftest import RecordedProgress

DATA = Path(__file__).parents[2] / "data" / "ingest"
WINNER_ERROR = "is not one of model_a, model_b, tie, tie (bothbad), both_bad"
HEADER = "id,model_a,model_b,winner,tstamp\n"
GOOD = '{"model_a": "x", "model_b": "y", "winner": "tie"}'

EXPECTED = pd.DataFrame(
    {
        "battle_id": ["b001", "b002", "b003", "b004", "b005"],
        "model_a": ["gpt-4", "claude-2", "gpt-4", "llama-2-70b", "claude-2"],
        "model_b": ["claude-2", "llama-2-70b", "llama-2-70b", "gpt-4", "gpt-4"],
        "winner": ["model_a", "model_b", "tie", "tie (bothbad)", "both_bad"],
        "user_id": ["user1", "user2", "user1", "user3", "user2"],
        "prompt": [
            "How do I sort a list in Python?",
            "Write a haiku about autumn.",
            "What is 17 * 23?",
            "Explain quantum entanglement simply.",
            "Summarise Hamlet, in one sentence.",
        ],
        "tstamp": [1700000000.5, 1700000060, 1700000120, 1700000180, 1700000240],
        "language": ["English", "German", "English", "English", "French"],
    }
)


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, gzip-compressed when the name ends in ``.gz``."""
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def gzipped(source: Path, directory: Path) -> Path:
    target = directory / (source.name + ".gz")
    target.write_bytes(gzip.compress(source.read_bytes()))
    return target


def as_parquet(directory: Path) -> Path:
    target = directory / "battles.parquet"
    pq.write_table(pa.Table.from_pandas(EXPECTED, preserve_index=False), target)
    return target


@pytest.fixture(params=["csv", "jsonl", "json", "parquet", "csv.gz", "jsonl.gz", "json.gz"])
def sample(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The five sample battles in each format."""
    kind: str = request.param
    base = kind.removesuffix(".gz")
    source = {
        "csv": DATA / "battles.csv",
        "jsonl": DATA / "battles.jsonl",
        "json": DATA / "clean_battle_sample.json",
    }.get(base) or as_parquet(tmp_path)
    return gzipped(source, tmp_path) if kind.endswith(".gz") else source


def core(frame: pd.DataFrame) -> pd.DataFrame:
    """The battle columns and ``language`` as plain objects, for comparison."""
    out = frame[[*BATTLE_COLUMNS, "language"]].astype(object)
    return out.astype({"tstamp": float})


def test_every_format_gives_the_same_battles(sample: Path) -> None:
    result = read_battles(sample)
    assert isinstance(result, IngestResult)
    assert (result.n_read, result.n_skipped, result.n_duplicates) == (5, 0, 0)
    pd.testing.assert_frame_equal(core(result.battles), core(EXPECTED))


def test_frame_is_typed_and_ordered() -> None:
    battles = read_battles(DATA / "battles.csv").battles
    assert list(battles.columns) == [*BATTLE_COLUMNS, "language"]
    assert isinstance(battles.index, pd.RangeIndex)
    for column in ("battle_id", "user_id", "prompt"):
        assert battles[column].dtype == "string"
    assert battles["tstamp"].dtype == "float64"
    assert list(battles["winner"].cat.categories) == list(WINNERS)
    models = ["claude-2", "gpt-4", "llama-2-70b"]
    assert list(battles["model_a"].cat.categories) == models
    assert list(battles["model_b"].cat.categories) == models


def test_fastchat_json_flattens_labels_and_drops_conversations() -> None:
    battles = read_battles(DATA / "clean_battle_sample.json").battles
    assert "conversation_a" not in battles and "conversation_b" not in battles
    assert battles["category_tag.math_v0.math"].tolist() == [True, False, True, False, False]
    assert "conv_metadata.sum_user_tokens" in battles
    assert battles["anony"].all() and battles["turn"].eq(1).all()
    assert battles["prompt"][0] == "How do I sort a list in Python?"  # skips the system turn


def test_optional_columns_are_always_present(tmp_path: Path) -> None:
    path = write(tmp_path / "min.csv", "model_a,model_b,winner\nx,y,tie\n")
    battles = read_battles(path).battles
    assert list(battles.columns) == list(BATTLE_COLUMNS)
    assert battles["battle_id"].isna().all() and battles["battle_id"].dtype == "string"
    assert battles["tstamp"].isna().all()


def test_parquet_structs_are_flattened_and_lists_dropped(tmp_path: Path) -> None:
    table = pa.table(
        {
            "model_a": ["x"],
            "model_b": ["y"],
            "winner": ["model_b"],
            "category_tag": [{"math_v0": {"math": True}}],
            "conversation_a": [[{"role": "user", "content": "hi"}]],
        }
    )
    pq.write_table(table, tmp_path / "nested.parquet")
    battles = read_battles(tmp_path / "nested.parquet").battles
    assert battles["category_tag.math_v0.math"].tolist() == [True]
    assert battles["prompt"].tolist() == ["hi"]
    assert "conversation_a" not in battles


def test_error_message_names_file_row_field_and_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "battles.csv", HEADER + "1,x,y,tie,\n2,x,y,foo,\n")
    with pytest.raises(BattleLogError) as info:
        read_battles("battles.csv")
    error = info.value
    assert str(error) == f"battles.csv: row 2: field 'winner': value 'foo' {WINNER_ERROR}"
    assert (error.file, error.row, error.field, error.value) == ("battles.csv", 2, "winner", "foo")
    assert error.reason == WINNER_ERROR
    assert isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("name", "text", "row", "field", "message"),
    [
        ("a.csv", "model_a,model_b\nx,y\n", None, "winner", "missing required column 'winner'"),
        ("a.csv", HEADER + "1,x,y,tie,\n2, ,y,tie,\n", 2, "model_a", "value ' ' is empty"),
        ("a.csv", HEADER + "1,x,y,tie,yesterday\n", 1, "tstamp", "'yesterday' is not a finite"),
        ("a.csv", HEADER + "1,x,,tie,\n", 1, "model_b", "field 'model_b': value is missing"),
        ("a.jsonl", GOOD + '\n{"model_a": ', 2, None, "row 2: malformed JSON (Expecting value"),
        ("a.jsonl", GOOD.replace('"tie"', "null"), 1, "winner", "winner': value is missing"),
        ("a.jsonl", GOOD.replace('"y"', "7"), 1, "model_b", "value 7 is not a string"),
        ("a.json", f"[{GOOD}, 3]", 2, None, "row 2: record is not a JSON object"),
        ("a.json", '{"model_a": "x"}', None, None, "expected a JSON array"),
        ("a.json", '[{"model_a": "x",]', None, None, "malformed JSON (Expecting"),
        ("a.csv", "", None, None, "file is empty (no header)"),
        ("a.jsonl", "\n\n", None, None, "file is empty"),
        ("a.txt", "model_a,model_b,winner\n", None, None, "accepted suffixes are .csv, .json"),
    ],
)
def test_bad_input_is_reported(
    tmp_path: Path, name: str, text: str, row: int | None, field: str | None, message: str
) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(BattleLogError) as info:
        read_battles(path)
    assert (info.value.row, info.value.field) == (row, field)
    assert message in str(info.value)
    assert str(info.value).startswith(str(path) + ": ")
    assert "\n" not in str(info.value)


def test_suffixes_cover_every_format_with_and_without_gzip() -> None:
    assert set(SUFFIXES) == {
        f"{s}{z}" for s in (".csv", ".json", ".jsonl", ".parquet") for z in ("", ".gz")
    }


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(BattleLogError, match="file not found") as info:
        read_battles(tmp_path / "nope.csv")
    assert info.value.row is None
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(BattleLogError, match="is a directory"):
        read_battles(tmp_path / "dir.csv")


@pytest.mark.parametrize("suffix", [".csv.gz", ".jsonl.gz", ".json.gz", ".parquet.gz"])
def test_truncated_gzip_is_a_whole_file_error(tmp_path: Path, suffix: str) -> None:
    source = {".csv.gz": DATA / "battles.csv", ".jsonl.gz": DATA / "battles.jsonl"}.get(
        suffix, DATA / "clean_battle_sample.json"
    )
    if suffix == ".parquet.gz":
        source = as_parquet(tmp_path)
    data = gzip.compress(source.read_bytes() * 50)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(BattleLogError, match="corrupt or truncated gzip file") as info:
        read_battles(path, skip_invalid=True)
    assert info.value.row is None


def test_not_parquet_and_malformed_csv(tmp_path: Path) -> None:
    with pytest.raises(BattleLogError, match="not a valid Parquet file"):
        read_battles(write(tmp_path / "a.parquet", "model_a,model_b,winner\n"))
    with pytest.raises(BattleLogError, match="malformed CSV"):
        read_battles(write(tmp_path / "b.csv", 'model_a,model_b,winner\nx,"y,tie\n'))


def test_self_battles_are_dropped_and_counted(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", HEADER + "1,x,x,tie,\n2,x,y,tie,\n")
    result = read_battles(path)
    assert result.battles["battle_id"].tolist() == ["2"]
    assert (result.n_self_battles, result.n_skipped) == (1, 0)


def test_skip_invalid_counts_reasons(tmp_path: Path) -> None:
    rows = "1,x,y,tie,\n2,x,y,foo,\n3,x,y,bar,\n4,x,x,tie,\n5,x,y,tie,soon\n6,,y,tie,\n"
    path = write(tmp_path / "a.csv", HEADER + rows)
    result = read_battles(path, skip_invalid=True)
    assert result.battles["battle_id"].tolist() == ["1"]
    assert (result.n_read, result.n_skipped, result.n_duplicates) == (6, 4, 0)
    assert result.n_self_battles == 1  # valid, but says nothing: dropped and counted
    assert result.skipped_reasons == {
        f"field 'winner': value {WINNER_ERROR}": 2,
        "field 'tstamp': value is not a finite number (unix seconds)": 1,
        "field 'model_a': value is missing": 1,
    }


def test_skip_invalid_skips_malformed_json_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl.gz", "\n".join([GOOD, "{oops", "[1]", GOOD]) + "\n")
    result = read_battles(path, skip_invalid=True)
    assert len(result.battles) == 2 and result.n_read == 4
    assert result.skipped_reasons == {"malformed JSON": 1, "record is not a JSON object": 1}


def test_duplicates_within_and_across_files(tmp_path: Path) -> None:
    first = write(tmp_path / "a.csv", HEADER + "1,x,y,tie,\n2,x,y,tie,\n1,x,y,tie,\n")
    second = write(tmp_path / "b.jsonl", GOOD.replace("{", '{"id": "2", ') + "\n" + GOOD)
    no_ids = write(tmp_path / "c.csv", "model_a,model_b,winner\nx,y,tie\nx,y,tie\n")
    result = read_battles([first, second, no_ids])
    assert result.n_read == 7 and result.n_duplicates == 2
    assert result.battles["battle_id"].tolist()[:2] == ["1", "2"]
    assert result.battles["battle_id"].isna().sum() == 3  # rows without id are all kept


def test_an_id_repeated_with_another_vote_is_not_a_battle_id(tmp_path: Path) -> None:
    first = write(tmp_path / "a.csv", HEADER + "1,x,y,tie,\n2,x,y,tie,\n")
    second = write(
        tmp_path / "b.jsonl", GOOD.replace("{", '{"id": "1", ').replace("tie", "model_a")
    )
    with pytest.raises(NotABattleIdError) as caught:
        read_battles([first, second])
    assert str(caught.value) == (
        f"{second}: column 'id' is not a battle id: 1 of 3 rows repeat an id with a different vote"
    )
    assert (caught.value.column, caught.value.n_differing, caught.value.n_rows) == ("id", 1, 3)


def test_seen_ids_are_used_and_extended_only_on_success(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", HEADER + "1,x,y,tie,\n2,x,y,tie,\n")
    seen = {"1"}
    result = read_battles(path, seen_ids=seen)
    assert result.n_duplicates == 1 and seen == {"1", "2"}
    bad = write(tmp_path / "b.csv", HEADER + "3,x,y,tie,\n4,x,y,foo,\n")
    with pytest.raises(BattleLogError):
        read_battles(bad, seen_ids=seen)
    assert seen == {"1", "2"}


def test_chunks_keep_row_numbers_and_union_categories(tmp_path: Path) -> None:
    rows = [f"{i},m{i % 3},m{i % 3 + 3},tie,{i}" for i in range(1, 8)]
    path = write(tmp_path / "a.csv", HEADER + "\n".join(rows) + "\n")
    whole = read_battles(path).battles
    chunked = read_battles(path, chunksize=2).battles
    pd.testing.assert_frame_equal(whole, chunked)
    assert chunked["model_a"].dtype == "category"
    assert list(chunked["model_a"].cat.categories) == [f"m{i}" for i in range(6)]
    bad = write(tmp_path / "b.jsonl", "\n".join([GOOD] * 4 + ['{"model_a": "x"}']))
    with pytest.raises(BattleLogError, match="row 5: field 'model_b'"):
        read_battles(bad, chunksize=2)


def test_header_only_and_empty_array_give_empty_frames(tmp_path: Path) -> None:
    header_only = read_battles(write(tmp_path / "a.csv", HEADER)).battles
    assert len(header_only) == 0 and list(header_only.columns) == list(BATTLE_COLUMNS)
    assert list(header_only["winner"].cat.categories) == list(WINNERS)
    assert len(read_battles(write(tmp_path / "b.json", "[]")).battles) == 0


def test_progress_is_one_stage_a_file_in_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packed = tmp_path / "battles.csv.gz"
    packed.write_bytes(gzip.compress((DATA / "battles.csv").read_bytes()))
    progress = RecordedProgress()
    result = read_battles([DATA / "battles.csv", packed], chunksize=2, progress=progress)
    assert [(s.name, s.total, s.unit) for s in progress.stages] == [
        ("reading battles.csv", (DATA / "battles.csv").stat().st_size, "B"),
        ("reading battles.csv.gz", packed.stat().st_size, "B"),  # as stored, compressed
    ]
    progress.assert_complete()
    assert result.n_read == 2 * read_battles(DATA / "battles.csv").n_read
    assert capsys.readouterr() == ("", "")  # the maths prints nothing itself


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="'paths'"):
        read_battles([])
    with pytest.raises(ValueError, match="'chunksize'"):
        read_battles(DATA / "battles.csv", chunksize=0)


def test_ids_that_look_numeric_stay_text(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", "id,model_a,model_b,winner\n007,x,y,tie\n")
    assert read_battles(path).battles["battle_id"].tolist() == ["007"]
    records = [{"question_id": 17, "model_a": "x", "model_b": "y", "winner": "tie"}]
    write(tmp_path / "b.json", json.dumps(records))
    assert read_battles(tmp_path / "b.json").battles["battle_id"].tolist() == ["17"]


def test_real_arena_log(arena_path: Path) -> None:
    result = read_battles(arena_path)
    battles = result.battles
    assert result.n_read == 135_634
    # The log holds 10 votes of a model against itself: dropped and counted, not errors.
    assert result.n_self_battles == 10 and result.n_skipped == 0
    assert len(battles) == 135_634 - 10
    models = set(battles["model_a"].astype(str)) | set(battles["model_b"].astype(str))
    assert len(models) == 53
    assert battles["battle_id"].is_unique and "math" in battles


def test_read_frame_validates_records_already_read() -> None:
    # A partition of a Parquet dataset read by dask.dataframe: read as a file's chunk is.
    raw = EXPECTED.rename(columns={"user_id": "judge"}).copy()
    result = read_frame(raw, "part 3")
    pd.testing.assert_frame_equal(core(result.battles), core(EXPECTED))
    raw.loc[3, "winner"] = "nobody"
    with pytest.raises(BattleLogError, match=r"^part 3: row 13: field 'winner'"):
        read_frame(raw, "part 3", first_row=10)
    skipped = read_frame(pd.concat([raw, raw.iloc[:1]]), "part 3", skip_invalid=True)
    assert (skipped.n_read, skipped.n_skipped, skipped.n_duplicates) == (6, 1, 1)
    assert len(skipped.battles) == 4
