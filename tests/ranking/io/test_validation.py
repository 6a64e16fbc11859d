"""Tests for ranking.io.validation: row checks, typing, de-duplication."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.io.battle_frame import REQUIRED_COLUMNS, WINNERS, drop_duplicate_ids, to_battle_frame
from ranking.io.column_map import ALIASES, BATTLE_COLUMNS
from ranking.io.records import normalise_columns
from ranking.io.validation import RowError, battles_from_records, validate_battles
from ranking.types import WINNER_OUTCOME

WINNER_ERROR = "is not one of model_a, model_b, tie, tie (bothbad), both_bad"


def battle(**fields: Any) -> dict[str, Any]:
    return {"model_a": "x", "model_b": "y", "winner": "tie", **fields}


def test_constants() -> None:
    assert BATTLE_COLUMNS[:4] == ("battle_id", "model_a", "model_b", "winner")
    assert REQUIRED_COLUMNS == ("model_a", "model_b", "winner")
    assert WINNERS == tuple(WINNER_OUTCOME)
    assert ALIASES["battle_id"] == ("id", "question_id") and ALIASES["user_id"] == ("judge",)


def test_each_check_reports_the_first_problem_of_a_row() -> None:
    frame = pd.DataFrame(
        {
            "model_a": ["a", None, "", "a", "a", "a", 5, "a"],
            "model_b": ["b", "b", "b", "a", "b", "b", "b", None],
            "winner": ["tie", "tie", "tie", "tie", "foo", None, "tie", "nonsense"],
            "tstamp": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        },
        index=range(10, 18),  # positions, not labels, are reported
    )
    errors = validate_battles(frame)
    assert [(e.index, e.field, e.value, e.reason) for e in errors] == [
        (1, "model_a", None, "is missing"),
        (2, "model_a", "", "is empty"),
        (3, "model_b", "a", "is the same model as model_a"),
        (4, "winner", "foo", WINNER_ERROR),
        (5, "winner", None, "is missing"),
        (6, "model_a", 5, "is not a string"),
        (7, "model_b", None, "is missing"),
    ]


def test_tstamp_must_be_a_finite_number_when_present() -> None:
    frame = pd.DataFrame(
        {
            "model_a": ["a"] * 6,
            "model_b": ["b"] * 6,
            "winner": ["tie"] * 6,
            "tstamp": [1.5, None, "17", "soon", float("inf"), True],
        }
    )
    errors = validate_battles(frame)
    assert [(e.index, e.value) for e in errors] == [(3, "soon"), (4, np.inf), (5, True)]


def test_missing_required_column_counts_as_missing_everywhere() -> None:
    errors = validate_battles(pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "c"]}))
    assert [(e.index, e.field, e.reason) for e in errors] == [
        (0, "winner", "is missing"),
        (1, "winner", "is missing"),
    ]


def test_messages() -> None:
    error = RowError(3, "winner", "foo", WINNER_ERROR)
    assert error.message == f"field 'winner': value 'foo' {WINNER_ERROR}"
    assert error.summary == f"field 'winner': value {WINNER_ERROR}"
    assert error.to_dict() == {"index": 3, "error": error.message}
    assert RowError(0, "model_a", None, "is missing").message == "field 'model_a': value is missing"
    broken = RowError(0, None, None, "malformed JSON", "Expecting value at column 3")
    assert broken.message == "malformed JSON (Expecting value at column 3)"
    assert broken.summary == "malformed JSON"
    assert len(RowError(0, "prompt", "x" * 500, "is odd").message) < 100


def test_to_battle_frame_types_and_orders_columns() -> None:
    frame = pd.DataFrame(
        {
            "lang": ["en", "de"],
            "model_b": ["b", "c"],
            "model_a": ["z", "b"],
            "winner": ["model_a", "tie"],
            "battle_id": [17.0, np.nan],
            "prompt": ["", "hi"],
        },
        index=[5, 9],
    )
    out = to_battle_frame(frame)
    assert list(out.columns) == [*BATTLE_COLUMNS, "lang"]
    assert isinstance(out.index, pd.RangeIndex)
    assert out["battle_id"].tolist() == ["17", pd.NA]
    assert out["prompt"].tolist() == [pd.NA, "hi"]  # empty text counts as absent
    assert list(out["model_a"].cat.categories) == ["b", "c", "z"]
    assert out["model_a"].dtype == out["model_b"].dtype
    assert list(out["winner"].cat.categories) == list(WINNERS)
    assert out["tstamp"].dtype == "float64" and out["tstamp"].isna().all()


def test_drop_duplicate_ids() -> None:
    frame = to_battle_frame(
        pd.DataFrame([battle(battle_id=i) for i in ["1", "2", "1", None, None]])
    )
    seen = {"9"}
    kept, n = drop_duplicate_ids(frame, seen, known=frozenset({"2"}))
    assert n == 2
    assert kept["battle_id"].tolist() == ["1", pd.NA, pd.NA]
    assert seen == {"9", "1"}


def test_battles_from_records_for_a_rest_body() -> None:
    records: list[Any] = [
        battle(id="a", judge="u1", question="q1"),
        battle(winner="foo"),
        "not a dict",
        battle(id="stored"),
        battle(id="a"),
        battle(id="b", tstamp=1.7e9, category_tag={"math_v0": {"math": True}}),
    ]
    seen = {"stored"}
    battles, errors, n_duplicates = battles_from_records(records, seen_ids=seen)
    assert battles["battle_id"].tolist() == ["a", "b"]
    assert battles["user_id"].tolist() == ["u1", pd.NA]
    assert battles["category_tag.math_v0.math"].tolist() == [np.nan, True]
    assert [e.to_dict() for e in errors] == [
        {"index": 1, "error": f"field 'winner': value 'foo' {WINNER_ERROR}"},
        {"index": 2, "error": "record is not a JSON object"},
    ]
    assert n_duplicates == 2 and seen == {"stored", "a", "b"}


def test_battles_from_records_with_nothing_valid() -> None:
    battles, errors, n_duplicates = battles_from_records([1, battle(model_b="x")])
    assert len(battles) == 0 and list(battles.columns) == list(BATTLE_COLUMNS)
    assert [e.index for e in errors] == [0, 1] and n_duplicates == 0
    assert battles_from_records([])[0].shape == (0, len(BATTLE_COLUMNS))


names = st.sampled_from(["a", "b", "c", "", " ", None, 3])
records_strategy = st.lists(
    st.fixed_dictionaries(
        {"model_a": names, "model_b": names},
        optional={
            "winner": st.sampled_from([*WINNERS, "foo", None]),
            "id": st.sampled_from(["1", "2", "3", None]),
            "tstamp": st.sampled_from([1.0, "x", None]),
        },
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(records_strategy)
def test_every_record_is_accepted_rejected_or_a_duplicate(records: list[dict[str, Any]]) -> None:
    battles, errors, n_duplicates = battles_from_records(records)
    assert len(battles) + len(errors) + n_duplicates == len(records)
    indices = [e.index for e in errors]
    assert indices == sorted(set(indices))
    ids = battles["battle_id"].dropna()
    assert ids.is_unique
    assert (battles["model_a"].astype(str) != battles["model_b"].astype(str)).all()


@settings(max_examples=30, deadline=None)
@given(records_strategy)
def test_swapping_models_and_outcome_keeps_validity(records: list[dict[str, Any]]) -> None:
    flip = {"model_a": "model_b", "model_b": "model_a"}
    swapped = [
        {**r, "model_a": r["model_b"], "model_b": r["model_a"]}
        | ({"winner": flip.get(r["winner"], r["winner"])} if "winner" in r else {})
        for r in records
    ]
    frame, swapped_frame = (normalise_columns(pd.DataFrame(x)) for x in (records, swapped))
    rejected = {e.index for e in validate_battles(frame)}
    assert rejected == {e.index for e in validate_battles(swapped_frame)}
