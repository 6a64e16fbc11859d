"""Per-user Bradley-Terry as NumPy did it before issue 18: the reference of the kernels.

The batched damped Newton solver over all groups at once, its gradient and Hessians built
by ``bincount`` over every vote at every step, groups cut into batches of
:data:`_MAX_HESSIAN_ENTRIES` Hessian entries, and each fold of ``learn_alpha``'s
cross-validation fitted on its own at every ``alpha`` tried. ``tests/ranking/
test_bt_kernel.py`` checks :mod:`ranking.bt_kernel` and :mod:`ranking.bt_solver` against
it; benchmark N (:mod:`bench.ranking.per_user_bt`) times them against it.
"""

from __future__ import annotations

import math
from typing import Unpack

import numpy as np
import numpy.typing as npt
from scipy.special import expit
from scipy.stats import norm

from ranking.bt import DEFAULT_ALPHA, Posterior, VoteOptions, grouped_votes
from ranking.bt_solver import group_batches, pair_matrices
from ranking.pairwise import ELO_PER_NAT, to_elo_scale
from ranking.shrinkage import ALPHA_BOUNDS, search_log_alpha
from ranking.types import CENTER, FloatArray, IntArray, PairwiseData
from ranking.users import Shrinkage, aggregate_prior

__all__ = [
    "numpy_fit_bt_grouped",
    "numpy_fit_bt_posterior",
    "numpy_fit_user_bt",
    "numpy_learn_alpha",
]

#: Largest number of float64 Hessian entries the reference builds at once.
_MAX_HESSIAN_ENTRIES = 20_000_000


class _NumpyProblem:
    """``ranking.bt_solver.Problem`` before issue 18: ``bincount`` over every row."""

    def __init__(
        self,
        k: int,
        g: int,
        matchups: IntArray,
        y: FloatArray,
        w: FloatArray,
        groups: IntArray,
        mu: FloatArray,
        alpha: FloatArray,
    ) -> None:
        self.k, self.g = k, g
        self.a, self.b = matchups[:, 0], matchups[:, 1]
        self.y, self.w, self.groups, self.mu, self.alpha = y, w, groups, mu, alpha
        self.flat_a, self.flat_b = groups * k + self.a, groups * k + self.b

    def diff(self, theta: FloatArray) -> FloatArray:
        flat = theta.ravel()
        return flat[self.flat_a] - flat[self.flat_b]

    def objective(self, theta: FloatArray) -> FloatArray:
        d = self.diff(theta)
        loss = self.w * (self.y * np.logaddexp(0.0, -d) + (1.0 - self.y) * np.logaddexp(0.0, d))
        prior = 0.5 * self.alpha * np.sum((theta - self.mu) ** 2, axis=1)
        return np.bincount(self.groups, weights=loss, minlength=self.g) + prior

    def gradient(self, theta: FloatArray) -> FloatArray:
        r = self.w * (expit(self.diff(theta)) - self.y)
        size = self.g * self.k
        grad = np.bincount(self.flat_a, weights=r, minlength=size) - np.bincount(
            self.flat_b, weights=r, minlength=size
        )
        return grad.reshape(self.g, self.k) + self.alpha[:, None] * (theta - self.mu)

    def hessian(self, theta: FloatArray) -> FloatArray:
        p = expit(self.diff(theta))
        hess = pair_matrices(self.k, self.a, self.b, self.w * p * (1 - p), self.groups, self.g)
        idx = np.arange(self.k)
        hess[:, idx, idx] += self.alpha[:, None]
        return hess


def _numpy_newton(
    problem: _NumpyProblem, theta: FloatArray, max_iter: int, tol: float
) -> FloatArray:
    f = problem.objective(theta)
    for _ in range(max_iter):
        grad = problem.gradient(theta)
        step = np.linalg.solve(problem.hessian(theta), grad[..., None])[..., 0]
        decrement = np.sum(grad * step, axis=1)
        active = decrement > 2.0 * tol * (1.0 + np.abs(f))
        if not active.any():
            return theta
        step[~active] = 0.0
        noise = 1e-13 * (1.0 + np.abs(f))
        t = np.ones(problem.g)
        for _ in range(60):
            candidate = theta - t[:, None] * step
            f_new = problem.objective(candidate)
            ok = f_new <= f - 1e-4 * t * decrement * active + noise
            if ok.all():
                break
            t = np.where(ok, t, 0.5 * t)
        theta, f = candidate, np.minimum(f_new, f)
    raise RuntimeError(f"Bradley-Terry fit did not converge in {max_iter} Newton iterations.")


def _numpy_variances(hessian: FloatArray, alpha: FloatArray) -> tuple[FloatArray, FloatArray]:
    g, k, _ = hessian.shape
    c = np.maximum(np.trace(hessian, axis1=1, axis2=2) / k, 1e-12)
    inverse = np.linalg.inv(hessian + c[:, None, None] / k)
    diagonal = np.diagonal(inverse, axis1=1, axis2=2)
    absolute = diagonal + (1.0 / alpha - 1.0 / (alpha + c))[:, None] / k
    relative = (
        diagonal - 2.0 * inverse.sum(axis=2) / k + inverse.sum(axis=(1, 2))[:, None] / (k * k)
    )
    return absolute, relative


def numpy_fit_bt_posterior(
    n_models: int,
    matchups: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    *,
    max_iter: int = 100,
    tol: float = 1e-12,
    posterior: bool = True,
    **options: Unpack[VoteOptions],
) -> Posterior:
    """``ranking.bt.fit_bt_posterior`` before issue 18 (``posterior=False``: no Laplace).

    The arguments are read as the package reads them (:func:`ranking.bt.grouped_votes`);
    the solver is the one it replaced.
    """
    votes = grouped_votes(n_models, matchups, outcomes, weights, **options)  # type: ignore[arg-type]
    m, y, w, g = votes.matchups, votes.outcomes, votes.weights, votes.groups
    n_groups, mu, alphas, theta = votes.n_groups, votes.prior_mean, votes.alpha, votes.initial
    variance, relative = np.full((2, n_groups, n_models), np.nan)
    evidence = np.full(n_groups, np.nan)
    for start, stop, rows in group_batches(g, n_groups, n_models, _MAX_HESSIAN_ENTRIES):
        problem = _NumpyProblem(
            n_models, stop - start, m[rows], y[rows], w[rows], g[rows] - start,
            mu[start:stop], alphas[start:stop],
        )  # fmt: skip
        mode = _numpy_newton(problem, theta[start:stop], max_iter, tol)
        theta[start:stop] = mode
        if posterior:
            hessian = problem.hessian(mode)
            _, logdet = np.linalg.slogdet(hessian)
            variance[start:stop], relative[start:stop] = _numpy_variances(
                hessian, alphas[start:stop]
            )
            evidence[start:stop] = (
                -problem.objective(mode)
                + 0.5 * n_models * np.log(alphas[start:stop])
                - 0.5 * logdet
            )
    return Posterior(theta, variance, relative, evidence)


def numpy_fit_bt_grouped(
    n_models: int, matchups: npt.ArrayLike, outcomes: npt.ArrayLike, *args: object, **kw: object
) -> FloatArray:
    """``ranking.bt.fit_bt_grouped`` before issue 18."""
    fit = numpy_fit_bt_posterior(n_models, matchups, outcomes, *args, posterior=False, **kw)  # type: ignore[arg-type]
    return fit.theta


def numpy_learn_alpha(
    n_models: int,
    matchups: IntArray,
    outcomes: FloatArray,
    groups: IntArray,
    n_groups: int,
    prior_mean: npt.ArrayLike,
    *,
    method: str = "cv",
    bounds: tuple[float, float] = ALPHA_BOUNDS,
    max_groups: int = 10_000,
    folds: int = 5,
    rng: np.random.Generator | int | None = 0,
) -> float:
    """``ranking.shrinkage.learn_alpha`` before issue 18: each fold fitted on its own."""
    generator = np.random.default_rng(rng)
    groups = np.asarray(groups, dtype=np.intp)
    m = np.asarray(matchups, dtype=np.intp)
    y = np.asarray(outcomes)
    mu = np.broadcast_to(np.asarray(prior_mean, dtype=np.float64), (n_groups, n_models))
    if n_groups > max_groups:  # the subsample of ranking.shrinkage._subsample
        chosen = np.sort(generator.choice(n_groups, max_groups, replace=False))
        remap = np.full(n_groups, -1, dtype=np.intp)
        remap[chosen] = np.arange(max_groups)
        keep = remap[groups] >= 0
        m, y, groups, mu = m[keep], y[keep], remap[groups[keep]], mu[chosen]
    size = mu.shape[0]
    if method == "evidence":
        warm_e = np.array(mu)

        def negative_evidence(log_alpha: float) -> float:
            nonlocal warm_e
            fit = numpy_fit_bt_posterior(
                n_models, m, y, groups=groups, n_groups=size, prior_mean=mu,
                alpha=math.exp(log_alpha), initial_params=warm_e,
            )  # fmt: skip
            warm_e = fit.theta
            return -float(fit.log_evidence.sum())

        return search_log_alpha(negative_evidence, bounds)

    fold = generator.integers(0, folds, size=len(y))
    warm = [np.array(mu) for _ in range(folds)]

    def held_out_loss(log_alpha: float) -> float:
        total = 0.0
        for f in range(folds):
            train, test = fold != f, fold == f
            theta = numpy_fit_bt_grouped(
                n_models, m[train], y[train], groups=groups[train], n_groups=size,
                prior_mean=mu, alpha=math.exp(log_alpha), initial_params=warm[f],
            )  # fmt: skip
            warm[f] = theta
            d = np.take_along_axis(theta[groups[test]], m[test], axis=1)
            diff, yt = d[:, 0] - d[:, 1], y[test]
            total += float(
                np.sum(yt * np.logaddexp(0.0, -diff) + (1.0 - yt) * np.logaddexp(0.0, diff))
            )
        return total / len(y)

    return search_log_alpha(held_out_loss, bounds)


def numpy_fit_user_bt(
    data: PairwiseData,
    users: IntArray,
    n_users: int,
    shrinkage: Shrinkage,
    *,
    prior: FloatArray | None = None,
    confidence: float = 0.95,
    rng: int = 0,
) -> tuple[FloatArray, FloatArray, FloatArray, float]:
    """``fit_user_ratings(method="bt")`` before issue 18: ratings, lower, upper, alpha."""
    shape = (n_users, data.n_models)
    if shrinkage == "none":
        prior_elo = np.full(shape, CENTER)
    else:
        target = aggregate_prior(data, "bt") if prior is None else prior
        prior_elo = np.array(np.broadcast_to(target, shape))
    mu = (prior_elo - CENTER) / ELO_PER_NAT
    strength = DEFAULT_ALPHA
    if shrinkage != "none":
        strength = numpy_learn_alpha(
            data.n_models, data.matchups, data.outcomes, users, n_users, mu,
            method=shrinkage, rng=rng,
        )  # fmt: skip
    fit = numpy_fit_bt_posterior(
        data.n_models, data.matchups, data.outcomes, groups=users, n_groups=n_users,
        prior_mean=mu, alpha=strength,
    )  # fmt: skip
    variance = fit.relative_variance if shrinkage == "none" else fit.variance
    half = float(norm.ppf(0.5 + confidence / 2.0)) * np.sqrt(variance)
    return (
        to_elo_scale(fit.theta),
        to_elo_scale(fit.theta - half),
        to_elo_scale(fit.theta + half),
        strength,
    )
