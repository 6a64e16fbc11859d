"""What agreement with the aggregate sampling noise alone gives: the null of no taste.

A user with 30 votes over 20 models cannot have a precise ranking, so their ranking
disagrees with the aggregate even when their taste is the aggregate's. The null measures
how much: every user's votes are re-drawn from the aggregate model, on the very pairs the
user voted on and in the same order, and refitted exactly as the real votes were (same
method, same shrinkage at the strength learnt from the real votes); each user's Spearman
with the aggregate under the null is the mean over ``replicates`` re-draws.

Outcomes follow the aggregate Bradley-Terry win probability ``p`` (for Elo too: the
Bradley-Terry fit is the maximum-likelihood estimate of how the crowd votes, where the
K = 4 online Elo of a small log is still compressed toward 1000 and would make the null's
votes less decisive than the crowd's). Ties are drawn at the user's own tie rate ``t``
(the log's convention: a tie is half a win), as ``P(tie) = min(t, 2p, 2(1 - p))`` and
``P(a wins) = p - P(tie)/2``, so that every vote's expected score stays ``p``, the
aggregate's, and a voter who ties often gives the null as little information as they
gave the real fit.

The aggregate is held fixed, not refitted to the re-drawn votes: the null asks how far
a user whose votes follow the aggregate exactly lands from the ratings the real users are
compared with (the method's own aggregate). Refitting the users is the costly part, so
at most ``max_users`` users (drawn at random) are re-drawn, one replicate
at a time (memory stays that of one fit of ``max_users`` users).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ranking.agreement import spearman_per_row
from ranking.elo import K_FACTOR
from ranking.pairwise import ELO_PER_NAT
from ranking.types import BoolArray, FloatArray, IntArray, Matchups, PairwiseData
from ranking.users import UserRatings, fit_user_ratings

__all__ = ["NULL_MAX_USERS", "NULL_REPLICATES", "NULL_SEED", "null_outcomes", "null_spearman"]

#: Re-draws of each user's votes under the null, and the most users re-drawn.
NULL_REPLICATES = 20
NULL_MAX_USERS = 1000
#: Seed of the null's draws.
NULL_SEED = 0


def null_outcomes(
    matchups: Matchups,
    ratings: npt.ArrayLike,
    tie_rate: npt.ArrayLike,
    rng: np.random.Generator | int | None,
) -> FloatArray:
    """Outcomes for ``model_a`` drawn from Elo-scale ``ratings``, ties at ``tie_rate``.

    Parameters
    ----------
    matchups : ndarray of int
        ``(n, 2)`` model indices of the votes.
    ratings : array_like
        ``(k,)`` ratings on the Elo scale; ``model_a`` wins with probability
        ``1 / (1 + 10 ** ((r_b - r_a) / 400))``.
    tie_rate : array_like
        Scalar or ``(n,)`` share of ties wanted, in [0, 1]; lowered where the pair is so
        lopsided that ties at that rate would move the expected score off ``p``.
    rng : numpy.random.Generator or int, optional

    Returns
    -------
    ndarray
        ``(n,)`` 1.0 (``model_a`` wins), 0.5 (tie) or 0.0, with expected value ``p``.
    """
    t = np.asarray(tie_rate, dtype=np.float64)
    if t.size and (np.nanmin(t) < 0.0 or np.nanmax(t) > 1.0 or np.isnan(t).any()):
        raise ValueError("Argument 'tie_rate' must lie in [0, 1].")
    r = np.asarray(ratings, dtype=np.float64)
    pairs = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    p = 1.0 / (1.0 + np.exp((r[pairs[:, 1]] - r[pairs[:, 0]]) / ELO_PER_NAT))
    tie = np.minimum(t, 2.0 * np.minimum(p, 1.0 - p))
    u = np.random.default_rng(rng).random(len(pairs))
    return np.where(u < p - tie / 2.0, 1.0, np.where(u < p + tie / 2.0, 0.5, 0.0))


def _alpha(observed: UserRatings) -> float | None:
    """The prior precision (nats) the observed fit used, to refit the null at it."""
    if observed.method != "bt" or observed.prior_sd is None:
        return None
    return float((ELO_PER_NAT / observed.prior_sd) ** 2)


def null_spearman(
    data: PairwiseData,
    users: IntArray,
    observed: UserRatings,
    reference: npt.ArrayLike,
    eligible: BoolArray,
    *,
    truth: npt.ArrayLike | None = None,
    replicates: int = NULL_REPLICATES,
    max_users: int = NULL_MAX_USERS,
    k: float = K_FACTOR,
    rng: np.random.Generator | int | None = NULL_SEED,
) -> FloatArray:
    """Each user's mean Spearman with ``reference`` when their votes are re-drawn from it.

    Parameters
    ----------
    data : PairwiseData
        The real votes, unweighted, in the order they happened.
    users : array of int
        ``(n,)`` user (row of ``observed``) of each vote; ``-1`` for a vote without one.
    observed : UserRatings
        The users' fit to their real votes: its method and shrinkage (and learnt
        strength) are the null's.
    reference : array_like
        ``(k,)`` the method's aggregate ratings on the Elo scale, as ``observed`` was
        fitted: the shrunk fits' prior and what the Spearman is measured against.
    eligible : ndarray of bool
        ``(U,)`` users to re-draw (those summarised).
    truth : array_like, optional
        ``(k,)`` Elo-scale ratings the votes are drawn from (the aggregate
        Bradley-Terry fit); ``reference`` by default.
    replicates : int
        Re-draws of each user's votes.
    max_users : int
        Re-draw a random sample of at most this many eligible users.
    k : float
        Elo K-factor.
    rng : numpy.random.Generator or int, optional
        Draws the sample and the outcomes.

    Returns
    -------
    ndarray
        ``(U,)`` the user's Spearman averaged over the re-draws where defined; NaN for a
        user not re-drawn.
    """
    if replicates < 1:
        raise ValueError(f"Argument 'replicates' must be at least 1, not {replicates!r}.")
    if max_users < 1:
        raise ValueError(f"Argument 'max_users' must be at least 1, not {max_users!r}.")
    generator = np.random.default_rng(rng)
    users = np.asarray(users, dtype=np.intp)
    n_users = observed.ratings.shape[0]
    chosen = np.flatnonzero(np.asarray(eligible, dtype=bool))
    if chosen.size > max_users:
        chosen = np.sort(generator.choice(chosen, max_users, replace=False))
    out = np.full(n_users, np.nan)
    if chosen.size == 0:
        return out
    local = np.full(n_users + 1, -1, dtype=np.intp)  # the last slot takes users of -1
    local[chosen] = np.arange(chosen.size)
    rows = local[users] >= 0
    votes, groups = data.select(rows), local[users[rows]]
    per_user = np.bincount(groups, minlength=chosen.size)
    ties = np.bincount(groups, weights=votes.outcomes == 0.5, minlength=chosen.size)
    tie_rate = (ties / np.maximum(per_user, 1))[groups]
    target = np.asarray(reference, dtype=np.float64)
    source = target if truth is None else np.asarray(truth, dtype=np.float64)
    total, count = np.zeros(chosen.size), np.zeros(chosen.size)
    for _ in range(replicates):
        drawn = PairwiseData(
            votes.models,
            votes.matchups,
            null_outcomes(votes.matchups, source, tie_rate, generator),
            votes.weights,
        )
        fit = fit_user_ratings(
            drawn,
            groups,
            chosen.size,
            method=observed.method,
            shrinkage=observed.shrinkage,
            prior=target,
            alpha=_alpha(observed),
            confidence=observed.confidence,
            k=k,
        )
        rho = spearman_per_row(fit.ratings, target, fit.seen)
        defined = np.isfinite(rho)
        total[defined] += rho[defined]
        count[defined] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        out[chosen] = np.where(count > 0, total / count, np.nan)
    return out
