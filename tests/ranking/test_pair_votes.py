"""Votes grouped by pair: derivatives equal the design's, fits equal scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from ranking import pair_votes
from ranking.contextual import contextual_design
from ranking.pair_votes import PairVotes, newton_fit


def _votes(seed: int = 0, n: int = 1500, k: int = 5) -> tuple[np.ndarray, ...]:
    """Votes of ``k`` models in either order, with ties, and contexts of a constant, a
    one-hot part and a dense part."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, k, n)
    second = (first + rng.integers(1, k, n)) % k
    contexts = np.hstack(
        [np.ones((n, 1)), np.eye(3)[rng.integers(0, 3, n)], rng.normal(size=(n, 2))]
    )
    truth = rng.normal(size=(k, contexts.shape[1]))
    s = contexts @ truth.T
    d = s[np.arange(n), first] - s[np.arange(n), second]
    outcomes = (rng.random(n) < 1 / (1 + np.exp(-d))).astype(float)
    outcomes[rng.random(n) < 0.15] = 0.5
    weights = rng.uniform(0.5, 2.0, n)
    return np.column_stack([first, second]), outcomes, contexts, weights


def _design_terms(
    matchups: np.ndarray,
    y: np.ndarray,
    c: np.ndarray,
    w: np.ndarray,
    coef: np.ndarray,
    alpha: float,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Objective, gradient and Hessian written on the dense design, independently."""
    x = contextual_design(matchups, c, coef.shape[0]).toarray()
    d = x @ coef.ravel()
    p = 1 / (1 + np.exp(-d))
    value = np.sum(w * (np.log1p(np.exp(d)) - y * d)) + 0.5 * alpha * np.sum(coef**2)
    grad = x.T @ (w * (p - y)) + alpha * coef.ravel()
    hessian = x.T @ (x * (w * p * (1 - p))[:, None]) + alpha * np.eye(x.shape[1])
    return value, grad, hessian


def test_derivatives_equal_those_of_the_design() -> None:
    matchups, y, c, w = _votes()
    votes = PairVotes(matchups, y, c, 5, w)
    coef = np.random.default_rng(1).normal(size=(5, c.shape[1]))
    value, grad, hessian = votes.derivatives(coef, votes.weights, 0.7)
    expected = _design_terms(matchups, y, c, w, coef, 0.7)
    assert value == pytest.approx(expected[0], rel=1e-12)
    np.testing.assert_allclose(grad.ravel(), expected[1], rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(hessian, expected[2], rtol=1e-10, atol=1e-9)
    assert votes.objective(coef, votes.weights, 0.7) == pytest.approx(value, rel=1e-12)


def test_rows_and_order_are_kept_for_the_caller() -> None:
    matchups, y, c, w = _votes(n=200)
    rows = np.arange(0, 200, 3)
    votes = PairVotes(matchups, y, c, 5, w, rows=rows)
    assert sorted(votes.rows) == list(rows) and len(votes) == len(rows)
    np.testing.assert_array_equal(votes.contexts, c[votes.rows])
    np.testing.assert_array_equal(votes.weights, w[votes.rows])
    pairs = np.sort(matchups[votes.rows], axis=1)
    key = pairs[:, 0] * 5 + pairs[:, 1]
    assert np.all(np.diff(key) >= 0)  # grouped by pair


def test_newton_equals_scikit_learn_on_the_design() -> None:
    """The same penalised optimum as a logistic regression on the design's rows, ties as
    half a win each way (scikit-learn run to a tight tolerance as the reference)."""
    matchups, y, c, w = _votes(seed=3)
    alpha = 0.5
    x = contextual_design(matchups, c, 5)
    tie = y == 0.5
    rows = np.r_[np.arange(len(y)), np.flatnonzero(tie)]
    labels = np.r_[(y >= 0.5).astype(int), np.zeros(tie.sum(), dtype=int)]
    sample = np.r_[np.where(tie, 0.5, 1.0) * w, 0.5 * w[tie]]
    reference = LogisticRegression(C=1 / alpha, fit_intercept=False, tol=1e-12, max_iter=10_000)
    reference.fit(x[rows], labels, sample_weight=sample)
    coef = newton_fit(PairVotes(matchups, y, c, 5, w), alpha)
    np.testing.assert_allclose(coef.ravel(), reference.coef_.ravel(), atol=1e-6)
    np.testing.assert_allclose(coef.mean(axis=0), 0.0, atol=1e-9)  # the optimum is centred


def test_lbfgs_for_large_problems_reaches_the_newton_optimum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    matchups, y, c, w = _votes(seed=4)
    votes = PairVotes(matchups, y, c, 5, w)
    newton = newton_fit(votes, 1.0)
    monkeypatch.setattr(pair_votes, "NEWTON_MAX_COEFFICIENTS", 0)
    lbfgs = newton_fit(votes, 1.0)
    np.testing.assert_allclose(lbfgs, newton, atol=1e-5)


def test_zero_weights_leave_votes_out_and_a_start_changes_nothing() -> None:
    matchups, y, c, w = _votes(seed=5)
    kept = np.random.default_rng(5).random(len(y)) < 0.7
    votes = PairVotes(matchups, y, c, 5, w)
    masked = newton_fit(votes, 0.3, weights=votes.weights * kept[votes.rows])
    alone = newton_fit(PairVotes(matchups[kept], y[kept], c[kept], 5, w[kept]), 0.3)
    np.testing.assert_allclose(masked, alone, atol=1e-8)
    started = newton_fit(votes, 0.3, weights=votes.weights * kept[votes.rows], start=masked + 0.5)
    np.testing.assert_allclose(started, alone, atol=1e-8)


def test_no_votes_give_zero_coefficients() -> None:
    votes = PairVotes(np.zeros((0, 2), dtype=int), np.zeros(0), np.zeros((0, 3)), 4)
    np.testing.assert_array_equal(newton_fit(votes, 1.0), np.zeros((4, 3)))


def test_sorting_in_place_keeps_the_callers_array_and_the_fit() -> None:
    matchups, y, c, w = _votes(seed=6)
    copied = PairVotes(matchups, y, c, 5, w)
    mine = c.copy()
    in_place = PairVotes(matchups, y, mine, 5, w, copy=False)
    assert in_place.contexts is mine  # no second array
    np.testing.assert_array_equal(mine, copied.contexts)  # the caller's rows, sorted
    np.testing.assert_array_equal(newton_fit(in_place, 0.4), newton_fit(copied, 0.4))


def test_a_borrowed_curvature_changes_the_path_not_the_optimum() -> None:
    """A fold's fit started from the fit of all votes with that fit's loss Hessian
    (scaled to the fold's weight) reaches the fold's own optimum."""
    matchups, y, c, w = _votes(seed=7)
    votes = PairVotes(matchups, y, c, 5, w)
    whole = newton_fit(votes, 0.5)
    kept = (np.arange(len(y)) % 4 != 0)[votes.rows]
    fold_weights = votes.weights * kept
    share = fold_weights.sum() / votes.weights.sum()
    borrowed = votes.loss_hessian(whole, votes.weights) * share
    fold = newton_fit(votes, 0.5, weights=fold_weights, start=whole, curvature=borrowed)
    fresh = newton_fit(votes, 0.5, weights=fold_weights)
    np.testing.assert_allclose(fold, fresh, atol=1e-7)
    far = newton_fit(votes, 0.5, weights=fold_weights, start=whole + 3.0, curvature=borrowed)
    np.testing.assert_allclose(far, fresh, atol=1e-7)  # a poor start: fresh Hessians take over


def test_votes_given_in_pair_order_are_kept_as_they_are() -> None:
    """Contexts written in :func:`pair_order` are stored as given (not gathered again)
    and fit as the same votes in any other order do."""
    matchups, y, c, w = _votes(seed=8)
    order = pair_votes.pair_order(matchups, 5)
    mine = c[order]
    kept = mine.copy()
    ordered = PairVotes(matchups[order], y[order], mine, 5, w[order], copy=False)
    assert ordered.contexts is mine
    np.testing.assert_array_equal(ordered.rows, np.arange(len(y)))
    np.testing.assert_array_equal(mine, kept)
    shuffled = PairVotes(matchups, y, c, 5, w)
    np.testing.assert_array_equal(shuffled.rows, order)
    np.testing.assert_allclose(newton_fit(ordered, 0.4), newton_fit(shuffled, 0.4), atol=1e-12)


def test_sorting_a_block_of_columns_at_a_time_equals_a_gather() -> None:
    rng = np.random.default_rng(9)
    c = rng.normal(size=(50, 2 * pair_votes.SORT_BLOCK + 3))
    order = rng.permutation(50)
    expected = c[order]
    pair_votes._sort_in_place(c, order)
    np.testing.assert_array_equal(c, expected)
