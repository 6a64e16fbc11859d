"""Per-row Spearman and Kendall against scipy, and the summary."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from ranking.agreement import (
    BOOTSTRAP_RESAMPLES,
    NoiseComparison,
    bootstrap_users,
    compare_with_null,
    kendall_per_row,
    spearman_per_row,
    summarise,
)


def test_against_scipy_with_masks_and_ties() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, (200, 9)).astype(float)  # many ties
    y = rng.normal(size=9)
    mask = rng.random((200, 9)) < 0.7
    rho = spearman_per_row(x, y, mask)
    tau = kendall_per_row(x, y, mask)
    for u in range(200):
        m = mask[u]
        if m.sum() < 2 or np.ptp(x[u, m]) == 0:
            assert np.isnan(rho[u]) and np.isnan(tau[u])
            continue
        assert rho[u] == pytest.approx(spearmanr(x[u, m], y[m]).statistic)
        assert tau[u] == pytest.approx(kendalltau(x[u, m], y[m]).statistic)


def test_per_row_reference_and_perfect_agreement() -> None:
    x = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    y = np.array([[10.0, 20.0, 30.0], [10.0, 20.0, 30.0]])
    assert spearman_per_row(x, y).tolist() == pytest.approx([1.0, -1.0])
    assert kendall_per_row(x, y).tolist() == pytest.approx([1.0, -1.0])


def test_summary() -> None:
    rho = np.array([0.9, 0.05, -0.3, np.nan, 0.5])
    tau = np.array([0.8, 0.0, -0.2, np.nan, 0.4])
    n = np.array([50, 50, 50, 50, 3])
    s = summarise(rho, tau, n, min_battles=10)
    assert s.users == 3
    assert s.mean_spearman == pytest.approx((0.9 + 0.05 - 0.3) / 3)
    assert s.median_spearman == pytest.approx(0.05)
    assert s.share_near_zero_or_negative == pytest.approx(2 / 3)
    d = summarise(rho, tau, n, min_battles=1000).to_dict()
    assert d["users"] == 0 and d["mean_spearman"] is None


def test_summary_intervals_bracket_the_figures() -> None:
    rng = np.random.default_rng(5)
    rho = np.clip(rng.normal(0.3, 0.3, 80), -1, 1)
    s = summarise(rho, rho, np.full(80, 50))
    for name in ("mean_spearman", "median_spearman", "share_near_zero_or_negative"):
        lower, upper = getattr(s, f"{name}_interval")
        assert lower < getattr(s, name) < upper
    d = s.to_dict()
    assert d["mean_spearman_interval"] == [round(v, 4) for v in s.mean_spearman_interval]
    assert d["bootstrap"] == {"over": "users", "resamples": BOOTSTRAP_RESAMPLES, "seed": 0}
    assert "noise" not in d


def test_bootstrap_interval_covers_the_mean_as_often_as_it_says() -> None:
    # users' coefficients from a skewed distribution with a known mean (Beta(2, 5) * 2 - 1)
    rng = np.random.default_rng(6)
    truth = 2 * 2 / 7 - 1
    covered = 0
    trials = 400
    for t in range(trials):
        rho = 2 * rng.beta(2, 5, 60) - 1
        lower, upper = bootstrap_users(
            rho, lambda x: x[..., 0].mean(axis=1, keepdims=True), resamples=400, rng=t
        )
        covered += int(lower[0] <= truth <= upper[0])
    # 95% nominal; a percentile bootstrap of 60 users runs a little short. The binomial
    # sd of the share over 400 trials is 0.011.
    assert 0.91 <= covered / trials <= 0.98


def test_bootstrap_needs_two_users_and_a_valid_confidence() -> None:
    lower, upper = bootstrap_users([0.5], lambda x: x[..., 0].mean(axis=1, keepdims=True))
    assert np.isnan(lower).all() and np.isnan(upper).all()
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_users([0.1, 0.2], lambda x: x[..., 0].mean(axis=1, keepdims=True), confidence=1)


def test_null_comparison_figures_and_round_trip() -> None:
    rng = np.random.default_rng(7)
    observed = rng.uniform(-0.2, 0.8, 100)
    null = observed + 0.2  # the null agrees 0.2 better than every user
    c = compare_with_null(observed, np.append(null[:-1], np.nan), replicates=5)
    assert c.users == 99  # a user undefined under the null is left out of both
    assert c.excess == pytest.approx(0.2)
    assert c.intervals["excess"] == pytest.approx((0.2, 0.2))
    gap = 1 - observed[:-1].mean()
    assert c.noise_share == pytest.approx((gap - 0.2) / gap)
    assert c.mean_spearman == pytest.approx(null[:-1].mean())
    assert c.share_near_zero_or_negative == pytest.approx(np.mean(null[:-1] <= 0.1))
    back = NoiseComparison.from_dict(c.to_dict())
    assert back.noise_share == pytest.approx(c.noise_share, abs=1e-4)
    assert "beyond noise" in c.reading() and "beyond noise" in back.reading()
    same = compare_with_null(observed, observed, replicates=5)
    assert same.noise_share == pytest.approx(1.0) and "no taste" in same.reading()
    assert compare_with_null([np.nan], [0.5], replicates=5).users == 0


def test_users_in_perfect_agreement_leave_no_gap_to_share() -> None:
    # observed Spearman 1 for everyone: the noise's share of a zero gap is undefined, and
    # the document says so with None rather than an infinity JSON cannot hold
    observed = np.ones(4)
    comparison = compare_with_null(observed, np.full(4, 0.5), replicates=3, rng=0)
    assert np.isnan(comparison.noise_share)
    assert comparison.to_dict()["noise_share"] is None
