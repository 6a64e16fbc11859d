"""Battle frames to arrays, vote order and segments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ranking.frames import filter_battles, pairwise_from_battles, parse_where, vote_order


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


def test_parse_where() -> None:
    assert parse_where("math=1") == ("math", "1")
    assert parse_where(" a.b = x=y ") == ("a.b", "x=y")
    with pytest.raises(ValueError, match="COLUMN=VALUE"):
        parse_where("math")
