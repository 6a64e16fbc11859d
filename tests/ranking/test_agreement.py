"""Per-row Spearman and Kendall against scipy, and the summary."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from ranking.agreement import kendall_per_row, spearman_per_row, summarise


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
