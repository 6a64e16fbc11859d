"""Tests for ranking.io.records: flattening records, aliases, the prompt, marked values."""

from __future__ import annotations

import pandas as pd

from ranking.io.records import InvalidText, Whole, frame_from_records, normalise_columns


def test_nested_records_are_flattened_but_one_value_fields_stay_whole() -> None:
    records = [
        {"model_a": {"name": "x"}, "model_b": "y", "category_tag": {"math_v0": {"math": True}}},
        {"model_a": "x", "model_b": "y", "category_tag": {"math_v0": {"math": False}}},
    ]
    frame = frame_from_records(records)
    assert frame["category_tag.math_v0.math"].tolist() == [True, False]
    assert isinstance(frame["model_a"][0], Whole) and frame["model_a"][1] == "x"
    assert repr(frame["model_a"][0]) == "{'name': 'x'}"


def test_lone_surrogates_are_marked_in_values_and_field_names() -> None:
    frame = frame_from_records([{"model_a": "bad \ud800", "model_b": "y", "n\udc00": 1}])
    assert isinstance(frame["model_a"][0], InvalidText)
    names = [v for c in frame.columns for v in frame[c] if isinstance(v, InvalidText) and v.name]
    assert [v.value for v in names] == ["n\udc00"]


def test_aliases_are_used_only_when_the_canonical_column_is_absent() -> None:
    frame = pd.DataFrame(
        {"id": ["1"], "question_id": ["q"], "judge": ["u"], "question": ["p"], "user_id": ["v"]}
    )
    out = normalise_columns(frame)
    assert out["battle_id"].tolist() == ["1"] and out["question_id"].tolist() == ["q"]
    assert out["user_id"].tolist() == ["v"] and out["judge"].tolist() == ["u"]
    assert out["prompt"].tolist() == ["p"]
    assert list(frame.columns) == ["id", "question_id", "judge", "question", "user_id"]


def test_prompt_comes_from_the_first_user_turn() -> None:
    conversations = [
        [{"role": "system", "content": "s"}, {"role": "user", "content": "first"}],
        [{"role": "user", "content": ["multimodal", ["image"]]}],
        [{"role": "assistant", "content": "no user"}],
        None,
    ]
    frame = pd.DataFrame({"conversation_a": conversations, "conversation_b": conversations})
    out = normalise_columns(frame)
    assert list(out.columns) == ["prompt"]
    assert out["prompt"].tolist()[:2] == ["first", "multimodal"]
    assert out["prompt"].isna().tolist() == [False, False, True, True]
