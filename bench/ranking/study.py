"""Benchmark C: the study's per-user agreement figures, reproduced and explained.

The study (Garbacea, Wang and Tan, 2026) reports that per-user Bradley-Terry rankings
agree with the aggregate at a mean Spearman of 0.04 (57% of users at or below 0.1),
and per-user Elo at 0.43. Here the same per-user analysis runs on simulated users with
known truth, four ways:

* the study's way: FastChat's ``compute_mle_elo`` (``elo_analysis.py``, 2024) fitted
  to one user's votes at a time, as a per-user analysis built on FastChat would do;
* our plain per-user Bradley-Terry (``--shrinkage none``) and Elo;
* our shrunk per-user Bradley-Terry (the default).

Spearman is against the aggregate Bradley-Terry ranking of all votes, over the models the
user voted on, for users with at least ``MIN_VOTES`` votes.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from bench.common import Row, make_row
from data.simulate import simulate
from ranking.analysis import analyse_users
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.types import Method
from ranking.users import Shrinkage

__all__ = ["MIN_VOTES", "fastchat_compute_mle_elo", "run"]

MIN_VOTES = 10
SCALE, BASE, INIT_RATING = 400.0, 10.0, 1000.0


def fastchat_compute_mle_elo(battles: pd.DataFrame) -> pd.Series:
    """FastChat's ``compute_mle_elo`` (2024), its logic kept line for line.

    Three pivot tables (wins of a, ties, wins of b) are combined with pandas alignment,
    so a pair that a sparse log holds in one orientation only becomes NaN and is skipped;
    the unpenalised logistic regression then fits what is left.
    """
    wins_a = pd.pivot_table(
        battles[battles["winner"] == "model_a"],
        index="model_a", columns="model_b", aggfunc="size", fill_value=0,
    )  # fmt: skip
    tie_rows = battles[battles["winner"].isin(["tie", "tie (bothbad)"])]
    if len(tie_rows) == 0:
        ties = pd.DataFrame(0, index=wins_a.index, columns=wins_a.columns)
    else:
        ties = pd.pivot_table(
            tie_rows, index="model_a", columns="model_b", aggfunc="size", fill_value=0
        )
        ties = ties + ties.T
    wins_b = pd.pivot_table(
        battles[battles["winner"] == "model_b"],
        index="model_a", columns="model_b", aggfunc="size", fill_value=0,
    )  # fmt: skip
    table = wins_a * 2 + wins_b.T * 2 + ties
    models = pd.Series(np.arange(len(table.index)), index=table.index)
    p = len(models)
    x = np.zeros([p * (p - 1) * 2, p])
    y = np.zeros(p * (p - 1) * 2)
    row, weights = 0, []
    for m_a in table.index:
        for m_b in table.columns:
            if m_a == m_b:
                continue
            if math.isnan(table.loc[m_a, m_b]) or math.isnan(table.loc[m_b, m_a]):
                continue
            x[row, models[m_a]], x[row, models[m_b]] = math.log(BASE), -math.log(BASE)
            y[row] = 1.0
            weights.append(table.loc[m_a, m_b])
            x[row + 1, models[m_a]], x[row + 1, models[m_b]] = math.log(BASE), -math.log(BASE)
            weights.append(table.loc[m_b, m_a])
            row += 2
    fit = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.fit(x[:row], y[:row], sample_weight=weights)
    return pd.Series(SCALE * fit.coef_[0] + INIT_RATING, index=models.index)


def _fastchat_agreement(
    battles: pd.DataFrame, aggregate: dict[str, float]
) -> tuple[np.ndarray, int]:
    """Per-user Spearman of FastChat's fit with the aggregate, and how many users failed.

    FastChat's function raises for a user whose pivot tables are not square (a model seen
    only as ``model_b``, say: ``KeyError``) or hold one class (``ValueError``).
    """
    rhos, failed = [], 0
    for _, votes in battles.groupby("user_id", observed=True):
        if len(votes) < MIN_VOTES:
            continue
        try:
            ratings = fastchat_compute_mle_elo(votes)
        except (KeyError, ValueError):
            failed += 1
            continue
        with warnings.catch_warnings():  # all-equal ratings: no correlation, left out
            warnings.simplefilter("ignore")
            rho = spearmanr(ratings.to_numpy(), [aggregate[m] for m in ratings.index]).statistic
        if np.isfinite(rho):
            rhos.append(rho)
    return np.array(rhos), failed


def _figures(rho: np.ndarray) -> str:
    return f"mean {rho.mean():.3f}, share ≤ 0.1 {np.mean(rho <= 0.1):.0%} ({rho.size} users)"


def run(quick: bool = False) -> list[Row]:
    """Run benchmark C; ``quick`` uses 40 users."""
    n_users, per_user = (40, 30) if quick else (400, 60)
    sim = simulate(n_users, per_user, 15, rng=0)
    label = f"plb simulate: {n_users} users x ~{per_user} votes, 15 models"
    data = pairwise_from_battles(sim.battles)
    codes, names = user_codes(sim.battles)
    rows: list[Row] = []
    fits: list[tuple[Method, Shrinkage]] = [("bt", "none"), ("elo", "none"), ("bt", "cv")]
    analyses = {
        (method, shrinkage): analyse_users(
            data, codes, names, method=method, shrinkage=shrinkage, min_battles=MIN_VOTES
        )
        for method, shrinkage in fits
    }
    study, failed = _fastchat_agreement(sim.battles, analyses[("bt", "none")].aggregate.ratings)
    rows.append(
        make_row(
            "per-user BT the study's way: FastChat compute_mle_elo per user",
            label,
            ours=_figures(study),
            notes=f"the study reports mean 0.04, 57% at or below 0.1; FastChat's function "
            f"raised for {failed} more users (pivot tables not square), left out",
        )
    )
    for (method, shrinkage), analysis in analyses.items():
        keep = (analysis.ratings.n_battles >= MIN_VOTES) & np.isfinite(analysis.spearman)
        rows.append(
            make_row(
                f"per-user {method.upper()}, plb users --shrinkage {shrinkage}",
                label,
                ours=_figures(analysis.spearman[keep]),
                notes="the study reports Elo at mean 0.43" if method == "elo" else "",
            )
        )
    return rows
