"""Bradley-Terry fits: known answers, gradients, independent references, sparse data."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad
from sklearn.linear_model import LogisticRegression

from ranking.bt import (
    bt_gradient,
    bt_hessian,
    bt_objective,
    fit_bt,
    fit_bt_grouped,
    fit_bt_posterior,
)
from ranking.intervals.sandwich import sandwich_intervals
from ranking.pairwise import ELO_PER_NAT, collapse
from tests.conftest import simulate_votes


def reference_bt(n_models: int, matchups: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
    """A slow, independent fit: logistic regression on the expanded rows, ties split in two."""
    n = len(outcomes)
    x = np.zeros((n, n_models))
    x[np.arange(n), matchups[:, 0]] = 1.0
    x[np.arange(n), matchups[:, 1]] = -1.0
    tie = outcomes == 0.5
    xs = np.vstack([x, x[tie]])
    ys = np.concatenate([np.where(tie, 1.0, outcomes), np.zeros(tie.sum())])
    ws = np.concatenate([np.where(tie, 0.5, 1.0), np.full(tie.sum(), 0.5)])
    model = LogisticRegression(C=1e8, fit_intercept=False, tol=1e-12, max_iter=10_000)
    coef = model.fit(xs, ys, sample_weight=ws).coef_[0]
    return coef - coef.mean()


def test_two_models_known_answer() -> None:
    # a beats b 3 times out of 4: the MLE odds are 3, so a is log(3) nats above b.
    theta = fit_bt(2, np.array([[0, 1]] * 4), np.array([1.0, 1.0, 1.0, 0.0]), alpha=1e-9)
    assert theta[0] - theta[1] == pytest.approx(math.log(3.0), abs=1e-5)
    assert (theta[0] - theta[1]) * ELO_PER_NAT == pytest.approx(400 * math.log10(3), abs=1e-3)


def test_ties_count_half_a_win() -> None:
    # One win, one loss and two ties: exactly even.
    theta = fit_bt(2, np.array([[0, 1]] * 4), np.array([1.0, 0.5, 0.5, 0.0]), alpha=1e-9)
    assert theta == pytest.approx([0.0, 0.0], abs=1e-8)
    # Two wins and two ties out of four: 3 half-wins for a to 1 for b, odds 3.
    theta = fit_bt(2, np.array([[0, 1]] * 4), np.array([1.0, 1.0, 0.5, 0.5]), alpha=1e-9)
    assert theta[0] - theta[1] == pytest.approx(math.log(3.0), abs=1e-5)


def test_three_model_chain_known_answer() -> None:
    # a beats b 2:1, b beats c 2:1, no a-c games: MLE differences log 2 each.
    m = np.array([[0, 1], [0, 1], [1, 0], [1, 2], [1, 2], [2, 1]])
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    theta = fit_bt(3, m, y, alpha=1e-9)
    assert theta[0] - theta[1] == pytest.approx(math.log(2.0), abs=1e-5)
    assert theta[1] - theta[2] == pytest.approx(math.log(2.0), abs=1e-5)
    assert theta.sum() == pytest.approx(0.0, abs=1e-9)


def test_gradient_and_hessian_are_analytic_derivatives() -> None:
    data, _ = simulate_votes(6, 300, seed=1)
    votes = collapse(data)
    args = (votes.matchups, votes.outcomes, votes.weights, 0.1)
    theta0 = np.random.default_rng(0).normal(size=6)
    assert check_grad(bt_objective, bt_gradient, theta0, *args) < 1e-5
    eps = 1e-6
    numeric = np.array(
        [
            (bt_gradient(theta0 + eps * e, *args) - bt_gradient(theta0 - eps * e, *args))
            / (2 * eps)
            for e in np.eye(6)
        ]
    )
    assert np.allclose(bt_hessian(theta0, *args), numeric, atol=1e-5)


def test_agrees_with_logistic_regression_within_half_a_point() -> None:
    data, _ = simulate_votes(12, 4000, seed=2)
    votes = collapse(data)
    theta = fit_bt(votes.n_models, votes.matchups, votes.outcomes, votes.weights)
    reference = reference_bt(data.n_models, data.matchups, data.outcomes)
    assert np.max(np.abs(theta - reference)) * ELO_PER_NAT < 0.5


def test_agrees_with_choix_without_ties() -> None:
    data, _ = simulate_votes(8, 2000, seed=3, tie_share=0.0)
    winners_first = [
        (a, b) if y == 1.0 else (b, a)
        for (a, b), y in zip(data.matchups, data.outcomes, strict=True)
    ]
    reference = choix.opt_pairwise(8, winners_first, alpha=1e-9)
    theta = fit_bt(8, data.matchups, data.outcomes, alpha=1e-9)
    assert np.max(np.abs(theta - (reference - reference.mean()))) * ELO_PER_NAT < 0.5


def test_collapsed_and_expanded_rows_give_the_same_fit() -> None:
    data, _ = simulate_votes(7, 800, seed=4)
    votes = collapse(data)
    assert len(votes.outcomes) < len(data.outcomes)
    full = fit_bt(7, data.matchups, data.outcomes)
    collapsed = fit_bt(7, votes.matchups, votes.outcomes, votes.weights)
    assert full == pytest.approx(collapsed, abs=1e-8)


def test_grouped_fit_equals_independent_fits() -> None:
    parts = [simulate_votes(5, 200 + 50 * g, seed=10 + g)[0] for g in range(3)]
    matchups = np.concatenate([p.matchups for p in parts])
    outcomes = np.concatenate([p.outcomes for p in parts])
    groups = np.concatenate([np.full(len(p.outcomes), g) for g, p in enumerate(parts)])
    grouped = fit_bt_grouped(5, matchups, outcomes, groups=groups, n_groups=4)
    for g, p in enumerate(parts):
        assert grouped[g] == pytest.approx(fit_bt(5, p.matchups, p.outcomes), abs=1e-6)
    assert grouped[3] == pytest.approx(np.zeros(5))  # a group with no votes keeps the prior


def test_prior_mean_and_strength_shrink_toward_the_prior() -> None:
    data, _ = simulate_votes(5, 100, seed=5)
    prior = np.array([1.0, 0.5, 0.0, -0.5, -1.0])
    strong = fit_bt_grouped(5, data.matchups, data.outcomes, prior_mean=prior, alpha=1e6)[0]
    assert strong == pytest.approx(prior, abs=1e-3)
    weak = fit_bt_grouped(5, data.matchups, data.outcomes, prior_mean=prior, alpha=1e-9)[0]
    plain = fit_bt(5, data.matchups, data.outcomes, alpha=1e-9)
    assert weak - weak.mean() == pytest.approx(plain, abs=1e-4)


class TestSparseData:
    def test_model_that_never_lost_is_finite_and_on_top(self) -> None:
        m = np.array([[0, 1], [0, 2], [1, 2], [2, 1]])
        theta = fit_bt(3, m, np.array([1.0, 1.0, 1.0, 1.0]))
        assert np.all(np.isfinite(theta))
        assert theta.argmax() == 0
        # about log(n_wins / alpha) nats above the rest, far from infinity
        assert theta[0] - theta[1:].max() < math.log(2 / 1e-3) + 1

    def test_model_seen_once(self) -> None:
        data, _ = simulate_votes(5, 400, seed=6)
        m = np.vstack([data.matchups, [[5, 0]]])
        y = np.append(data.outcomes, 0.0)
        theta = fit_bt(6, m, y)
        assert np.all(np.isfinite(theta)) and theta.argmin() == 5

    def test_disconnected_parts_are_each_centred(self) -> None:
        m = np.array([[0, 1], [1, 0], [0, 1], [2, 3], [3, 2], [3, 2]])
        y = np.ones(6)
        theta = fit_bt(4, m, y)
        assert np.all(np.isfinite(theta))
        assert theta[:2].sum() == pytest.approx(0.0, abs=1e-9)
        assert theta[2:].sum() == pytest.approx(0.0, abs=1e-9)
        assert theta[0] - theta[1] == pytest.approx(math.log(2.0), abs=1e-3)

    def test_no_votes_at_all(self) -> None:
        theta = fit_bt(3, np.empty((0, 2), dtype=np.intp), np.empty(0))
        assert theta == pytest.approx(np.zeros(3))


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match="'matchups'"):
        fit_bt(2, np.array([[0, 2]]), np.array([1.0]))
    with pytest.raises(ValueError, match="'alpha'"):
        fit_bt(2, np.array([[0, 1]]), np.array([1.0]), alpha=-1.0)


@st.composite
def connected_votes(draw: st.DrawFn) -> tuple[int, np.ndarray, np.ndarray]:
    """Random votes plus a ring of ties, so that the maximum likelihood fit exists."""
    k = draw(st.integers(2, 6))
    n = draw(st.integers(0, 30))
    a = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.intp)
    shift = np.array(draw(st.lists(st.integers(1, k - 1), min_size=n, max_size=n)), dtype=np.intp)
    y = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n)))
    ring = np.arange(k)
    matchups = np.vstack(
        [np.stack([a, (a + shift) % k], axis=1), np.stack([ring, (ring + 1) % k], axis=1)]
    )
    outcomes = np.concatenate([y, np.full(k, 0.5)])
    return k, matchups.astype(np.intp), outcomes


@given(connected_votes())
@settings(max_examples=60, deadline=None)
def test_swapping_sides_with_the_outcome_changes_nothing(votes: tuple) -> None:
    k, matchups, outcomes = votes
    theta = fit_bt(k, matchups, outcomes)
    swapped = fit_bt(k, matchups[:, ::-1], 1.0 - outcomes)
    assert swapped == pytest.approx(theta, abs=1e-7)


@given(connected_votes())
@settings(max_examples=60, deadline=None)
def test_duplicating_every_vote_keeps_the_ratings_and_narrows_the_intervals(votes: tuple) -> None:
    k, matchups, outcomes = votes
    # The maximum likelihood fit itself (a vanishing prior): exactly invariant.
    once = fit_bt(k, matchups, outcomes, alpha=1e-9)
    doubled = np.vstack([matchups, matchups]), np.concatenate([outcomes, outcomes])
    twice = fit_bt(k, *doubled, alpha=1e-9)
    assert np.max(np.abs(once - twice)) * ELO_PER_NAT < 1e-3
    lo, hi = sandwich_intervals(once, matchups, outcomes, alpha=1e-9)
    lo2, hi2 = sandwich_intervals(twice, *doubled, alpha=1e-9)
    assert np.all(hi2 - lo2 < hi - lo)


@pytest.mark.parametrize("alpha", [1e-3, 2.0])
def test_posterior_variances_are_the_inverse_hessian(alpha: float) -> None:
    data, _ = simulate_votes(5, 300, seed=1)
    fit = fit_bt_posterior(5, data.matchups, data.outcomes, alpha=alpha)
    inverse = np.linalg.inv(bt_hessian(fit.theta[0], data.matchups, data.outcomes, None, alpha))
    centre = np.eye(5) - 1 / 5
    assert fit.variance[0] == pytest.approx(np.diag(inverse), rel=1e-6)
    assert fit.relative_variance[0] == pytest.approx(np.diag(centre @ inverse @ centre), rel=1e-6)
    # the relative variance leaves out the 1 / alpha of the unplaced mean
    assert np.all(fit.relative_variance < fit.variance)
