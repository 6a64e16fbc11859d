"""Aggregate leaderboards: a point fit, its intervals and interval-aware ranks, together."""

from __future__ import annotations

import numpy as np

from ranking.bt import DEFAULT_ALPHA, fit_bt
from ranking.elo import K_FACTOR, online_elo
from ranking.intervals import (
    bootstrap_bt,
    bootstrap_elo,
    interval_ranks,
    percentile_intervals,
    sandwich_intervals,
)
from ranking.pairwise import ModelCounts, collapse, model_counts, to_elo_scale
from ranking.progress import Progress
from ranking.types import Interval, Leaderboard, Method, ModelRating, PairwiseData, Ratings

__all__ = ["DEFAULT_INTERVAL", "build_leaderboard", "fit_leaderboard"]

#: The interval each method gets when none is asked for.
DEFAULT_INTERVAL: dict[Method, Interval] = {"bt": "sandwich", "elo": "bootstrap"}


def _bt_ratings(
    votes: PairwiseData,
    interval: Interval,
    rounds: int,
    confidence: float,
    rng: np.random.Generator,
    alpha: float,
    progress: Progress | None,
) -> tuple[Ratings, Ratings, Ratings]:
    theta = fit_bt(votes.n_models, votes.matchups, votes.outcomes, votes.weights, alpha=alpha)
    if interval == "sandwich":
        lo, hi = sandwich_intervals(
            theta, votes.matchups, votes.outcomes, votes.weights, alpha=alpha, confidence=confidence
        )
    elif interval == "bootstrap":
        samples = bootstrap_bt(
            votes, rounds, rng, alpha=alpha, initial_params=theta, progress=progress
        )
        lo, hi = percentile_intervals(samples, confidence)
    else:
        lo = hi = theta
    return to_elo_scale(theta), to_elo_scale(lo), to_elo_scale(hi)


def _elo_ratings(
    data: PairwiseData,
    interval: Interval,
    rounds: int,
    confidence: float,
    rng: np.random.Generator,
    k: float,
    progress: Progress | None,
) -> tuple[Ratings, Ratings, Ratings]:
    if interval == "sandwich":
        raise ValueError(
            "Interval 'sandwich' needs a likelihood and applies to method 'bt' only; "
            "use 'bootstrap' for method 'elo'."
        )
    point = online_elo(data.n_models, data.matchups, data.outcomes, k=k)
    if interval == "bootstrap":
        samples = bootstrap_elo(
            data.n_models, data.matchups, data.outcomes, rounds, rng, k=k, progress=progress
        )
        lo, hi = percentile_intervals(samples, confidence)
        return point, lo, hi
    return point, point, point


def fit_leaderboard(
    data: PairwiseData,
    *,
    method: Method = "bt",
    interval: Interval | None = None,
    rounds: int = 100,
    confidence: float = 0.95,
    anchor: tuple[str, float] | None = None,
    rng: np.random.Generator | int | None = None,
    alpha: float = DEFAULT_ALPHA,
    k: float = K_FACTOR,
    progress: Progress | None = None,
) -> Leaderboard:
    """Fit an aggregate leaderboard with intervals and interval-aware ranks.

    Parameters
    ----------
    data : PairwiseData
        Unweighted votes in the order they happened (online Elo depends on it), as
        :func:`ranking.frames.pairwise_from_battles` makes them.
    method : {"bt", "elo"}
        Bradley-Terry maximum likelihood or online Elo.
    interval : {"sandwich", "bootstrap", "none"}, optional
        Sandwich for ``bt`` and bootstrap for ``elo`` by default.
    rounds : int
        Bootstrap replicates.
    confidence : float
        Interval coverage, in (0, 1).
    anchor : (str, float), optional
        Pin this model at this rating; otherwise ratings average 1000.
    rng : numpy.random.Generator or int, optional
        Randomness of the bootstrap.
    alpha : float
        Prior precision of the Bradley-Terry fit (see :mod:`ranking.bt`).
    k : float
        K-factor of online Elo.
    progress : Progress, optional
        Told of the bootstrap's rounds (stage ``"BT bootstrap"`` or ``"Elo bootstrap"``),
        when there is one.

    Returns
    -------
    Leaderboard
        Models sorted by rating, best first.

    Raises
    ------
    ValueError
        On an unknown method, interval or anchor model, a bad ``confidence``, or
        sandwich intervals asked of Elo.
    """
    if method not in DEFAULT_INTERVAL:
        raise ValueError(f"Argument 'method' must be 'bt' or 'elo', not {method!r}.")
    interval = DEFAULT_INTERVAL[method] if interval is None else interval
    if interval not in ("sandwich", "bootstrap", "none"):
        raise ValueError(
            f"Argument 'interval' must be 'sandwich', 'bootstrap' or 'none', not {interval!r}."
        )
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    if data.n_models == 0:
        raise ValueError("Argument 'data' holds no votes: there is nothing to rank.")
    generator = np.random.default_rng(rng)
    votes = collapse(data)
    if method == "bt":
        point, lower, upper = _bt_ratings(
            votes, interval, rounds, confidence, generator, alpha, progress
        )
    else:
        point, lower, upper = _elo_ratings(
            data, interval, rounds, confidence, generator, k, progress
        )

    if anchor is not None:
        name, value = anchor
        if name not in data.models:
            raise ValueError(f"Anchor model {name!r} is not among the {data.n_models} models.")
        shift = value - point[data.models.index(name)]
        point, lower, upper = point + shift, lower + shift, upper + shift

    return build_leaderboard(
        method,
        data.models,
        point,
        lower,
        upper,
        model_counts(votes),
        n_battles=int(round(data.n_votes)),
        interval=interval,
        confidence=confidence,
    )


def build_leaderboard(
    method: Method,
    models: tuple[str, ...],
    point: Ratings,
    lower: Ratings,
    upper: Ratings,
    counts: ModelCounts,
    *,
    n_battles: int,
    interval: Interval,
    confidence: float = 0.95,
) -> Leaderboard:
    """Assemble a leaderboard from ratings on the Elo scale: sorted, with interval ranks.

    Parameters
    ----------
    method : {"bt", "elo"}
    models : tuple of str
        The order of the arrays.
    point, lower, upper : ndarray
        ``(k,)`` ratings and interval bounds; the bounds are widened to hold the point.
    counts : ModelCounts
        Battles, wins, losses and ties per model.
    n_battles : int
        Votes behind the ratings.
    interval : {"sandwich", "bootstrap", "laplace", "none"}
    confidence : float

    Returns
    -------
    Leaderboard
        Best model first; rank = 1 + the number of models whose lower bound is above
        this model's upper bound (SPEC section 2).
    """
    # The point estimate always lies inside its interval, even for a skewed bootstrap.
    lower, upper = np.minimum(lower, point), np.maximum(upper, point)
    ranks = interval_ranks(lower, upper)
    rows = [
        ModelRating(
            model=models[j],
            rating=float(point[j]),
            lower=float(lower[j]),
            upper=float(upper[j]),
            rank=int(ranks[j]),
            battles=int(counts.battles[j]),
            wins=int(counts.wins[j]),
            losses=int(counts.losses[j]),
            ties=int(counts.ties[j]),
        )
        for j in np.argsort(-point, kind="stable")
    ]
    return Leaderboard(
        method=method,
        n_battles=n_battles,
        models=tuple(rows),
        interval=interval,
        confidence=confidence,
    )
