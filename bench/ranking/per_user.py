"""Benchmark B (issue 3): every user's ratings at once, 100,000 users and 2M votes.

Ours is :func:`ranking.users.fit_user_ratings` for Bradley-Terry with shrinkage ``"cv"``
(the default, which learns the prior strength) and ``"none"``, and for Elo, each timed in
a fresh process that also gives its peak memory. The reference is a per-user loop of
``choix.opt_pairwise`` over a random sample of users, extrapolated to all of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.common import Row, baseline_rss_mb, error_text, make_row, run_child, seconds_row
from bench.reference import choix_user_fit
from bench.synthetic import UserVotes, simulate_user_votes
from ranking.bt import DEFAULT_ALPHA

__all__ = ["FITS", "run"]

#: The fits benchmarked, as ``(method, shrinkage)``.
FITS: tuple[tuple[str, str], ...] = (("bt", "cv"), ("bt", "none"), ("elo", "cv"))
_DESCRIPTION = {
    ("bt", "cv"): "BT, shrinkage cv (learns the prior strength)",
    ("bt", "none"): "BT, no shrinkage",
    ("elo", "cv"): "online Elo per user, from the aggregate",
}
GOAL_S = 60.0
SEED = 0


@dataclass(frozen=True)
class _Plan:
    n_users: int
    reference_users: int
    one_process_per_fit: bool


_FULL = _Plan(100_000, 300, True)
_QUICK = _Plan(300, 10, False)


def run(quick: bool = False) -> list[Row]:
    """Run benchmark B; ``quick`` uses tiny data, one process for all fits, and no goal.

    Returns
    -------
    list of Row
        Time rows, then memory rows, then the reference's agreement with ours.
    """
    plan = _QUICK if quick else _FULL
    votes = simulate_user_votes(plan.n_users, seed=SEED)
    label = (
        f"synthetic: {votes.n_users:,} users, {votes.users.size:,} votes, "
        f"{votes.data.n_models} models"
    )
    sample = np.sort(np.random.default_rng(SEED).choice(votes.n_users, plan.reference_users, False))
    reference_s, reference = _choix_loop(votes, sample)
    extrapolated = reference_s / sample.size * votes.n_users
    reference_note = (
        f"reference: choix.opt_pairwise (Newton-CG, alpha {DEFAULT_ALPHA:g}) one user at a "
        f"time, ties as half (each vote written twice, a tie once each way), "
        f"{reference_s:.2f} s for {sample.size} random users, extrapolated to {votes.n_users:,}"
    )

    runs: dict[tuple[str, str], tuple[dict[str, Any], float]] = {}
    errors: dict[tuple[str, str], str] = {}
    groups = [[fit] for fit in FITS] if plan.one_process_per_fit else [list(FITS)]
    for group in groups:
        report = sample.tolist() if ("bt", "none") in group else []
        try:
            child = run_child(
                "user_fit",
                {"n_users": plan.n_users, "fits": group, "seed": SEED, "report_users": report},
            )
        except Exception as exc:
            errors.update(dict.fromkeys(group, error_text(exc)))
            continue
        for fit in group:
            runs[fit] = (child.result, child.peak_rss_mb)

    rows: list[Row] = []
    for fit in FITS:
        what = f"per-user fit: {_DESCRIPTION[fit]}"
        if fit in errors:
            rows.append(make_row(what, label, ours="error", met=False, notes=errors[fit]))
            continue
        result, _ = runs[fit]
        ours_s = float(result["times"]["/".join(fit)])
        prior_sd = result["prior_sd"]["/".join(fit)]
        learnt = "" if prior_sd is None else f"learnt prior sd {prior_sd:.1f} Elo; "
        rows.append(
            seconds_row(
                what,
                label,
                ours=ours_s,
                reference=extrapolated,
                goal_s=GOAL_S,
                quick=quick,
                notes=learnt + reference_note,
            )
        )
    rows += _memory_rows(runs, label, plan)
    if ("bt", "none") in runs:
        ours = np.asarray(runs[("bt", "none")][0]["ratings"]["bt/none"])
        difference = np.abs(ours - reference).max(axis=1)
        rows.append(
            make_row(
                "agreement: BT no shrinkage vs choix, max |difference| per user",
                f"the {sample.size} reference users",
                ours=f"{difference.max():.4f} Elo",
                notes=f"median over users {np.median(difference):.4f} Elo (choix's tol 1e-5)",
            )
        )
    return rows


def _choix_loop(votes: UserVotes, sample: np.ndarray) -> tuple[float, np.ndarray]:
    """Time the choix per-user loop over ``sample``; its Elo-scale ratings ``(len, k)``."""
    order = np.argsort(votes.users, kind="stable")
    starts = np.searchsorted(votes.users[order], np.arange(votes.n_users + 1))
    matchups, outcomes = votes.data.matchups[order], votes.data.outcomes[order]
    k = votes.data.n_models
    start = time.perf_counter()
    ratings = [
        choix_user_fit(
            k,
            matchups[starts[u] : starts[u + 1]],
            outcomes[starts[u] : starts[u + 1]],
            DEFAULT_ALPHA,
        )
        for u in sample
    ]
    return time.perf_counter() - start, np.array(ratings)


def _memory_rows(
    runs: dict[tuple[str, str], tuple[dict[str, Any], float]], label: str, plan: _Plan
) -> list[Row]:
    baseline = baseline_rss_mb()
    if plan.one_process_per_fit:
        groups = [(_DESCRIPTION[fit], [fit]) for fit in FITS if fit in runs]
    else:
        groups = [("all three fits in one process", [fit for fit in FITS if fit in runs])]
    rows = []
    for description, fits in groups:
        if not fits:
            continue
        result, peak = runs[fits[0]]
        rows.append(
            make_row(
                f"peak memory (RSS), fresh process: {description}",
                label,
                ours=f"{peak:,.0f} MB",
                notes=f"baseline: bare python + numpy + pandas import {baseline:,.0f} MB; after "
                f"imports and simulating the votes {result['rss_after_data_mb']:,.0f} MB",
            )
        )
    return rows
