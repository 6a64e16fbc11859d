"""A prediction's ranking as a person reads it: rank order, ranks inside their ranges, and
odds from the one computation of independent-Gaussian odds (issue 32, items 3 and 5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from features.prediction import Prediction
from ranking.odds import interval_odds


def prediction(ratings: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> Prediction:
    k = ratings.shape[-1]
    return Prediction(
        "predicted",
        np.asarray(["you"], dtype=object),
        tuple(f"model-{j}" for j in range(k)),
        ratings[None, :],
        lower[None, :],
        upper[None, :],
    )


def test_rows_are_in_rank_order_with_ranks_inside_their_ranges() -> None:
    """Read by rating, the interval ranks go 1, 2, 1, 3; the rows are listed 1, 1, 2, 3."""
    rows = prediction(
        np.array([1100.0, 1090.0, 1080.0, 1070.0]),
        np.array([1096.0, 1086.0, 1000.0, 1066.0]),
        np.array([1104.0, 1094.0, 1160.0, 1074.0]),
    ).ranking()
    assert [r["model"] for r in rows] == ["model-0", "model-2", "model-1", "model-3"]
    assert [r["rank"] for r in rows] == [1, 1, 2, 3]
    assert all(r["rank_lower"] <= r["rank"] <= r["rank_upper"] for r in rows)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), k=st.integers(2, 15))
def test_random_predictions_read_well(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    ratings = rng.normal(1000.0, 40.0, k)
    half = rng.exponential(30.0, k) + 0.1
    lower, upper = ratings - half, ratings + half
    rows = prediction(ratings, lower, upper).ranking()
    ranks = [r["rank"] for r in rows]
    assert ranks == sorted(ranks)
    assert rows[0]["rating"] == max(r["rating"] for r in rows)
    assert all(1 <= r["rank_lower"] <= r["rank"] <= r["rank_upper"] <= k for r in rows)
    # the odds are interval_odds' of the same intervals: one computation everywhere
    odds = interval_odds(ratings, lower, upper)
    by_model = {f"model-{j}": round(float(p), 4) for j, p in enumerate(odds.p_best)}
    assert {r["model"]: r["p_best"] for r in rows} == by_model
    assert sum(r["p_best"] for r in rows) == pytest.approx(1.0, abs=1e-3)
