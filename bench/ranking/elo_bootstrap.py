"""Benchmark L (issue 18): the aggregate Elo bootstrap and per-user online Elo, compiled.

On 100,000 simulated users voting about 2,000,000 times over 15 models
(:func:`bench.synthetic.simulate_user_votes`): the 100-round Elo bootstrap of the
aggregate leaderboard (:mod:`ranking.intervals.elo_bootstrap`) and every user's online
Elo (:func:`ranking.elo.online_elo_grouped`), each against the NumPy implementation they
replaced, kept here as the reference (every group in step, one vectorised update a step
after a sort by position in group; a bootstrap batch's rows all drawn at once). The
reference bootstrap times one batch of the plan and scales it to all rounds (every batch
of the plan but the last has the same size, so the same cost); both bootstraps draw the
same replicates, and the table gives their largest difference. Last, what the first call
costs: compiling in a fresh process with an empty numba cache, and loading from it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from bench.common import Row, best_of, first_call_row, make_row, seconds_row
from bench.synthetic import simulate_user_votes
from ranking.elo import online_elo_grouped
from ranking.intervals.elo_bootstrap import bootstrap_elo, elo_bootstrap_plan
from tests.reference.elo import numpy_bootstrap_elo_batch, numpy_online_elo_grouped

__all__ = ["numpy_bootstrap_elo_batch", "numpy_online_elo_grouped", "run"]

ROUNDS = 100
GOAL_S = 10.0
SEED = 0
N_MODELS = 15


@dataclass(frozen=True)
class _Plan:
    users: int
    rounds: int
    repeat: int


_FULL = _Plan(100_000, ROUNDS, 2)
_QUICK = _Plan(2_000, 5, 1)

_FIRST_CALL = """
import json, sys, time
import numpy as np
start = time.perf_counter()
from ranking.elo import online_elo_grouped
from ranking.intervals.elo_bootstrap import bootstrap_elo_batch
imported = time.perf_counter()
m, y = np.array([[0, 1], [1, 2]]), np.array([1.0, 0.5])
bootstrap_elo_batch(3, m, y, 2, np.random.default_rng(0))
online_elo_grouped(3, m, y, np.array([0, 1]), 2)
json.dump({"import": imported - start, "calls": time.perf_counter() - imported}, sys.stdout)
"""


def run(quick: bool = False) -> list[Row]:
    """Run benchmark L; ``quick`` uses tiny data and evaluates no goal."""
    plan = _QUICK if quick else _FULL
    votes = simulate_user_votes(plan.users, n_models=N_MODELS, mean_votes=20.0, seed=SEED)
    m, y = votes.data.matchups, votes.data.outcomes
    n = len(y)
    label = f"{n:,} simulated votes, {N_MODELS} models"

    ours_s, ours = best_of(
        lambda: bootstrap_elo(N_MODELS, m, y, plan.rounds, np.random.default_rng(SEED)),
        plan.repeat,
    )
    batches = elo_bootstrap_plan(n, plan.rounds, np.random.default_rng(SEED))
    size, child = batches[0]
    start = time.perf_counter()
    reference = numpy_bootstrap_elo_batch(N_MODELS, m, y, size, child)
    reference_s = (time.perf_counter() - start) * plan.rounds / size
    difference = float(np.abs(ours[:size] - reference).max())
    rows = [
        seconds_row(
            f"Elo bootstrap, {plan.rounds} rounds (`bootstrap_elo`)",
            label,
            ours=ours_s,
            reference=reference_s,
            goal_s=GOAL_S,
            quick=quick,
            notes=(
                f"reference: today's NumPy batch of {size} rounds timed once, ×"
                f"{plan.rounds / size:.3g}; ours: {len(batches)} batch(es), best of {plan.repeat}"
            ),
        ),
        make_row(
            "Elo bootstrap: same replicates as the NumPy implementation",
            f"batch 1, {size} rounds",
            ours=f"{difference:.2e} Elo",
            goal="≤ 1e-9 Elo",
            met=difference <= 1e-9 if not quick else None,
            notes="largest |difference| over replicates and models (same seed, same draws)",
        ),
    ]

    users, n_users = votes.users, votes.n_users
    ours_s, per_user = best_of(
        lambda: online_elo_grouped(N_MODELS, m, y, users, n_users), plan.repeat
    )
    reference_s, expected = best_of(
        lambda: numpy_online_elo_grouped(N_MODELS, m, y, users, n_users), plan.repeat
    )
    steps = int(np.bincount(users).max())
    rows.append(
        make_row(
            "per-user online Elo (`online_elo_grouped`)",
            f"{n_users:,} users, {n:,} votes",
            ours=ours_s,
            reference=reference_s,
            notes=(
                f"reference: today's NumPy, {steps} steps in step; largest |difference| "
                f"{float(np.abs(per_user - expected).max()):.1e} Elo"
            ),
        )
    )
    rows.append(
        first_call_row(
            _FIRST_CALL, "Elo kernels", "3 models, 2 votes", "ranking.intervals.elo_bootstrap"
        )
    )
    return rows
