"""Tests for ranking.io.column_map: logs in their own shape, on both reading paths, and
id columns that are not battle ids (issue 30, item 2)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ranking.io import formats
from ranking.io.chunks import BattleLogError, ColumnMapError, NotABattleIdError
from ranking.io.column_map import DEFAULT_MAP, PRESETS, ColumnMap, MissingColumn
from ranking.io.formats import FORMATS
from ranking.io.ingest import IngestResult, read_battles, read_frame
from ranking.io.prompt_texts import PromptTexts, read_prompt_texts

LLMFAO = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "llmfao"
SHAPE = ColumnMap(
    {"model_a": "left", "model_b": "right", "user_id": "worker", "battle_id": None},
    {"left": "model_a", "right": "model_b", "tie": "tie"},
)
#: LLMFAO's shape: `id` names a pair of models, shared by the workers who judged it.
CROWD = (
    "id,prompt,model_x,model_y,worker,winner,left,right\n"
    "0,8,97,98,58,tie,Airoboros,Weaver\n"
    "0,8,97,98,83,left,Airoboros,Weaver\n"
    "1,5,12,97,58,right,Claude,Airoboros\n"
    "1,5,12,97,14,right,Claude,Airoboros\n"
    "2,8,12,98,7,left,Claude,Weaver\n"
)
PROMPTS = [{"id": 8, "text": "A haiku on kubernetes."}, {"id": 5, "text": "Explain QFT."}]
#: MT-bench human judgments' shape: `question_id` names the question.
MT_BENCH = (
    "question_id,model_a,model_b,winner,judge,turn\n"
    "81,gpt-4,llama-13b,model_a,author_0,1\n"
    "81,gpt-4,claude-v1,tie,author_0,1\n"
    "81,gpt-4,llama-13b,model_b,author_1,1\n"
    "82,claude-v1,llama-13b,model_a,author_2,1\n"
    "82,claude-v1,llama-13b,model_a,author_2,2\n"
)


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


def _crowd(folder: Path, suffix: str) -> Path:
    path = folder / f"crowd{suffix}"
    if suffix == ".csv":
        path.write_text(CROWD)
    else:
        rows = pd.read_csv(io.StringIO(CROWD)).to_dict("records")
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- the map itself ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("columns", "winners", "words"),
    [
        ({"left": "a"}, {}, "names no field 'left'"),
        ({"model_a": None}, {}, "must name a column for 'model_a'"),
        ({"model_a": "x", "model_b": "x"}, {}, "maps column 'x' to two fields"),
        ({"model_a": ""}, {}, "not a column"),
        ({}, {"left": "a"}, "maps 'left' to 'a', not one of model_a"),
    ],
)
def test_a_map_that_cannot_work_is_refused(
    columns: dict[str, Any], winners: dict[str, str], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        ColumnMap(columns, winners)


def test_the_default_plan_is_section_1_with_its_aliases() -> None:
    plan = DEFAULT_MAP.plan(["id", "question_id", "judge", "model_a", "model_b", "winner"])
    assert plan.renames == {
        "id": "battle_id",
        "judge": "user_id",
        "model_a": "model_a",
        "model_b": "model_b",
        "winner": "winner",
    }
    assert (plan.dropped, plan.battle_id, plan.prompt_from_conversation) == ((), "id", True)


def test_a_plan_maps_drops_and_leaves_aliases_as_labels() -> None:
    names = ["battle_id", "id", "left", "right", "winner", "model_a", "model_b", "worker"]
    plan = SHAPE.plan(names)
    assert plan.renames == {
        "left": "model_a",
        "right": "model_b",
        "winner": "winner",
        "worker": "user_id",
    }
    # named as fields the map takes elsewhere, or not at all: left out; `id` stays a label
    assert plan.dropped == ("battle_id", "model_a", "model_b") and plan.battle_id is None
    swapped = ColumnMap({"model_a": "model_b", "model_b": "model_a"}).plan(names)
    assert swapped.renames["model_b"] == "model_a" and swapped.renames["model_a"] == "model_b"
    with pytest.raises(MissingColumn, match="no column 'left' for model_a"):
        SHAPE.plan(["model_a", "model_b", "winner"])


def test_presets_are_column_maps() -> None:
    assert PRESETS["llmfao"] == SHAPE
    assert PRESETS["mt-bench"].columns == {"battle_id": None}


# -- reading a log in its own shape --------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_both_paths_read_a_mapped_log_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = _crowd(tmp_path, suffix)
    ours = by_columns(monkeypatch, path, columns=SHAPE)
    rows = by_rows(monkeypatch, path, columns=SHAPE)
    pd.testing.assert_frame_equal(ours.battles, rows.battles)
    battles = ours.battles
    assert (ours.n_read, ours.n_duplicates, len(battles)) == (5, 0, 5)
    assert battles["winner"].tolist() == ["tie", "model_a", "model_b", "model_b", "model_a"]
    assert battles["model_a"].tolist()[:3] == ["Airoboros", "Airoboros", "Claude"]
    assert battles["user_id"].tolist() == ["58", "83", "58", "14", "7"]
    assert battles["battle_id"].isna().all() and battles["prompt"].tolist()[:2] == ["8", "8"]
    assert {"id", "model_x", "model_y"} <= set(battles.columns)  # labels, as read


def test_read_frame_takes_a_map(tmp_path: Path) -> None:
    raw = pd.read_csv(_crowd(tmp_path, ".csv"), dtype=str)
    result = read_frame(raw, "crowd", columns=SHAPE)
    assert len(result.battles) == 5 and result.battles["winner"].iloc[1] == "model_a"


@pytest.mark.parametrize("rows_only", [True, False])
def test_a_winner_value_outside_the_map_names_row_field_value_and_the_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows_only: bool
) -> None:
    path = tmp_path / "crowd.csv"
    path.write_text(CROWD.replace("2,8,12,98,7,left", "2,8,12,98,7,model_a"))
    with pytest.raises(BattleLogError) as caught:  # the fast path leaves it to the row path
        if rows_only:
            by_rows(monkeypatch, path, columns=SHAPE)
        else:
            read_battles(path, columns=SHAPE)
    assert str(caught.value) == (
        f"{path}: row 5: field 'winner': value 'model_a' is not one of the winner values "
        "mapped: 'left', 'right', 'tie'"
    )
    skipped = read_battles(path, columns=SHAPE, skip_invalid=True)
    assert len(skipped.battles) == 4 and skipped.n_skipped == 1


def test_a_mapped_column_the_log_lacks_is_named(tmp_path: Path) -> None:
    path = _crowd(tmp_path, ".csv")
    with pytest.raises(ColumnMapError) as caught:
        read_battles(path, columns=ColumnMap({"model_a": "lft", "model_b": "right"}))
    assert str(caught.value).startswith(f"{path}: no column 'lft' for model_a (columns found: id,")
    assert (caught.value.field, caught.value.column) == ("model_a", "lft")


def test_without_a_map_the_missing_fields_are_named_with_the_columns_as_read(
    tmp_path: Path,
) -> None:
    with pytest.raises(BattleLogError, match=r"\(columns found: id, prompt, model_x"):
        read_battles(_crowd(tmp_path, ".csv"))


# -- battle ids that are not ---------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_an_id_repeating_with_other_votes_is_refused_naming_column_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = tmp_path / f"judgments{suffix}"
    if suffix == ".csv":
        path.write_text(MT_BENCH)
    else:
        rows = pd.read_csv(io.StringIO(MT_BENCH)).to_dict("records")
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    expected = (
        f"{path}: column 'question_id' is not a battle id: 2 of 5 rows repeat an id with a "
        "different vote"
    )
    for read in (by_rows, by_columns):
        with pytest.raises(NotABattleIdError) as caught:
            read(monkeypatch, path)
        assert str(caught.value) == expected
    for columns in (ColumnMap({"battle_id": None}), PRESETS["mt-bench"]):
        kept = read_battles(path, columns=columns)
        assert (len(kept.battles), kept.n_duplicates) == (5, 0)
        assert kept.battles["battle_id"].isna().all()
        question = kept.battles["question_id"].astype(str)  # a label (text in CSV)
        assert question.tolist() == ["81", "81", "81", "82", "82"]


def test_exact_repeats_are_still_skipped_and_other_labels_do_not_matter(tmp_path: Path) -> None:
    path = tmp_path / "repeats.csv"
    path.write_text(
        "battle_id,model_a,model_b,winner,user_id,lang\n"
        "b1,x,y,tie,u1,en\nb2,x,y,model_a,u1,en\nb1,x,y,tie,u1,de\nb1,x,y,tie,u1,fr\n"
    )
    result = read_battles(path)
    assert (len(result.battles), result.n_duplicates) == (2, 2)
    assert result.battles["lang"].tolist() == ["en", "en"]  # the first one is kept


def test_a_named_battle_id_column_is_checked_too(tmp_path: Path) -> None:
    path = tmp_path / "judgments.csv"
    path.write_text(MT_BENCH.replace("question_id,", "qid,"))
    assert len(read_battles(path).battles) == 5  # `qid` is no alias: no id, nothing dropped
    with pytest.raises(NotABattleIdError, match="column 'qid' is not a battle id: 2 of 5"):
        read_battles(path, columns=ColumnMap({"battle_id": "qid"}))


def test_known_ids_are_duplicates_whatever_their_vote(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("id,model_a,model_b,winner\n1,x,y,tie\n2,x,y,tie\n")
    result = read_battles(path, seen_ids={"1"})
    assert (len(result.battles), result.n_duplicates) == (1, 1)


# -- prompt texts joined by id -----------------------------------------------------------------


def _prompts(folder: Path) -> PromptTexts:
    path = folder / "prompts.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PROMPTS))
    return read_prompt_texts(path)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_prompt_ids_are_joined_to_their_texts(tmp_path: Path, suffix: str) -> None:
    path = _crowd(tmp_path, suffix)
    battles = read_battles(path, columns=SHAPE, prompts=_prompts(tmp_path)).battles
    assert battles["prompt"].tolist() == [
        *["A haiku on kubernetes."] * 2,
        *["Explain QFT."] * 2,
        "A haiku on kubernetes.",
    ]


def test_a_prompt_id_without_a_text_is_named_or_skipped(tmp_path: Path) -> None:
    path = tmp_path / "crowd.csv"
    path.write_text(CROWD.replace("2,8,12,98,7", "2,99,12,98,7"))
    prompts = _prompts(tmp_path)
    with pytest.raises(BattleLogError) as caught:
        read_battles(path, columns=SHAPE, prompts=prompts)
    assert (
        str(caught.value)
        == f"{path}: prompt id '99' of 1 votes is not in prompts.jsonl (2 ids there)"
    )
    skipped = read_battles(path, columns=SHAPE, prompts=prompts, skip_invalid=True)
    assert len(skipped.battles) == 4
    assert skipped.skipped_reasons == {"field 'prompt': id not in prompts.jsonl": 1}


# -- the real thing ------------------------------------------------------------------------------


@pytest.mark.skipif(not LLMFAO.is_dir(), reason="../shared/data/llmfao is not here")
def test_llmfao_keeps_every_vote_with_its_voters_models_and_prompt_texts() -> None:
    log = LLMFAO / "crowd-comparisons.csv"
    with pytest.raises(NotABattleIdError, match="column 'id' is not a battle id: 6,792 of 8,931"):
        ids = ColumnMap(dict(SHAPE.columns) | {"battle_id": "id"}, SHAPE.winner_values)
        read_battles(log, columns=ids)
    prompts = read_prompt_texts(LLMFAO / "prompts.jsonl")
    result = read_battles(log, columns=PRESETS["llmfao"], prompts=prompts)
    battles = result.battles
    assert (len(battles), result.n_duplicates, result.n_skipped) == (8931, 0, 0)
    assert battles["user_id"].nunique() == 124
    assert len(set(battles["model_a"]) | set(battles["model_b"])) == 59
    assert battles["prompt"].nunique() == 13 and battles["prompt"].notna().all()
    assert battles["prompt"].str.contains("kubernetes").any()
    assert battles["winner"].value_counts().to_dict() == {
        "tie": 3471,
        "model_a": 2911,
        "model_b": 2549,
        "tie (bothbad)": 0,
        "both_bad": 0,
    }
