"""The compiled users' odds (:mod:`ranking.odds_kernel`) against :func:`rank_odds`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.odds import rank_odds, standard_normal_draws
from ranking.odds_kernel import gaussian_rank_odds


def _reference(
    mean: np.ndarray, sd: np.ndarray, listed: np.ndarray, z: np.ndarray, confidence: float
) -> list[np.ndarray]:
    """``rank_odds`` of the same draws, the unlisted models at minus infinity."""
    sample = np.where(listed[None], mean[None] + sd[None] * z[:, None, :], -np.inf)
    sample[:, ~listed.any(axis=1)] = 0.0
    odds = rank_odds(sample, confidence)
    return [np.where(listed, a, np.nan) for a in (odds.p_best, odds.rank_lower, odds.rank_upper)]


@settings(max_examples=40, deadline=None)
@given(
    users=st.integers(1, 6),
    k=st.integers(1, 7),
    draws=st.integers(1, 60),
    confidence=st.floats(0.5, 0.99),
    seed=st.integers(0, 2**31 - 1),
)
def test_equals_rank_odds_of_the_same_draws(
    users: int, k: int, draws: int, confidence: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    mean = np.round(1000 + 30 * rng.standard_normal((users, k)))
    sd = rng.choice([0.0, 5.0, 40.0], size=(users, k))  # sd 0 makes ties
    listed = rng.random((users, k)) > 0.3
    z = standard_normal_draws(draws, k, seed % 1000)
    got = gaussian_rank_odds(mean, sd, listed, z, confidence)
    for ours, theirs in zip(got, _reference(mean, sd, listed, z, confidence), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_a_clear_best_and_the_columns_sum_to_one() -> None:
    mean = np.array([[1200.0, 1000.0, 990.0], [1000.0, 1000.0, 1000.0]])
    sd = np.full_like(mean, 10.0)
    p_best, low, high = gaussian_rank_odds(
        mean, sd, np.ones_like(mean, dtype=bool), standard_normal_draws(400, 3), 0.95
    )
    assert p_best[0, 0] == 1.0 and low[0, 0] == high[0, 0] == 1
    assert p_best.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert (low[1] == 1).all() and (high[1] == 3).all()


def test_bad_arguments_are_named() -> None:
    ok = np.zeros((2, 3))
    with pytest.raises(ValueError, match="'mean', 'sd', 'listed'"):
        gaussian_rank_odds(ok, np.zeros((2, 2)), ok.astype(bool), np.zeros((4, 3)), 0.95)
    with pytest.raises(ValueError, match="'confidence'"):
        gaussian_rank_odds(ok, ok, ok.astype(bool), np.zeros((4, 3)), 1.5)
