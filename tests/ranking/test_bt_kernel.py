"""The compiled Bradley-Terry solver against the NumPy implementation it replaced (issue 18).

The references are ``fit_bt_posterior``, ``learn_alpha`` and the per-user Bradley-Terry
fit as they were before the kernel, in :mod:`tests.reference.per_user_bt` (benchmark N
times the two against each other): a batched Newton over all groups at once, gradients
and Hessians by ``bincount`` over every vote. The kernel runs each group through the same
iterates from per-group pair counts; sums in another order, so results agree to rounding.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from ranking import bt_kernel, bt_solver
from ranking.bt import fit_bt_grouped, fit_bt_posterior
from ranking.bt_solver import Problem, newton
from ranking.pair_counts import collect_pairs
from ranking.pairwise import ELO_PER_NAT
from ranking.shrinkage import learn_alpha
from ranking.users import fit_user_ratings
from tests.conftest import simulate_users, simulate_votes
from tests.reference.per_user_bt import (
    _NumpyProblem,
    numpy_fit_bt_grouped,
    numpy_fit_bt_posterior,
    numpy_fit_user_bt,
    numpy_learn_alpha,
)

#: Equal to today's within this many Elo points (the issue's bar), in natural-log units.
TOL_NATS = 1e-6 / ELO_PER_NAT


def _grouped_votes(
    n_models: int, n_votes: int, n_groups: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Votes over ``n_models - 1`` models (the last never seen), spread over groups."""
    data, _ = simulate_votes(n_models - 1, n_votes, seed=seed, tie_share=0.3)
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, n_groups, size=n_votes)
    weights = rng.multinomial(n_votes, np.full(n_votes, 1.0 / n_votes)).astype(float)
    return data.matchups, data.outcomes, weights, groups


@pytest.mark.parametrize(
    ("n_models", "n_votes", "n_groups", "alpha", "seed"),
    [(4, 300, 5, 1e-3, 0), (6, 40, 9, 2.0, 1), (15, 3_000, 40, 0.3, 2), (3, 1, 2, 1e-3, 3)],
)
def test_posterior_equals_the_numpy_implementation(
    n_models: int, n_votes: int, n_groups: int, alpha: float, seed: int
) -> None:
    m, y, w, g = _grouped_votes(n_models, n_votes, n_groups, seed)
    rng = np.random.default_rng(seed + 1)
    mu = rng.normal(scale=0.3, size=(n_groups, n_models))
    alphas = alpha * rng.uniform(0.5, 2.0, size=n_groups)
    start = mu + rng.normal(scale=0.5, size=mu.shape)  # unseen models start off the prior
    kwargs: dict[str, Any] = dict(
        groups=g, n_groups=n_groups, prior_mean=mu, alpha=alphas, initial_params=start
    )
    for weights in (None, w):  # unit weights, and multinomial ones with zeros
        ours = fit_bt_posterior(n_models, m, y, weights, **kwargs)
        ref = numpy_fit_bt_posterior(n_models, m, y, weights, **kwargs)
        np.testing.assert_allclose(ours.theta, ref.theta, rtol=0, atol=TOL_NATS)
        np.testing.assert_allclose(ours.variance, ref.variance, rtol=1e-8)
        np.testing.assert_allclose(ours.relative_variance, ref.relative_variance, rtol=1e-7)
        np.testing.assert_allclose(ours.log_evidence, ref.log_evidence, rtol=1e-10)
        # never seen: back to the prior mean, from wherever it started
        np.testing.assert_allclose(ours.theta[:, -1], mu[:, -1], rtol=0, atol=1e-9)


def test_grouped_fit_with_self_battles_equals_the_numpy_implementation() -> None:
    m, y, w, g = _grouped_votes(5, 200, 4, 7)
    m = np.vstack([m, [[2, 2], [0, 0]]])
    y, w, g = np.append(y, [1.0, 0.5]), np.append(w, [3.0, 1.0]), np.append(g, [1, 3])
    ours = fit_bt_grouped(5, m, y, w, groups=g, n_groups=4)
    ref = numpy_fit_bt_grouped(5, m, y, w, groups=g, n_groups=4)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL_NATS)


def test_pair_counts_give_the_objective_and_derivatives_of_the_rows() -> None:
    m, y, w, g = _grouped_votes(6, 500, 7, 4)
    rng = np.random.default_rng(5)
    mu, alpha = rng.normal(size=(7, 6)), rng.uniform(0.1, 2.0, size=7)
    theta = rng.normal(size=(7, 6))
    ours = Problem(6, 7, m, y, w, g, mu, alpha)
    ref = _NumpyProblem(6, 7, m, y, w, g, mu, alpha)
    np.testing.assert_allclose(ours.objective(theta), ref.objective(theta), rtol=1e-12)
    np.testing.assert_allclose(ours.gradient(theta), ref.gradient(theta), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.hessian(theta), ref.hessian(theta), rtol=1e-10, atol=1e-12)
    counts = collect_pairs(6, m, y, w, g, 7)
    # one row per group and unordered pair voted on, the weight conserved
    assert counts.first.size <= 7 * 15
    assert np.all(counts.first <= counts.second)
    assert counts.total.sum() == pytest.approx(w.sum())
    assert np.all((counts.wins >= 0) & (counts.wins <= counts.total))


def test_threads_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    m, y, w, g = _grouped_votes(5, 400, 30, 6)
    alone = fit_bt_posterior(5, m, y, w, groups=g, n_groups=30, alpha=0.5)
    monkeypatch.setattr(bt_solver, "_GROUPS_PER_THREAD", 4)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    ranges: list[int] = []

    def loop(pairs: tuple, theta: np.ndarray, *args: Any) -> None:
        ranges.append(theta.shape[0])
        bt_kernel.newton_loop(pairs, theta, *args)

    monkeypatch.setattr(bt_solver, "newton_loop", loop)
    threaded = fit_bt_posterior(5, m, y, w, groups=g, n_groups=30, alpha=0.5)
    assert sorted(ranges) == [10, 10, 10]
    for field in ("theta", "variance", "relative_variance", "log_evidence"):
        np.testing.assert_array_equal(getattr(threaded, field), getattr(alone, field))


@pytest.mark.parametrize("method", ["cv", "evidence"])
def test_learn_alpha_equals_the_numpy_implementation(method: str) -> None:
    data, users, _, _ = simulate_users(60, 30, 6, seed=3, tie_share=0.2)
    mu = np.zeros(6)
    args = (6, data.matchups, data.outcomes, users, 60, mu)
    ours = learn_alpha(*args, method=method, max_groups=40, rng=1)
    ref = numpy_learn_alpha(*args, method=method, max_groups=40, rng=1)
    assert ours == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("shrinkage", ["cv", "evidence", "none"])
def test_per_user_fit_equals_the_numpy_implementation(shrinkage: str) -> None:
    data, users, _, _ = simulate_users(80, 25, 7, seed=8, tie_share=0.2)
    ours = fit_user_ratings(data, users, 80, shrinkage=shrinkage)  # type: ignore[arg-type]
    ratings, lower, upper, _ = numpy_fit_user_bt(data, users, 80, shrinkage)  # type: ignore[arg-type]
    for got, want in ((ours.ratings, ratings), (ours.lower, lower), (ours.upper, upper)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_not_converging_and_bad_indices_are_refused() -> None:
    m, y, w, g = _grouped_votes(4, 100, 3, 9)
    problem = Problem(4, 3, m, y, w, g, np.zeros((3, 4)), np.full(3, 1e-3))
    with pytest.raises(RuntimeError, match="did not converge in 1 Newton"):
        newton(problem, np.zeros((3, 4)), 1, 1e-12)
    with pytest.raises(ValueError, match="'groups'"):
        collect_pairs(4, m, y, w, g, 2)
    with pytest.raises(ValueError, match="'matchups'"):
        collect_pairs(2, m, y, w, g, 3)
