"""The null of no taste: outcomes drawn from the aggregate, and agreement under it."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.analysis import analyse_users
from ranking.noise import null_outcomes, null_spearman
from ranking.pairwise import ELO_PER_NAT
from ranking.users import fit_user_ratings
from tests.conftest import simulate_users


def test_outcomes_keep_the_expected_score_and_the_tie_rate() -> None:
    ratings = np.array([1000.0, 1100.0, 1600.0])
    matchups = np.tile([[1, 0], [2, 0]], (100_000, 1))
    out = null_outcomes(matchups, ratings, 0.4, rng=0)
    for row, gap in ((0, 100.0), (1, 600.0)):
        y = out[row::2]
        p = 1.0 / (1.0 + np.exp(-gap / ELO_PER_NAT))
        assert set(np.unique(y)) <= {0.0, 0.5, 1.0}
        assert y.mean() == pytest.approx(p, abs=4 * np.sqrt(0.25 / y.size))
        # a tie rate of 0.4 fits the close pair; the lopsided one (p = 0.97) allows 2(1 - p)
        share = np.mean(y == 0.5)
        assert share == pytest.approx(min(0.4, 2 * (1 - p)), abs=4 * np.sqrt(0.25 / y.size))


def test_outcomes_refuse_a_tie_rate_outside_0_1() -> None:
    with pytest.raises(ValueError, match="tie_rate"):
        null_outcomes(np.array([[0, 1]]), np.zeros(2), 1.5, rng=0)


def test_only_eligible_users_are_redrawn_and_the_sample_is_capped() -> None:
    data, users, _, _ = simulate_users(30, 40, 6, seed=3)
    observed = fit_user_ratings(data, users, 30, shrinkage="none")
    reference = np.linspace(900.0, 1100.0, 6)
    eligible = np.arange(30) < 20
    null = null_spearman(data, users, observed, reference, eligible, replicates=3, max_users=8)
    assert np.isfinite(null).sum() == 8 and not np.isfinite(null[20:]).any()
    with pytest.raises(ValueError, match="replicates"):
        null_spearman(data, users, observed, reference, eligible, replicates=0)


@pytest.mark.parametrize(("method", "shrinkage"), [("bt", "none"), ("bt", "cv"), ("elo", "none")])
def test_users_who_are_the_aggregate_agree_as_the_null_says(method: str, shrinkage: str) -> None:
    data, users, _, _ = simulate_users(150, 60, 8, seed=4, deviation=0.0, tie_share=0.3)
    names = tuple(str(u) for u in range(150))
    analysis = analyse_users(
        data, users, names, method=method, shrinkage=shrinkage, min_battles=20,
        null_replicates=10,
    )  # fmt: skip
    noise = analysis.summary.noise
    assert noise is not None and noise.users == analysis.summary.users > 100
    assert noise.excess == pytest.approx(0.0, abs=0.03)
    lower, upper = noise.intervals["excess"]
    assert lower <= 0.0 <= upper
    if shrinkage == "cv":
        # nothing to learn: the shrinkage pulls every user onto the aggregate, both ways
        assert noise.observed_mean_spearman == pytest.approx(1.0, abs=1e-3)
    else:
        assert noise.intervals["noise_share"][0] < 1.0 < noise.intervals["noise_share"][1]


@pytest.mark.parametrize(("method", "shrinkage"), [("bt", "none"), ("bt", "cv"), ("elo", "none")])
def test_users_with_a_taste_of_their_own_agree_less_than_the_null(
    method: str, shrinkage: str
) -> None:
    data, users, _, _ = simulate_users(150, 60, 8, seed=4, deviation=0.7, tie_share=0.3)
    names = tuple(str(u) for u in range(150))
    analysis = analyse_users(
        data, users, names, method=method, shrinkage=shrinkage, min_battles=20,
        null_replicates=10,
    )  # fmt: skip
    noise = analysis.summary.noise
    assert noise is not None
    assert noise.observed_mean_spearman < noise.mean_spearman
    assert noise.intervals["excess"][0] > 0.0
    assert noise.intervals["noise_share"][1] < 1.0
    assert analysis.null_spearman is not None
    assert np.isfinite(analysis.null_spearman).sum() == noise.users
