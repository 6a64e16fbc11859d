"""Benchmark N (issue 18): per-user Bradley-Terry at kernel speed.

On 100,000 simulated users voting about 2,000,000 times over 15 models
(:func:`bench.synthetic.simulate_user_votes`): every user's Bradley-Terry fit
(:func:`ranking.users.fit_user_ratings`) with shrinkage ``"cv"`` (the default: learns the
prior precision by 5-fold cross-validation on 10,000 users, then fits all), ``"evidence"``
and ``"none"``, and ``learn_alpha``'s cross-validation alone, each against the NumPy
implementation they replaced (:mod:`tests.reference.per_user_bt`), run in the same process:
the batched damped Newton solver over all groups at once, its gradient and Hessians
built by ``bincount`` over every vote at every step, groups cut into batches of 20M
Hessian entries, and each fold of the cross-validation fitted on its own at every
``alpha`` tried. The table gives the largest difference of the ratings and interval
bounds between the two. Last, what the first call costs: compiling in a fresh process
with an empty numba cache, and loading from it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from bench.common import Row, best_of, first_call_row, make_row, seconds_row
from bench.synthetic import simulate_user_votes
from ranking.bt import DEFAULT_ALPHA
from ranking.pairwise import ELO_PER_NAT
from ranking.shrinkage import learn_alpha
from ranking.types import CENTER
from ranking.users import Shrinkage, aggregate_prior, fit_user_ratings
from tests.reference.per_user_bt import (
    numpy_fit_user_bt,
    numpy_learn_alpha,
)

__all__ = ["run"]

T = TypeVar("T")

GOAL_S = 3.0
EQUAL_ELO = 1e-6
SEED = 0
N_MODELS = 15


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
            seconds_row(
                f"per-user BT, {what} (`fit_user_ratings`)",
                label,
                ours=ours_s,
                reference=reference_s,
                goal_s=GOAL_S,
                quick=quick,
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
