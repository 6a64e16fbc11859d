"""Odds of a leaderboard: each model's chance of being the best, and the range of its rank.

Both are read off draws of the ratings (bootstrap replicates, or draws from a Gaussian
posterior): ``p_best`` is the share of draws in which the model is the highest of those
listed (a tie for the top shared equally, so the column sums to 1), and the rank range is
the equal-tailed ``confidence`` range of its competition rank in the draws (1 + the
number of models rated above it). docs/SPEC.md section 2.

A board shows each row's interval rank beside that range, so the range a row reports is
widened to hold its rank (:func:`rank_range`), and its rows are read in rank order
(:func:`reading_order`): a person never reads "rank 2, range 3-4", nor a rank column
that goes back up. Boards whose intervals stand for independent Gaussians (predicted
rankings, the live Elo board) get their odds from one function, :func:`interval_odds`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy.special import ndtri

from ranking.types import FloatArray, Int64Array, IntArray

__all__ = [
    "ODDS_DRAWS",
    "ODDS_SEED",
    "RankOdds",
    "competition_ranks",
    "gaussian_draws",
    "interval_odds",
    "interval_sd",
    "rank_odds",
    "rank_range",
    "reading_order",
    "standard_normal_draws",
    "z_value",
]

#: Draws of a Gaussian posterior behind ``p_best`` and the rank range.
ODDS_DRAWS = 1000
#: Seed of those draws: the same fit always gives the same odds.
ODDS_SEED = 0


@dataclass(frozen=True)
class RankOdds:
    """``p_best`` and the rank range of each model (columns of the draws).

    Attributes
    ----------
    p_best : ndarray
        ``(..., k)`` probability of being the best of the models listed; sums to 1 over
        the last axis.
    rank_lower, rank_upper : ndarray of int
        ``(..., k)`` the equal-tailed range of the rank (1 is best).
    """

    p_best: FloatArray
    rank_lower: Int64Array
    rank_upper: Int64Array


def rank_odds(draws: npt.ArrayLike, confidence: float = 0.95) -> RankOdds:
    """``p_best`` and the rank range of each model from draws of the ratings.

    Parameters
    ----------
    draws : array_like
        ``(R, ..., k)`` ratings: ``R`` draws (replicates) of ``k`` models, with any batch
        axes between (one a user, say).
    confidence : float
        Coverage of the rank range, in (0, 1).

    Returns
    -------
    RankOdds
        Arrays of shape ``(..., k)``.

    Raises
    ------
    ValueError
        On no draws, no models or a bad ``confidence``.
    """
    samples = np.asarray(draws, dtype=np.float64)
    if samples.ndim < 2 or samples.shape[0] == 0 or samples.shape[-1] == 0:
        raise ValueError(
            f"Argument 'draws' must have shape (R, ..., k) with R, k >= 1, not {samples.shape}."
        )
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    ranks = competition_ranks(samples)
    top = ranks == 1
    p_best = (top / top.sum(axis=-1, keepdims=True)).mean(axis=0)
    tail = 0.5 * (1.0 - confidence)
    low, high = np.quantile(ranks, [tail, 1.0 - tail], axis=0)  # one partition for both
    lower = np.floor(low + 1e-9).astype(np.int64)
    upper = np.ceil(high - 1e-9).astype(np.int64)
    return RankOdds(p_best, lower, upper)


def rank_range(
    rank: npt.ArrayLike, rank_lower: npt.ArrayLike, rank_upper: npt.ArrayLike
) -> tuple[Int64Array, Int64Array]:
    """The rank range a row reports: the draws' range, widened to hold the row's rank.

    A row's ``rank`` is its interval rank (docs/SPEC.md section 2: 1 + the number of
    models whose lower bound is above its upper bound), a conservative reading of the
    intervals; the draws' range of its rank can lie wholly below it (rank 2, range 3-4)
    when the draws put several models above it whose intervals still overlap its own.
    Both are honest, and a person reads them together, so the range shown holds both.

    Parameters
    ----------
    rank, rank_lower, rank_upper : array_like of int
        ``(..., k)`` each row's interval rank and the draws' range of its rank.

    Returns
    -------
    tuple of ndarray
        ``(lower, upper)``: ``min(rank_lower, rank)`` and ``max(rank_upper, rank)``.
    """
    r = np.asarray(rank, dtype=np.int64)
    low = np.minimum(np.asarray(rank_lower, dtype=np.int64), r)
    high = np.maximum(np.asarray(rank_upper, dtype=np.int64), r)
    return low, high


def reading_order(rank: npt.ArrayLike, rating: npt.ArrayLike) -> IntArray:
    """The order a board's rows are listed in: by rank, then by rating, best first.

    Sorting by rating alone lets the interval rank go back up down the rows (a model
    with a wide interval can share a better rank than one rated above it: "7, then 6");
    LMArena lists by rank, then rating, and so do all boards here. The model rated
    highest always has rank 1 (no lower bound exceeds its rating), so it stays first.

    Parameters
    ----------
    rank : array_like of int
        ``(k,)`` the interval ranks.
    rating : array_like of float
        ``(k,)`` the ratings.

    Returns
    -------
    ndarray of int
        ``(k,)`` row indices; ties of rank and rating keep their given order.
    """
    r = np.asarray(rank, dtype=np.int64)
    x = np.asarray(rating, dtype=np.float64)
    if r.shape != x.shape or r.ndim != 1:
        raise ValueError(
            f"Arguments 'rank' and 'rating' must share one shape (k,), not {r.shape} and {x.shape}."
        )
    return np.lexsort((-x, r)).astype(np.intp)


def interval_odds(
    rating: npt.ArrayLike,
    lower: npt.ArrayLike,
    upper: npt.ArrayLike,
    confidence: float = 0.95,
) -> RankOdds:
    """The odds of a board whose intervals stand for independent Gaussians.

    The one computation behind every such board (a prediction from queries, a blend with
    votes, a per-prompt ranking, the live Elo board between refits) and every number
    read from it (the next battle's ``p_best_a``, the page's "41% likely the best"):
    each interval is taken as ``rating +- z * sd``, and the odds are
    :func:`rank_odds` of :data:`ODDS_DRAWS` draws (seed :data:`ODDS_SEED`) of those
    Gaussians, in the order given.

    Parameters
    ----------
    rating, lower, upper : array_like
        ``(k,)`` ratings and their ``confidence`` interval bounds.
    confidence : float
        Coverage of the intervals and of the rank ranges, in (0, 1).

    Returns
    -------
    RankOdds
        ``(k,)`` arrays in the order given.

    Raises
    ------
    ValueError
        On shapes that differ, no models or a bad ``confidence``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    mean = np.asarray(rating, dtype=np.float64)
    lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    if mean.ndim != 1 or lo.shape != mean.shape or hi.shape != mean.shape:
        raise ValueError(
            "Arguments 'rating', 'lower' and 'upper' must share one shape (k,), "
            f"not {mean.shape}, {lo.shape} and {hi.shape}."
        )
    sd = interval_sd(lo, hi, confidence)
    return rank_odds(gaussian_draws(mean, np.diag(sd**2)), confidence)


def competition_ranks(ratings: npt.ArrayLike) -> Int64Array:
    """Rank of each model along the last axis: 1 + how many models are rated above it.

    Equal ratings share a rank ("1224"), as :func:`ranking.intervals.summary.interval_ranks`
    gives with zero-width intervals.
    """
    values = np.asarray(ratings, dtype=np.float64)
    order = np.argsort(-values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    positions = np.broadcast_to(np.arange(values.shape[-1]), values.shape)
    new = np.ones(values.shape, dtype=bool)
    new[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    first = np.maximum.accumulate(np.where(new, positions, 0), axis=-1)
    ranks = np.empty(values.shape, dtype=np.int64)
    np.put_along_axis(ranks, order, first + 1, axis=-1)
    return ranks


def standard_normal_draws(rounds: int, k: int, seed: int = ODDS_SEED) -> FloatArray:
    """``(rounds, k)`` standard normal draws of a fixed seed (shared, so reproducible).

    The same arguments give the same read-only array, drawn once (each prediction's odds
    draw the same ``(ODDS_DRAWS, k)``; drawing them anew cost more than using them).
    """
    if rounds < 1:
        raise ValueError(f"Argument 'rounds' must be at least 1, not {rounds}.")
    return _standard_normal_draws(int(rounds), int(k), int(seed))


@lru_cache(maxsize=32)
def _standard_normal_draws(rounds: int, k: int, seed: int) -> FloatArray:
    """:func:`standard_normal_draws`, kept: a few shapes (one per number of models)."""
    draws = np.random.default_rng(seed).standard_normal((rounds, k))
    draws.flags.writeable = False
    return draws


def gaussian_draws(
    mean: npt.ArrayLike,
    covariance: npt.ArrayLike,
    rounds: int = ODDS_DRAWS,
    seed: int = ODDS_SEED,
) -> FloatArray:
    """``(rounds, k)`` draws of ``N(mean, covariance)`` with a fixed seed.

    The covariance may be singular (a Bradley-Terry covariance of ratings relative to
    their mean is): the draws scale the fixed standard normal draws by its symmetric
    square root ``V sqrt(L) V'`` (eigen-decomposition ``V L V'``, negative rounding
    errors clipped to zero). That root is unique, and continuous in the covariance,
    where ``V sqrt(L)`` alone is not: with equal variances (predicted intervals of one
    width) any basis of the eigenspace is an eigen-decomposition, and a change in the
    last bit of the covariance could turn it, and the odds with it.
    """
    mu = np.asarray(mean, dtype=np.float64)
    cov = np.asarray(covariance, dtype=np.float64)
    values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    root = (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T
    z = standard_normal_draws(rounds, mu.shape[0], seed)
    draws: FloatArray = mu + z @ root  # root is symmetric
    return draws


def interval_sd(lower: npt.ArrayLike, upper: npt.ArrayLike, confidence: float) -> FloatArray:
    """The sd of the Gaussian whose ``confidence`` interval is ``[lower, upper]``."""
    return (np.asarray(upper) - np.asarray(lower)) / (2.0 * z_value(confidence))


@lru_cache(maxsize=64)
def z_value(confidence: float) -> float:
    """The normal quantile of a two-sided ``confidence`` interval (kept: a few levels)."""
    return float(ndtri(0.5 + confidence / 2.0))
