"""Per-user Elo and Bradley-Terry ratings for every user at once, with shrinkage.

All users are fitted together: Bradley-Terry as one batched Newton problem over
``(users, models)`` (:func:`ranking.bt.fit_bt_posterior`), Elo as one online run with
every user's votes in step (:func:`ranking.elo.online_elo_grouped`). No Python loop
visits users.

Shrinkage (``"cv"``, the default, or ``"evidence"``) fits each user's Bradley-Terry strengths as
a prior (the aggregate, or a prediction) plus a Gaussian deviation whose size is learnt
from all users (:mod:`ranking.shrinkage`): a user with 20 votes moves a little from the
prior, one with 500 votes mostly speaks for themself, and a model the user never saw keeps
the prior. For Elo, which has no likelihood to weigh against a prior, shrinkage means each
user starts from the prior ratings instead of 1000. ``"none"`` is the plain per-user fit
of the study (each user alone, every model starting level).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

from ranking.bt import DEFAULT_ALPHA, fit_bt, fit_bt_grouped, fit_bt_posterior
from ranking.elo import K_FACTOR, online_elo, online_elo_grouped
from ranking.odds import ODDS_SEED, RankOdds, interval_sd, standard_normal_draws
from ranking.odds_kernel import gaussian_rank_odds
from ranking.pairwise import ELO_PER_NAT, collapse, to_elo_scale
from ranking.shrinkage import learn_alpha
from ranking.types import CENTER, FloatArray, IntArray, Method, PairwiseData

__all__ = [
    "SHRINKAGE",
    "USER_ODDS_DRAWS",
    "Shrinkage",
    "UserRatings",
    "aggregate_prior",
    "expected_user_ratings",
    "fit_user_ratings",
    "user_board_odds",
    "user_rank_odds",
]

Shrinkage = Literal["cv", "evidence", "none"]
SHRINKAGE: tuple[Shrinkage, ...] = ("cv", "evidence", "none")
#: Draws of each user's Laplace posterior behind their ``p_best`` and rank ranges.
USER_ODDS_DRAWS = 400


@dataclass(frozen=True)
class UserRatings:
    """Every user's ratings on the Elo scale.

    Attributes
    ----------
    method : {"bt", "elo"}
    shrinkage : {"cv", "evidence", "none"}
    models : tuple of str
        Column order of the arrays.
    ratings : ndarray
        ``(U, k)`` ratings.
    lower, upper : ndarray
        ``(U, k)`` interval bounds (the Laplace posterior for Bradley-Terry; equal to the
        ratings for Elo, which has no per-user interval).
    battles : ndarray of int
        ``(U, k)`` how many of the user's votes involved each model.
    prior : ndarray
        ``(U, k)`` prior ratings the users were shrunk toward (all ``CENTER`` for none).
    prior_sd : float or None
        Learnt standard deviation of a user's departure from the prior, in Elo points.
    confidence : float
        Coverage of ``lower`` and ``upper``.
    """

    method: Method
    shrinkage: Shrinkage
    models: tuple[str, ...]
    ratings: FloatArray
    lower: FloatArray
    upper: FloatArray
    battles: npt.NDArray[np.int64]
    prior: FloatArray
    prior_sd: float | None
    confidence: float = 0.95

    @property
    def n_battles(self) -> npt.NDArray[np.int64]:
        """``(U,)`` votes per user (each vote involves two models)."""
        return self.battles.sum(axis=1) // 2

    @property
    def seen(self) -> npt.NDArray[np.bool_]:
        """``(U, k)`` whether the user voted on the model at least once."""
        return self.battles > 0


def aggregate_prior(data: PairwiseData, method: Method, k: float = K_FACTOR) -> FloatArray:
    """The aggregate ratings of all votes on the Elo scale: the default shrinkage target."""
    if method == "elo":
        return online_elo(data.n_models, data.matchups, data.outcomes, k=k)
    votes = collapse(data)
    return to_elo_scale(fit_bt(votes.n_models, votes.matchups, votes.outcomes, votes.weights))


def _user_model_counts(data: PairwiseData, users: IntArray, n_users: int) -> npt.NDArray[np.int64]:
    k = data.n_models
    index = np.concatenate([users * k + data.matchups[:, 0], users * k + data.matchups[:, 1]])
    return np.bincount(index, minlength=n_users * k).reshape(n_users, k).astype(np.int64)


def fit_user_ratings(
    data: PairwiseData,
    users: IntArray,
    n_users: int,
    *,
    method: Method = "bt",
    shrinkage: Shrinkage = "cv",
    prior: npt.ArrayLike | None = None,
    alpha: float | None = None,
    confidence: float = 0.95,
    k: float = K_FACTOR,
    rng: np.random.Generator | int | None = 0,
) -> UserRatings:
    """Fit every user's ratings at once.

    Parameters
    ----------
    data : PairwiseData
        Unweighted votes in the order they happened.
    users : array of int
        ``(n,)`` user index of each vote, below ``n_users``.
    n_users : int
        Number of users.
    method : {"bt", "elo"}
        Bradley-Terry or online Elo.
    shrinkage : {"cv", "evidence", "none"}
        Shrink toward ``prior`` with a strength learnt by held-out log-loss or by the
        Laplace evidence (:mod:`ranking.shrinkage`), or fit each user alone.
    prior : array_like, optional
        ``(k,)`` or ``(n_users, k)`` prior ratings on the Elo scale; the aggregate of
        ``data`` by default. Ignored without shrinkage.
    alpha : float, optional
        Fix the prior precision (natural-log units) instead of learning it.
    confidence : float
        Coverage of the Bradley-Terry intervals.
    k : float
        Elo K-factor.
    rng : numpy.random.Generator or int, optional
        Randomness of the empirical Bayes subsample.

    Returns
    -------
    UserRatings
    """
    if shrinkage not in SHRINKAGE:
        raise ValueError(f"Argument 'shrinkage' must be one of {SHRINKAGE}, not {shrinkage!r}.")
    if method not in ("bt", "elo"):
        raise ValueError(f"Argument 'method' must be 'bt' or 'elo', not {method!r}.")
    users = np.asarray(users, dtype=np.intp)
    shape = (n_users, data.n_models)
    if shrinkage == "none":
        prior_elo = np.full(shape, CENTER)
    else:
        target = aggregate_prior(data, method, k) if prior is None else prior
        prior_elo = np.array(np.broadcast_to(np.asarray(target, dtype=np.float64), shape))
    counts = _user_model_counts(data, users, n_users)

    if method == "elo":
        ratings = online_elo_grouped(
            data.n_models, data.matchups, data.outcomes, users, n_users, k=k, initial=prior_elo
        )
        return UserRatings(
            method,
            shrinkage,
            data.models,
            ratings,
            ratings,
            ratings,
            counts,
            prior_elo,
            None,
            confidence,
        )

    mu = (prior_elo - CENTER) / ELO_PER_NAT
    if shrinkage == "none":
        strength = DEFAULT_ALPHA
    elif alpha is not None:
        strength = alpha
    else:
        strength = learn_alpha(
            data.n_models,
            data.matchups,
            data.outcomes,
            users,
            n_users,
            mu,
            method="evidence" if shrinkage == "evidence" else "cv",
            rng=rng,
        )
    fit = fit_bt_posterior(
        data.n_models,
        data.matchups,
        data.outcomes,
        groups=users,
        n_groups=n_users,
        prior_mean=mu,
        alpha=strength,
    )
    # A plain fit cannot place a user's mean rating, only ratings relative to it; with a
    # prior the mean is placed too, and the full posterior variance applies.
    variance = fit.relative_variance if shrinkage == "none" else fit.variance
    half_width = float(norm.ppf(0.5 + confidence / 2.0)) * np.sqrt(variance)
    return UserRatings(
        method,
        shrinkage,
        data.models,
        to_elo_scale(fit.theta),
        to_elo_scale(fit.theta - half_width),
        to_elo_scale(fit.theta + half_width),
        counts,
        prior_elo,
        None if shrinkage == "none" else ELO_PER_NAT / float(np.sqrt(strength)),
        confidence,
    )


def user_rank_odds(
    ratings: UserRatings, draws: int = USER_ODDS_DRAWS, seed: int = ODDS_SEED
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each user's ``p_best`` and rank range, from the posterior behind their intervals.

    A Bradley-Terry user's posterior is the Laplace (Gaussian) approximation whose
    ``confidence`` intervals ``lower``, ``upper`` are: each model independently
    ``N(rating, ((upper - lower) / (2 z))^2)``, drawn ``draws`` times from one fixed
    table of standard normal draws shared by every user (so a user's odds do not depend
    on who else is fitted, nor on the order). The models listed are the user's rated
    ones: every model with shrinkage, the models the user voted on without. The odds are
    :func:`ranking.odds.rank_odds`'s of those draws, computed user by user in a
    compiled loop (:func:`ranking.odds_kernel.gaussian_rank_odds`).

    Returns
    -------
    tuple of ndarray
        ``(p_best, rank_lower, rank_upper)``, each ``(U, k)`` floats; NaN for a model
        not listed, and everywhere for Elo (whose per-user ratings have no interval).
    """
    n_users, k = ratings.ratings.shape
    p_best = np.full((n_users, k), np.nan)
    rank_lower, rank_upper = p_best.copy(), p_best.copy()
    if ratings.method != "bt" or n_users == 0 or k == 0:
        return p_best, rank_lower, rank_upper
    listed = ratings.seen if ratings.shrinkage == "none" else np.ones((n_users, k), dtype=bool)
    sd = interval_sd(ratings.lower, ratings.upper, ratings.confidence)
    z = standard_normal_draws(draws, k, seed)
    return gaussian_rank_odds(ratings.ratings, sd, listed, z, ratings.confidence)


def expected_user_ratings(
    preference: npt.ArrayLike,
    n_votes: npt.ArrayLike,
    pair_share: npt.ArrayLike,
    *,
    prior: npt.ArrayLike,
    alpha: float,
) -> FloatArray:
    """The shrunk Bradley-Terry ratings users are expected to get from their votes.

    A shrunk fit of ``n`` votes lands between the prior and the user's preferences, the
    nearer the preferences the more votes there are. This fits each user's expected
    votes: ``n * share[a, b]`` votes on each pair, won with the probability the
    preferences give (a fractional outcome), under the same prior.

    Parameters
    ----------
    preference : array_like
        ``(U, k)`` Elo-scale ratings the users' votes follow.
    n_votes : array_like
        ``(U,)`` votes of each user.
    pair_share : array_like
        ``(k, k)`` share of votes on each ordered pair.
    prior : array_like
        ``(k,)`` or ``(U, k)`` prior ratings on the Elo scale.
    alpha : float
        Prior precision of a user's deviation, natural-log units.

    Returns
    -------
    ndarray
        ``(U, k)`` expected ratings on the Elo scale.
    """
    pref = (np.asarray(preference, dtype=np.float64) - CENTER) / ELO_PER_NAT
    n_users, n_models = pref.shape
    share = np.asarray(pair_share, dtype=np.float64)
    a, b = np.nonzero(share > 0)
    groups = np.repeat(np.arange(n_users), a.size)
    p = 1.0 / (1.0 + np.exp(pref[:, b] - pref[:, a]))
    weights = np.asarray(n_votes, dtype=np.float64)[:, None] * share[a, b][None, :]
    mu = (np.broadcast_to(np.asarray(prior, dtype=np.float64), pref.shape) - CENTER) / ELO_PER_NAT
    theta = fit_bt_grouped(
        n_models,
        np.tile(np.stack([a, b], axis=1), (n_users, 1)),
        p.ravel(),
        weights.ravel(),
        groups=groups,
        n_groups=n_users,
        prior_mean=mu,
        alpha=alpha,
    )
    return to_elo_scale(theta)


def user_board_odds(ratings: UserRatings, row: int = 0) -> RankOdds | None:
    """One user's odds over every model, as :func:`ranking.leaderboard.build_leaderboard`
    takes them (``odds=``), for a board of that user's ratings of every model.

    None where the user has none to give: Elo (no interval), or a plain fit that does not
    list every model.
    """
    one = UserRatings(
        ratings.method,
        ratings.shrinkage,
        ratings.models,
        ratings.ratings[row : row + 1],
        ratings.lower[row : row + 1],
        ratings.upper[row : row + 1],
        ratings.battles[row : row + 1],
        ratings.prior[row : row + 1],
        ratings.prior_sd,
        ratings.confidence,
    )
    p_best, lower, upper = (a[0] for a in user_rank_odds(one))
    if not np.isfinite(p_best).all():
        return None
    return RankOdds(p_best, lower.astype(np.int64), upper.astype(np.int64))
