"""Odds of a board: p_best and rank ranges from draws (docs/SPEC.md section 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from ranking.odds import (
    competition_ranks,
    gaussian_draws,
    rank_odds,
    standard_normal_draws,
    z_value,
)


def test_competition_ranks_share_a_rank_on_ties() -> None:
    assert competition_ranks(np.array([3.0, 1.0, 3.0, 0.0])).tolist() == [1, 3, 1, 4]
    batch = competition_ranks(np.array([[1.0, 2.0], [2.0, 2.0]]))
    assert batch.tolist() == [[2, 1], [1, 1]]


def test_known_answer() -> None:
    # Model 0 is best in 3 of 4 draws, model 1 in 1; model 2 always last.
    draws = np.array([[3.0, 2.0, 0.0], [3.0, 2.0, 0.0], [3.0, 2.0, 0.0], [1.0, 2.0, 0.0]])
    odds = rank_odds(draws, confidence=0.5)
    assert odds.p_best.tolist() == [0.75, 0.25, 0.0]
    assert odds.rank_lower.tolist() == [1, 1, 3]
    assert odds.rank_upper.tolist() == [2, 2, 3]


def test_a_tie_for_the_top_is_shared() -> None:
    odds = rank_odds(np.array([[1.0, 1.0, 0.0]]))
    assert odds.p_best.tolist() == [0.5, 0.5, 0.0]
    assert odds.rank_lower.tolist() == odds.rank_upper.tolist() == [1, 1, 3]


def test_batch_axes_between_draws_and_models() -> None:
    draws = np.random.default_rng(0).normal(size=(200, 3, 5))
    odds = rank_odds(draws)
    assert odds.p_best.shape == odds.rank_lower.shape == (3, 5)
    np.testing.assert_allclose(odds.p_best.sum(axis=-1), 1.0)
    alone = rank_odds(draws[:, 1])
    np.testing.assert_array_equal(alone.p_best, odds.p_best[1])
    np.testing.assert_array_equal(alone.rank_upper, odds.rank_upper[1])


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    shift=st.floats(-1e3, 1e3),
    k=st.integers(1, 7),
)
def test_properties(seed: int, shift: float, k: int) -> None:
    draws = np.random.default_rng(seed).normal(size=(50, k)) * 10
    odds = rank_odds(draws)
    assert odds.p_best.sum() == pytest.approx(1.0)
    assert np.all((1 <= odds.rank_lower) & (odds.rank_lower <= odds.rank_upper))
    assert np.all(odds.rank_upper <= k)
    # A common shift of every draw changes nothing; permuting the models permutes the odds.
    shifted = rank_odds(draws + shift)
    np.testing.assert_array_equal(shifted.rank_lower, odds.rank_lower)
    np.testing.assert_allclose(shifted.p_best, odds.p_best)
    order = np.random.default_rng(seed + 1).permutation(k)
    permuted = rank_odds(draws[:, order])
    np.testing.assert_allclose(permuted.p_best, odds.p_best[order])
    np.testing.assert_array_equal(permuted.rank_upper, odds.rank_upper[order])


@pytest.mark.parametrize(
    ("draws", "confidence", "match"),
    [
        (np.zeros((0, 3)), 0.95, "'draws'"),
        (np.zeros(3), 0.95, "'draws'"),
        (np.zeros((4, 3)), 1.5, "'confidence' must be between 0 and 1, not 1.5"),
    ],
)
def test_bad_arguments(draws: np.ndarray, confidence: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rank_odds(draws, confidence)


def test_gaussian_draws_fixed_seed_and_singular_covariance() -> None:
    centre = np.eye(3) - 1.0 / 3.0  # singular: ratings relative to their mean
    cov = centre @ np.diag([1.0, 4.0, 9.0]) @ centre
    first = gaussian_draws(np.array([1.0, 0.0, -1.0]), cov, rounds=20_000)
    np.testing.assert_array_equal(first, gaussian_draws(np.array([1.0, 0.0, -1.0]), cov, 20_000))
    np.testing.assert_allclose(first.mean(axis=0), [1.0, 0.0, -1.0], atol=0.06)
    np.testing.assert_allclose(np.cov(first.T), cov, atol=0.15)
    np.testing.assert_allclose(first.sum(axis=1), 0.0, atol=1e-6)
    with pytest.raises(ValueError, match="'rounds' must be at least 1, not 0"):
        standard_normal_draws(0, 3)


def test_gaussian_draws_move_by_as_little_as_the_covariance() -> None:
    """Equal variances (predicted intervals of one width) make every basis an
    eigen-decomposition: a change in the last bits must not turn the draws, nor the odds
    (a cached and an uncached service gave p_best 0.086 and 0.075 for one model)."""
    mean = np.array([1117.78, 1083.18, 1057.16, 1049.14, 1045.87, 1041.10])
    variance = np.full(mean.size, 76.57**2)
    nudged = variance * (1.0 + np.array([0.0, 1e-15, -2e-15, 0.0, 3e-15, -1e-15]))
    before = gaussian_draws(mean, np.diag(variance))
    after = gaussian_draws(mean, np.diag(nudged))
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(rank_odds(after, 0.95).p_best, rank_odds(before, 0.95).p_best)
    z = standard_normal_draws(before.shape[0], mean.size)
    np.testing.assert_allclose(before, mean + z * np.sqrt(variance), rtol=0, atol=1e-9)


def test_standard_draws_are_drawn_once_read_only_and_the_seeds() -> None:
    draws = standard_normal_draws(50, 4, seed=3)
    np.testing.assert_array_equal(draws, np.random.default_rng(3).standard_normal((50, 4)))
    assert standard_normal_draws(50, 4, seed=3) is draws and not draws.flags.writeable
    with pytest.raises(ValueError):
        draws[0, 0] = 1.0  # shared by every caller: none may change it
    assert z_value(0.95) == float(norm.ppf(0.975))


def test_rank_ranges_are_the_quantiles_of_the_ranks() -> None:
    draws = gaussian_draws([3.0, 2.9, 1.0, 1.0], np.diag([1.0, 1.0, 0.01, 0.01]), rounds=300)
    ranks = competition_ranks(draws)
    odds = rank_odds(draws, 0.9)
    expected_lower = np.floor(np.quantile(ranks, 0.05, axis=0) + 1e-9).astype(np.int64)
    expected_upper = np.ceil(np.quantile(ranks, 0.95, axis=0) - 1e-9).astype(np.int64)
    np.testing.assert_array_equal(odds.rank_lower, expected_lower)
    np.testing.assert_array_equal(odds.rank_upper, expected_upper)
