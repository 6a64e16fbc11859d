"""Battle frames to arrays, vote order and segments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ranking.io.frames import (
    PRIVATE_COLUMNS,
    check_segment_size,
    filter_battles,
    label_columns,
    pairwise_from_battles,
    parse_where,
    vote_order,
)


def frame(**extra: list) -> pd.DataFrame:
    base = {
        "model_a": ["x", "y", "z", "x"],
        "model_b": ["y", "z", "x", "z"],
        "winner": ["model_a", "tie", "model_b", "both_bad"],
    }
    return pd.DataFrame({**base, **extra})


def test_arrays_and_outcomes() -> None:
    data = pairwise_from_battles(frame())
    assert data.models == ("x", "y", "z")
    assert data.matchups.tolist() == [[0, 1], [1, 2], [2, 0], [0, 2]]
    assert data.outcomes.tolist() == [1.0, 0.5, 0.0, 0.5]
    assert data.weights.tolist() == [1.0] * 4


def test_votes_ordered_by_tstamp_with_missing_last() -> None:
    f = frame(tstamp=[30.0, np.nan, 10.0, 20.0])
    assert vote_order(f).tolist() == [2, 3, 0, 1]
    assert pairwise_from_battles(f).outcomes.tolist() == [0.0, 0.5, 1.0, 0.5]
    assert vote_order(frame()).tolist() == [0, 1, 2, 3]


def test_filter_numeric_text_and_combined() -> None:
    f = frame(math=[1, 0, 1, 1], lang=["en", "en", "de", "en"])
    assert filter_battles(f, [("math", "1")]).index.tolist() == [0, 2, 3]
    assert filter_battles(f, [("math", "1.0"), ("lang", "en")]).index.tolist() == [0, 3]
    assert filter_battles(f, [("lang", "fr")]).empty


def test_filter_errors_name_column_and_value() -> None:
    f = frame(math=[1, 0, 1, 1])
    with pytest.raises(ValueError, match="'coding'.*labels: math"):
        filter_battles(f, [("coding", "1")])
    with pytest.raises(ValueError, match="'math' is numeric, not 'yes'"):
        filter_battles(f, [("math", "yes")])


@pytest.mark.parametrize("column", sorted(PRIVATE_COLUMNS | {"model_a", "model_b", "winner"}))
def test_no_segment_on_the_vote_itself_or_what_identifies_a_person_or_a_text(
    column: str,
) -> None:
    f = frame(math=[1, 0, 1, 1], **{column: ["v1", "v2", "v3", "v4"]})
    assert label_columns(f) == ["math"]
    with pytest.raises(ValueError, match=f"'{column}' cannot be filtered on.*labels: math"):
        filter_battles(f, [(column, "v1")])


def test_segment_size_counts_votes_and_distinct_users() -> None:
    f = frame(user_id=["u1", "u1", "u2", None])
    check_segment_size(f, min_votes=4, min_users=2)
    with pytest.raises(ValueError, match="4 votes from 2 distinct users.*5 votes and 2 users"):
        check_segment_size(f, min_votes=5, min_users=2)
    with pytest.raises(ValueError, match="4 votes from 2 distinct users.*4 votes and 3 users"):
        check_segment_size(f, min_votes=4, min_users=3)
    with pytest.raises(ValueError, match="from 0 distinct users"):
        check_segment_size(frame(), min_votes=1, min_users=1)


def test_parse_where() -> None:
    assert parse_where("math=1") == ("math", "1")
    assert parse_where(" a.b = x=y ") == ("a.b", "x=y")
    with pytest.raises(ValueError, match="COLUMN=VALUE"):
        parse_where("math")
