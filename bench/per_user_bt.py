"""Benchmark N (issue 18): per-user Bradley-Terry at kernel speed.

On 100,000 simulated users voting about 2,000,000 times over 15 models
(:func:`bench.synthetic.simulate_user_votes`): every user's Bradley-Terry fit
(:func:`ranking.users.fit_user_ratings`) with shrinkage ``"cv"`` (the default: learns the
prior precision by 5-fold cross-validation on 10,000 users, then fits all), ``"evidence"``
and ``"none"``, and ``learn_alpha``'s cross-validation alone, each against the NumPy
implementation they replaced, kept here as the reference and run in the same process:
the batched damped Newton solver over all groups at once, its gradient and Hessians
built by ``bincount`` over every vote at every step, groups cut into batches of 20M
Hessian entries, and each fold of the cross-validation fitted on its own at every
``alpha`` tried. The table gives the largest difference of the ratings and interval
bounds between the two. Last, what the first call costs: compiling in a fresh process
with an empty numba cache, and loading from it.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, Unpack

import numpy as np
import numpy.typing as npt
from scipy.special import expit
from scipy.stats import norm

from bench.common import Row, best_of, first_call_row, make_row
from bench.synthetic import simulate_user_votes
from ranking.bt import DEFAULT_ALPHA, Posterior, VoteOptions, grouped_votes
from ranking.bt_solver import group_batches, pair_matrices
from ranking.pairwise import ELO_PER_NAT, to_elo_scale
from ranking.shrinkage import ALPHA_BOUNDS, learn_alpha, search_log_alpha
from ranking.types import CENTER, FloatArray, IntArray, PairwiseData
from ranking.users import Shrinkage, aggregate_prior, fit_user_ratings

__all__ = [
    "numpy_fit_bt_grouped",
    "numpy_fit_bt_posterior",
    "numpy_fit_user_bt",
    "numpy_learn_alpha",
    "run",
]

T = TypeVar("T")

GOAL_S = 3.0
EQUAL_ELO = 1e-6
SEED = 0
N_MODELS = 15
#: Largest number of float64 Hessian entries the reference builds at once.
_MAX_HESSIAN_ENTRIES = 20_000_000


@dataclass(frozen=True)
class _Plan:
    users: int
    repeat: int


_FULL = _Plan(100_000, 3)
_QUICK = _Plan(500, 1)

_FIRST_CALL = """
import json, sys, time
import numpy as np
start = time.perf_counter()
from ranking.bt import fit_bt_grouped, fit_bt_posterior
from ranking.shrinkage import learn_alpha
imported = time.perf_counter()
m, y, g = np.array([[0, 1], [1, 2], [2, 0]]), np.array([1.0, 0.5, 0.0]), np.array([0, 1, 1])
fit_bt_posterior(3, m, y, groups=g, n_groups=2)
learn_alpha(3, m, y, g, 2, np.zeros(3), method="evidence")
learn_alpha(3, m, y, g, 2, np.zeros(3), method="cv")
json.dump({"import": imported - start, "calls": time.perf_counter() - imported}, sys.stdout)
"""


# -- today's implementation (before issue 18), the reference ---------------------------


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


# -- the benchmark ---------------------------------------------------------------------


def run(quick: bool = False) -> list[Row]:
    """Run benchmark N; ``quick`` uses tiny data and evaluates no goal."""
    plan = _QUICK if quick else _FULL
    votes = simulate_user_votes(plan.users, n_models=N_MODELS, mean_votes=20.0, seed=SEED)
    data, users, n_users = votes.data, votes.users, votes.n_users
    label = f"{n_users:,} users, {users.size:,} votes, {N_MODELS} models"
    prior = aggregate_prior(data, "bt")
    rows: list[Row] = []
    worst = 0.0
    fits: tuple[tuple[Shrinkage, str], ...] = (
        ("cv", "shrinkage cv (alpha by 5-fold CV on at most 10,000 users, then all fitted)"),
        ("evidence", "shrinkage evidence (learns alpha by the Laplace evidence)"),
        ("none", "no shrinkage (alpha 1e-3, each user alone)"),
    )
    for shrinkage, what in fits:
        ours_s, ours_cpu, ours = _timed(
            functools.partial(
                fit_user_ratings, data, users, n_users, shrinkage=shrinkage, prior=prior
            ),
            plan.repeat,
        )
        reference_s, (ratings, lower, upper, alpha) = best_of(
            functools.partial(numpy_fit_user_bt, data, users, n_users, shrinkage, prior=prior), 1
        )
        difference = max(
            float(np.abs(ours.ratings - ratings).max()),
            float(np.abs(ours.lower - lower).max()),
            float(np.abs(ours.upper - upper).max()),
        )
        worst = max(worst, difference)
        ours_alpha = (ELO_PER_NAT / ours.prior_sd) ** 2 if ours.prior_sd else DEFAULT_ALPHA
        rows.append(
            make_row(
                f"per-user BT, {what} (`fit_user_ratings`)",
                label,
                ours=ours_s,
                reference=reference_s,
                goal=f"≤ {GOAL_S:.0f} s",
                met=ours_s <= GOAL_S if not quick else None,
                notes=(
                    f"ours best of {plan.repeat} (CPU {ours_cpu:.2f} s, threads summed), "
                    f"reference once; largest |difference| of "
                    f"ratings and bounds {difference:.1e} Elo; alpha {ours_alpha:.6g} "
                    f"(reference {alpha:.6g})"
                ),
            )
        )
    mu = (prior - CENTER) / ELO_PER_NAT
    ours_s, ours_cpu, ours_alpha = _timed(
        lambda: learn_alpha(N_MODELS, data.matchups, data.outcomes, users, n_users, mu),
        plan.repeat,
    )
    reference_s, alpha = best_of(
        lambda: numpy_learn_alpha(N_MODELS, data.matchups, data.outcomes, users, n_users, mu),
        1,
    )
    rows.append(
        make_row(
            "of which `learn_alpha`, 5-fold CV (all folds one problem, collapsed once)",
            f"{min(n_users, 10_000):,} users sampled",
            ours=ours_s,
            reference=reference_s,
            notes=f"ours CPU {ours_cpu:.2f} s; alpha {ours_alpha:.8g}, reference {alpha:.8g}",
        )
    )
    rows.append(
        make_row(
            "per-user BT: equal to the NumPy implementation",
            "the three fits above",
            ours=f"{worst:.1e} Elo",
            goal=f"≤ {EQUAL_ELO:g} Elo",
            met=worst <= EQUAL_ELO if not quick else None,
            notes="largest |difference| over users, models, ratings and interval bounds",
        )
    )
    rows.append(
        first_call_row(
            _FIRST_CALL,
            "Bradley-Terry kernels",
            "3 models, 3 votes",
            "ranking.bt and ranking.shrinkage",
        )
    )
    return rows


def _timed(function: Callable[[], T], repeat: int) -> tuple[float, float, T]:
    """Like :func:`bench.common.best_of`, with the CPU time of the fastest run."""
    best, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return best, cpu, result
