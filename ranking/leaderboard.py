"""Aggregate leaderboards: a point fit, its intervals and interval-aware ranks, together."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ranking.bt import DEFAULT_ALPHA, fit_bt
from ranking.elo import INITIAL, K_FACTOR, online_elo
from ranking.intervals.bt_bootstrap import bootstrap_bt
from ranking.intervals.elo_bootstrap import bootstrap_elo
from ranking.intervals.sandwich import moderated_covariance
from ranking.intervals.summary import (
    interval_ranks,
    normal_intervals,
    percentile_intervals,
    replicate_summary,
)
from ranking.odds import (
    RankOdds,
    gaussian_draws,
    interval_odds,
    rank_odds,
    rank_range,
    reading_order,
)
from ranking.pairwise import ModelCounts, collapse, model_counts, to_elo_scale
from ranking.progress import Progress
from ranking.provisional import check_min_votes, split_provisional
from ranking.types import (
    ODDS_FIELDS,
    Interval,
    Leaderboard,
    Method,
    ModelRating,
    PairwiseData,
    RankedRating,
    Ratings,
)

__all__ = [
    "DEFAULT_INTERVAL",
    "build_leaderboard",
    "fit_leaderboard",
    "read_leaderboard",
    "with_interval_odds",
]

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
) -> tuple[Ratings, Ratings, Ratings, RankOdds | None]:
    """The MLE, its interval, and the odds from the same Gaussian approximation (drawn
    with a fixed seed) or the same bootstrap replicates."""
    theta = fit_bt(votes.n_models, votes.matchups, votes.outcomes, votes.weights, alpha=alpha)
    odds = None
    if interval == "sandwich":
        covariance = moderated_covariance(
            theta, votes.matchups, votes.outcomes, votes.weights, alpha=alpha
        )
        lo, hi = normal_intervals(theta, covariance, confidence)  # sandwich_intervals'
        odds = rank_odds(gaussian_draws(theta, covariance), confidence)
    elif interval == "bootstrap":
        samples = bootstrap_bt(
            votes, rounds, rng, alpha=alpha, initial_params=theta, progress=progress
        )
        lo, hi = percentile_intervals(samples, confidence)
        odds = rank_odds(samples, confidence)
    else:
        lo = hi = theta
    return to_elo_scale(theta), to_elo_scale(lo), to_elo_scale(hi), odds


def _elo_ratings(
    data: PairwiseData,
    interval: Interval,
    rounds: int,
    confidence: float,
    rng: np.random.Generator,
    k: float,
    progress: Progress | None,
) -> tuple[Ratings, Ratings, Ratings, RankOdds | None]:
    """Point, interval and odds of online Elo, all from the bootstrap's replicates.

    Online Elo of the votes in their one order is one draw of an order-dependent
    quantity, and the bootstrap's replicates (votes redrawn, in random order) scatter
    around their own centre, not around it: as a point it can sit on the edge of its
    interval. With the bootstrap the point is therefore the replicates' median
    (FastChat's), shifted with the interval so that the ratings average ``INITIAL``;
    without one it is the online Elo of the votes in order.
    """
    if interval == "sandwich":
        raise ValueError(
            "Interval 'sandwich' needs a likelihood and applies to method 'bt' only; "
            "use 'bootstrap' for method 'elo'."
        )
    if interval == "bootstrap":
        samples = bootstrap_elo(
            data.n_models, data.matchups, data.outcomes, rounds, rng, k=k, progress=progress
        )
        point, lo, hi = replicate_summary(samples, confidence, center=INITIAL)
        return point, lo, hi, rank_odds(samples, confidence)
    point = online_elo(data.n_models, data.matchups, data.outcomes, k=k)
    return point, point, point, None


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
    min_votes: int | None = None,
) -> Leaderboard:
    """Fit an aggregate leaderboard with intervals and interval-aware ranks.

    Parameters
    ----------
    data : PairwiseData
        Unweighted votes in the order they happened (online Elo depends on it), as
        :func:`ranking.io.frames.pairwise_from_battles` makes them.
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
    min_votes : int, optional
        Rank only the models with at least this many votes, fitted on the votes between
        them: a model with a vote or two would otherwise widen every interval and shift
        every rating (the centring takes its wild rating in). The others are listed as
        ``provisional`` with their counts (:func:`split_provisional`). ``n_battles`` and
        the counts cover every vote. None (the default) ranks every model.

    Returns
    -------
    Leaderboard
        Models by rank, then rating, best first.

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
    if min_votes is not None:
        return _fit_ranked(
            data,
            min_votes,
            method=method,
            interval=interval,
            rounds=rounds,
            confidence=confidence,
            anchor=anchor,
            rng=rng,
            alpha=alpha,
            k=k,
            progress=progress,
        )
    generator = np.random.default_rng(rng)
    votes = collapse(data)
    if method == "bt":
        point, lower, upper, odds = _bt_ratings(
            votes, interval, rounds, confidence, generator, alpha, progress
        )
    else:
        point, lower, upper, odds = _elo_ratings(
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
        odds=odds,
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
    odds: RankOdds | None = None,
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
    odds : RankOdds, optional
        ``p_best`` and the rank range of each model (:func:`ranking.odds.rank_odds` of
        the draws behind the interval), in the order of ``models``; the rows are then
        :class:`RankedRating`.

    Returns
    -------
    Leaderboard
        Rows by rank, then rating, best first (:func:`ranking.odds.reading_order`); rank
        = 1 + the number of models whose lower bound is above this model's upper bound
        (docs/SPEC.md section 2); a row's rank range is the draws', widened to hold its
        rank (:func:`ranking.odds.rank_range`).
    """
    # The point estimate always lies inside its interval, even for a skewed bootstrap.
    lower, upper = np.minimum(lower, point), np.maximum(upper, point)
    ranks = interval_ranks(lower, upper)
    if odds is not None:
        odds = RankOdds(odds.p_best, *rank_range(ranks, odds.rank_lower, odds.rank_upper))
    rows = []
    for j in reading_order(ranks, point):
        row = ModelRating(
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
        if odds is not None:
            row = RankedRating.of(row, odds.p_best[j], odds.rank_lower[j], odds.rank_upper[j])
        rows.append(row)
    return Leaderboard(
        method=method,
        n_battles=n_battles,
        models=tuple(rows),
        interval=interval,
        confidence=confidence,
    )


def with_interval_odds(board: Leaderboard) -> Leaderboard:
    """``board`` with each ranked row's odds read off the independent Gaussians its
    intervals stand for (:func:`ranking.odds.interval_odds`).

    For a board whose draws are not at hand (the live Elo board between refits: the
    version's intervals around ratings moved by the votes since), computed among its
    ranked rows, the rank range widened to hold each row's rank. A board without
    intervals (``"none"``) or without rows is returned as it is.
    """
    rows = board.models
    if board.interval == "none" or not rows:
        return board
    odds = interval_odds(
        [m.rating for m in rows],
        [m.lower for m in rows],
        [m.upper for m in rows],
        board.confidence,
    )
    low, high = rank_range([m.rank for m in rows], odds.rank_lower, odds.rank_upper)
    ranked = tuple(
        RankedRating.of(m.plain(), odds.p_best[j], low[j], high[j]) for j, m in enumerate(rows)
    )
    return replace(board, models=ranked)


def _fit_ranked(data: PairwiseData, min_votes: int, **options: Any) -> Leaderboard:
    """:func:`fit_leaderboard` of the votes between models with ``min_votes`` votes, with
    every model's counts, and the others listed as provisional."""
    check_min_votes(min_votes)
    counts = model_counts(collapse(data))
    every = build_leaderboard(
        options["method"],
        data.models,
        np.zeros(data.n_models),
        np.zeros(data.n_models),
        np.zeros(data.n_models),
        counts,
        n_battles=int(round(data.n_votes)),
        interval="none",
    )
    ranked = np.flatnonzero(counts.battles >= min_votes)
    provisional = split_provisional(every, min_votes).provisional
    anchor = options["anchor"]
    if anchor is not None and anchor[0] in {m.model for m in provisional or ()}:
        raise ValueError(
            f"Anchor model {anchor[0]!r} has fewer than {min_votes} votes: it is not ranked."
        )
    if ranked.size == 0:
        return replace(every, models=(), provisional=provisional, min_votes=int(min_votes))
    index = np.full(data.n_models, -1, dtype=np.intp)
    index[ranked] = np.arange(ranked.size)
    both = (index[data.matchups[:, 0]] >= 0) & (index[data.matchups[:, 1]] >= 0)
    among = PairwiseData(
        tuple(data.models[j] for j in ranked),
        index[data.matchups[both]],
        data.outcomes[both],
        data.weights[both],
    )
    if among.n_votes == 0:  # enough votes, but none between two of them: nothing to fit
        everyone = split_provisional(every, int(counts.battles.max()) + 1).provisional
        return replace(every, models=(), provisional=everyone, min_votes=int(min_votes))
    fitted = fit_leaderboard(among, **options)
    rows = {m.model: m for m in every.models}
    models = tuple(
        replace(
            m,
            battles=rows[m.model].battles,
            wins=rows[m.model].wins,
            losses=rows[m.model].losses,
            ties=rows[m.model].ties,
        )
        for m in fitted.models
    )
    return replace(
        fitted,
        models=models,
        n_battles=every.n_battles,
        provisional=provisional,
        min_votes=int(min_votes),
    )


def read_leaderboard(document: Mapping[str, Any]) -> Leaderboard:
    """:meth:`Leaderboard.from_dict`, keeping each row's odds where the document has them.

    A row with ``p_best``, ``rank_lower`` and ``rank_upper`` becomes a
    :class:`RankedRating`; others stay plain rows.
    """
    board = Leaderboard.from_dict(document)
    rows = []
    for row, entry in zip(board.models, document["models"], strict=True):
        if all(entry.get(f) is not None for f in ODDS_FIELDS):
            row = RankedRating.of(row, *(entry[f] for f in ODDS_FIELDS))
        rows.append(row)
    return replace(board, models=tuple(rows))
