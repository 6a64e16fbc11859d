"""The style-controlled board beside the raw one, fitted on the same votes with the same
weights, prior and interval method (:func:`fit_style_leaderboard`), so that the two
differ by the control alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ranking.bt import DEFAULT_ALPHA
from ranking.intervals.summary import normal_intervals, percentile_intervals
from ranking.leaderboard import build_leaderboard, fit_leaderboard
from ranking.odds import gaussian_draws, rank_odds
from ranking.pairwise import ELO_PER_NAT, ModelCounts, model_counts, to_elo_scale
from ranking.style_control.fit import fit_style_bt, style_covariance
from ranking.style_control.results import StyleCoefficient, StyleControl
from ranking.types import FloatArray, Interval, Matchups, Outcomes, PairwiseData

__all__ = [
    "fit_style_leaderboard",
]


def _bootstrap(
    k: int,
    m: Matchups,
    y: Outcomes,
    x: FloatArray,
    w: FloatArray,
    params: FloatArray,
    rounds: int,
    rng: np.random.Generator,
    alpha: float,
) -> FloatArray:
    """``(rounds, k + p)`` fits of multinomial bootstrap replicates of the votes."""
    total = int(round(w.sum()))
    counts = rng.multinomial(total, w / w.sum(), size=rounds).astype(np.float64)
    out = np.empty((rounds, params.shape[0]))
    for i in range(rounds):
        theta, beta = fit_style_bt(k, m, y, x, counts[i], alpha=alpha, initial_params=params)
        out[i] = np.concatenate([theta, beta])
    return out


def fit_style_leaderboard(
    data: PairwiseData,
    differences: FloatArray,
    features: Sequence[str],
    *,
    scaling: str = "",
    interval: Interval | None = None,
    rounds: int = 100,
    confidence: float = 0.95,
    anchor: tuple[str, float] | None = None,
    rng: np.random.Generator | int | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_votes: int | None = None,
) -> StyleControl:
    """The style-controlled Bradley-Terry leaderboard, and the raw one of the same votes.

    Parameters
    ----------
    data : PairwiseData
        One row per vote (not collapsed: each vote has its own covariates), as
        :func:`ranking.io.frames.pairwise_from_battles` makes them.
    differences : ndarray
        ``(n, p)`` style covariates of the votes, in the order of ``data``'s rows.
    features : sequence of str
        The ``p`` covariates' names. One that is zero on every vote gets no coefficient.
    scaling : str
        How the covariates were made, recorded in the result.
    interval : {"sandwich", "bootstrap", "none"}, optional
        As on the raw board; sandwich by default.
    rounds : int
        Bootstrap replicates.
    confidence : float
        Interval coverage, in (0, 1).
    anchor : (str, float), optional
        Pin this model at this rating on both boards; otherwise each averages 1000.
    rng : numpy.random.Generator or int, optional
        Randomness of the bootstraps.
    alpha : float
        Prior precision of the strengths, the raw board's.
    min_votes : int, optional
        Rank only the models with at least this many votes, on both boards
        (:func:`ranking.leaderboard.fit_leaderboard`).

    Returns
    -------
    StyleControl
        The controlled board, the raw board, the coefficients (Elo points per unit).

    Raises
    ------
    ValueError
        On an unknown interval, a bad ``confidence``, covariates whose shape does not
        match the votes or the names, or an unknown anchor model.
    """
    x_all = np.asarray(differences, dtype=np.float64)
    n = data.outcomes.shape[0]
    if x_all.ndim != 2 or x_all.shape[0] != n or x_all.shape[1] != len(features):
        raise ValueError(
            f"Argument 'differences' must have shape ({n}, {len(features)}), not {x_all.shape}."
        )
    if interval not in (None, "sandwich", "bootstrap", "none"):
        raise ValueError(
            f"Argument 'interval' must be 'sandwich', 'bootstrap' or 'none', not {interval!r}."
        )
    interval = "sandwich" if interval is None else interval
    generator = np.random.default_rng(rng)
    raw = fit_leaderboard(
        data,
        method="bt",
        interval=interval,
        rounds=rounds,
        confidence=confidence,
        anchor=anchor,
        rng=generator.spawn(1)[0],
        alpha=alpha,
        min_votes=min_votes,
    )
    names = tuple(row.model for row in raw.models)
    if not names:
        return StyleControl(raw, raw, (), scaling)
    index = np.full(data.n_models, -1, dtype=np.intp)
    ranked = np.array([data.models.index(name) for name in names], dtype=np.intp)
    index[ranked] = np.arange(ranked.size)
    among = (index[data.matchups[:, 0]] >= 0) & (index[data.matchups[:, 1]] >= 0)
    m, y, w = index[data.matchups[among]], data.outcomes[among], data.weights[among]
    varying = np.flatnonzero(np.any(x_all[among] != 0.0, axis=0))
    x = x_all[among][:, varying]
    k = ranked.size
    theta, beta = fit_style_bt(k, m, y, x, w, alpha=alpha)
    params = np.concatenate([theta, beta])
    odds = None
    if interval == "sandwich":
        covariance = style_covariance(theta, beta, m, y, x, w, alpha=alpha)
        lo, hi = normal_intervals(params, covariance, confidence)
        odds = rank_odds(gaussian_draws(theta, covariance[:k, :k]), confidence)
    elif interval == "bootstrap":
        samples = _bootstrap(k, m, y, x, w, params, rounds, generator, alpha)
        lo, hi = percentile_intervals(samples, confidence)
        odds = rank_odds(samples[:, :k], confidence)
    else:
        lo = hi = params
    point, lower, upper = to_elo_scale(theta), to_elo_scale(lo[:k]), to_elo_scale(hi[:k])
    if anchor is not None:
        shift = anchor[1] - point[names.index(anchor[0])]
        point, lower, upper = point + shift, lower + shift, upper + shift
    every = model_counts(data)
    counts = ModelCounts(
        every.battles[ranked], every.wins[ranked], every.losses[ranked], every.ties[ranked]
    )
    board = build_leaderboard(
        "bt",
        names,
        point,
        lower,
        upper,
        counts,
        n_battles=raw.n_battles,
        interval=interval,
        confidence=confidence,
        odds=odds,
    )
    board = replace(board, provisional=raw.provisional, min_votes=raw.min_votes)
    coefficients = tuple(
        StyleCoefficient(
            features[int(j)],
            float(ELO_PER_NAT * params[k + i]),
            float(ELO_PER_NAT * min(lo[k + i], params[k + i])),
            float(ELO_PER_NAT * max(hi[k + i], params[k + i])),
        )
        for i, j in enumerate(varying)
    )
    return StyleControl(board, raw, coefficients, scaling)
