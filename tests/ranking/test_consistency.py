"""Tests for ``ranking/consistency.py``: leave-one-vote-out log-odds and preference strength."""

from __future__ import annotations

import numpy as np

from ranking.bt import fit_bt_grouped
from ranking.consistency import (
    honest_null,
    leave_one_out_logits,
    logistic_slopes,
    lower_tail,
    preference_strength,
)

K = 6
STRENGTH = np.linspace(1.0, -1.0, K)


def _votes(rng: np.random.Generator, theta: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, K, n)
    b = (a + rng.integers(1, K, n)) % K
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(theta[b] - theta[a]))).astype(float)
    y[rng.random(n) < 0.1] = 0.5
    return np.stack([a, b], axis=1).astype(np.intp), y


def test_leave_one_out_matches_refitting_without_the_vote() -> None:
    rng = np.random.default_rng(0)
    matchups, y = _votes(rng, STRENGTH, 40)
    w, users, prior, alpha = np.ones(40), np.zeros(40, dtype=np.intp), STRENGTH * 0.5, 2.0
    d, d_loo = leave_one_out_logits(K, matchups, y, w, users, 1, prior, alpha)
    exact = np.empty(40)
    for i in range(40):
        keep = np.arange(40) != i
        theta = fit_bt_grouped(K, matchups[keep], y[keep], prior_mean=prior, alpha=alpha)[0]
        exact[i] = theta[matchups[i, 0]] - theta[matchups[i, 1]]
    # the approximation takes nearly all of the way from the full fit to the refit
    assert np.abs(d_loo - exact).max() < 0.1 * np.abs(d - exact).max()
    won = y == 1.0
    assert np.all(d_loo[won] < d[won]) and np.all(d_loo[y == 0.0] > d[y == 0.0])


def test_preference_strength_ignores_the_direction_of_a_taste() -> None:
    rng = np.random.default_rng(1)
    parts = [_votes(rng, STRENGTH, 200), _votes(rng, np.zeros(K), 200)]
    matchups = np.concatenate([m for m, _ in parts])
    y = np.concatenate([o for _, o in parts])
    users = np.repeat([0, 1], 200).astype(np.intp)
    w = np.ones(400)
    kappa, se = preference_strength(K, matchups, y, w, users, 2)
    flipped, _ = preference_strength(K, matchups, 1.0 - y, w, users, 2)
    np.testing.assert_allclose(flipped, kappa, rtol=1e-10)  # a reversed taste is as strong
    assert kappa[0] > 0.05 > abs(kappa[1]) and se[0] < kappa[0] / 1.5


def test_coin_flippers_have_no_preference_strength_on_average() -> None:
    rng = np.random.default_rng(2)
    n_users, per = 400, 50
    users = np.repeat(np.arange(n_users), per).astype(np.intp)
    a = rng.integers(0, K, users.size)
    matchups = np.stack([a, (a + rng.integers(1, K, users.size)) % K], axis=1).astype(np.intp)
    y = rng.integers(0, 2, users.size).astype(float)
    kappa, se = preference_strength(K, matchups, y, np.ones(users.size), users, n_users)
    # the chi-square's mean is its degrees of freedom: the mean of kappa is 0
    assert abs(kappa.mean()) < 3 * np.sqrt(np.mean(se**2) / n_users)
    slope, slope_se = logistic_slopes(
        STRENGTH[matchups[:, 0]] - STRENGTH[matchups[:, 1]], y, np.ones(users.size), users, n_users
    )
    assert abs(np.median(slope)) < 0.2 and np.all(slope_se > 0)


def test_honest_null_is_robust_to_a_few_outliers() -> None:
    rng = np.random.default_rng(3)
    se = np.full(500, 0.2)
    stat = rng.normal(1.0, np.sqrt(0.3**2 + 0.2**2), 500)
    stat[:20] = -3.0
    votes = rng.integers(20, 100, 500).astype(float)
    centre, spread = honest_null(stat, se, votes)
    assert abs(centre - 1.0) < 0.1 and abs(spread - 0.3) < 0.1
    p = lower_tail(np.array([-3.0, 1.0, np.nan]), np.array([0.2, 0.2, 0.2]), (centre, spread))
    assert p[0] < 1e-6 and 0.3 < p[1] < 0.7 and p[2] == 1.0
    assert honest_null(stat[:3], se[:3], votes[:3]) == (1.0, 0.5)
