"""Per-user leaderboards next to the aggregate: the study's analysis in one call.

With ``null_replicates`` it also measures what part of the users' disagreement with the
aggregate sampling noise alone produces (:mod:`ranking.noise`, the summary's ``noise``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ranking.agreement import (
    AgreementSummary,
    compare_with_null,
    kendall_per_row,
    spearman_per_row,
    summarise,
)
from ranking.leaderboard import fit_leaderboard
from ranking.noise import NULL_MAX_USERS, NULL_SEED, null_spearman
from ranking.types import Leaderboard, Method, PairwiseData
from ranking.users import Shrinkage, UserRatings, aggregate_prior, fit_user_ratings

__all__ = ["UserAnalysis", "analyse_users", "fit_user_agreement", "measure_noise"]


@dataclass(frozen=True)
class UserAnalysis:
    """Aggregate leaderboard, every user's ratings, and their agreement.

    Attributes
    ----------
    aggregate : Leaderboard
        The aggregate leaderboard of all votes.
    users : tuple of str
        User ids, the row order of ``ratings``.
    ratings : UserRatings
        Every user's ratings.
    spearman, kendall : ndarray
        ``(U,)`` agreement of each user's ranking with the aggregate, over the models
        the user voted on; NaN where undefined.
    summary : AgreementSummary
        Over users with at least ``min_battles`` votes.
    min_battles : int
    null_spearman : ndarray, optional
        ``(U,)`` each user's mean Spearman when their votes are re-drawn from the
        aggregate (:func:`ranking.noise.null_spearman`); NaN for a user not re-drawn.
        None when the null was not measured.
    """

    aggregate: Leaderboard
    users: tuple[str, ...]
    ratings: UserRatings
    spearman: npt.NDArray[np.float64]
    kendall: npt.NDArray[np.float64]
    summary: AgreementSummary
    min_battles: int
    null_spearman: npt.NDArray[np.float64] | None = None

    def user_dict(self, u: int) -> dict[str, Any]:
        """One user's entry of the ``users`` JSON (docs/SPEC.md section 3).

        Without shrinkage only the models the user voted on are rated; with it, every
        model is (an unseen one at the prior).
        """
        r = self.ratings
        models = [j for j, name in enumerate(r.models) if r.shrinkage != "none" or r.seen[u, j]]
        entry: dict[str, Any] = {
            "user_id": self.users[u],
            "n_battles": int(r.n_battles[u]),
            "ratings": {r.models[j]: round(float(r.ratings[u, j]), 2) for j in models},
            "spearman": _number(self.spearman[u]),
            "kendall": _number(self.kendall[u]),
        }
        if r.method == "bt":
            entry["lower"] = {r.models[j]: round(float(r.lower[u, j]), 2) for j in models}
            entry["upper"] = {r.models[j]: round(float(r.upper[u, j]), 2) for j in models}
        return entry

    def to_dict(self) -> dict[str, Any]:
        """The ``users`` JSON document of docs/SPEC.md section 3, users with enough votes only."""
        keep = np.flatnonzero(self.ratings.n_battles >= self.min_battles)
        return {
            "method": self.ratings.method,
            "shrinkage": self.ratings.shrinkage,
            "prior_sd": None if self.ratings.prior_sd is None else round(self.ratings.prior_sd, 2),
            "min_battles": self.min_battles,
            "aggregate": self.aggregate.to_dict(),
            "users": [self.user_dict(int(u)) for u in keep],
            "summary": self.summary.to_dict(),
        }


def _number(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 4)


def analyse_users(
    data: PairwiseData,
    users: npt.NDArray[np.intp],
    user_names: tuple[str, ...],
    *,
    method: Method = "bt",
    shrinkage: Shrinkage = "cv",
    min_battles: int = 10,
    aggregate: Leaderboard | None = None,
    rng: np.random.Generator | int | None = 0,
    null_replicates: int = 0,
    null_max_users: int = NULL_MAX_USERS,
) -> UserAnalysis:
    """Fit the aggregate and every user's ratings and measure how far they agree.

    Parameters
    ----------
    data : PairwiseData
        Votes in the order they happened.
    users : array of int
        ``(n,)`` index into ``user_names`` of each vote; ``-1`` for a vote without user
        (it counts in the aggregate only).
    user_names : tuple of str
        User ids.
    method : {"bt", "elo"}
        Rating method, for the aggregate and the users alike.
    shrinkage : {"cv", "evidence", "none"}
        See :func:`ranking.users.fit_user_ratings`; the aggregate is the prior.
    min_battles : int
        Users with fewer votes are fitted but left out of the summary.
    aggregate : Leaderboard, optional
        The aggregate leaderboard of ``data`` with ``method``, when already fitted.
    rng : numpy.random.Generator or int, optional
        Randomness of the intervals and of the shrinkage search.
    null_replicates : int
        Re-draw the summarised users' votes from the aggregate this many times and refit
        them (the null of no taste, :mod:`ranking.noise`, seed
        :data:`~ranking.noise.NULL_SEED`); 0 (the default) skips it.
    null_max_users : int
        Re-draw at most this many users, a random sample of the summarised ones.

    Returns
    -------
    UserAnalysis
    """
    if aggregate is None:
        aggregate = fit_leaderboard(data, method=method, rng=rng)
    elif aggregate.method != method:
        raise ValueError(
            f"Argument 'aggregate' was fitted with method {aggregate.method!r}, not {method!r}."
        )
    prior = np.array([aggregate[m].rating for m in data.models])
    ratings, spearman, kendall = fit_user_agreement(
        data, users, len(user_names), method=method, shrinkage=shrinkage, prior=prior, rng=rng
    )
    summary = summarise(spearman, kendall, ratings.n_battles, min_battles)
    analysis = UserAnalysis(aggregate, user_names, ratings, spearman, kendall, summary, min_battles)
    if null_replicates > 0:
        analysis = measure_noise(
            analysis, data, users, replicates=null_replicates, max_users=null_max_users
        )
    return analysis


def measure_noise(
    analysis: UserAnalysis,
    data: PairwiseData,
    users: npt.NDArray[np.intp],
    *,
    replicates: int,
    max_users: int = NULL_MAX_USERS,
) -> UserAnalysis:
    """The analysis with the null of no taste measured (:mod:`ranking.noise`).

    The summarised users' votes in ``data`` (each vote's user in ``users``, the rows of
    ``analysis``) are re-drawn from the aggregate Bradley-Terry fit of ``data``
    ``replicates`` times (seed :data:`~ranking.noise.NULL_SEED`) and refitted as
    ``analysis.ratings`` was; the summary gains ``noise`` and the analysis
    ``null_spearman``.
    """
    ratings, spearman = analysis.ratings, analysis.spearman
    prior = np.array([analysis.aggregate[m].rating for m in data.models])
    eligible = (ratings.n_battles >= analysis.min_battles) & np.isfinite(spearman)
    null = null_spearman(
        data,
        users,
        ratings,
        prior,
        eligible,
        truth=prior if ratings.method == "bt" else aggregate_prior(data, "bt"),
        replicates=replicates,
        max_users=max_users,
        rng=NULL_SEED,
    )
    noise = compare_with_null(spearman, null, replicates)
    summary = dataclasses.replace(analysis.summary, noise=noise)
    return dataclasses.replace(analysis, summary=summary, null_spearman=null)


def fit_user_agreement(
    data: PairwiseData,
    users: npt.NDArray[np.intp],
    n_users: int,
    *,
    method: Method,
    shrinkage: Shrinkage,
    prior: npt.NDArray[np.float64],
    alpha: float | None = None,
    rng: np.random.Generator | int | None = 0,
) -> tuple[UserRatings, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Each user's ratings, and their Spearman and Kendall agreement with ``prior``.

    Votes without a user (``users`` of -1) are left out; ``prior`` is the aggregate on
    the Elo scale, in the order of ``data.models``, and the prior of shrunk fits.
    ``alpha`` is the learnt prior precision (learnt here when None).
    """
    known = users >= 0
    ratings = fit_user_ratings(
        data.select(known),
        users[known],
        n_users,
        method=method,
        shrinkage=shrinkage,
        prior=prior,
        alpha=alpha,
        rng=rng,
    )
    spearman = spearman_per_row(ratings.ratings, prior, ratings.seen)
    kendall = kendall_per_row(ratings.ratings, prior, ratings.seen)
    return ratings, spearman, kendall
