"""Users' taste in answers, fitted: the prior learnt, every user's coefficients, and the
fallback rule (:func:`fit_user_style`); one person's under a learnt prior
(:func:`style_under_prior`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.stats import norm

from ranking.personal_style.alpha import user_style_alpha
from ranking.personal_style.posterior import check_style_votes, fit_user_style_posterior
from ranking.personal_style.results import (
    MIN_GAIN_SE,
    HeldOutGain,
    StyleAlphaMethod,
    StylePrior,
    UserStyle,
)
from ranking.types import BoolArray

__all__ = [
    "earlier_votes",
    "fit_user_style",
    "style_under_prior",
]


def fit_user_style(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
    *,
    features: tuple[str, ...] | None = None,
    aggregate_covariance: npt.ArrayLike | None = None,
    alpha: float | None = None,
    personal: bool = True,
    method: StyleAlphaMethod = "cv",
    earlier: npt.ArrayLike | None = None,
    folds: int = 5,
    min_gain_se: float = MIN_GAIN_SE,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = 0,
) -> UserStyle:
    """Every user's style coefficients, shrunk toward the aggregate's, with intervals.

    Parameters
    ----------
    differences : array_like
        ``(n, p)`` style covariates of each vote, in the aggregate fit's scaling
        (:func:`features.answer_style.style_differences`).
    outcomes : array_like
        ``(n,)`` 1, 0 or 0.5 (tie) for model_a.
    offsets : array_like
        ``(n,)`` log-odds of model_a before style (natural log): the style-controlled
        aggregate's ``theta_a - theta_b``, or the user's own ratings'.
    users : array_like of int
        ``(n,)`` user of each vote, below ``n_users``.
    n_users : int
        Number of users.
    aggregate : array_like
        ``(p,)`` the aggregate's style coefficients (natural log per covariate unit).
    features : tuple of str, optional
        The covariates' names; ``style0, style1, ...`` by default.
    aggregate_covariance : array_like, optional
        ``(p, p)`` covariance of ``aggregate``: added to a user's own when telling
        whether they differ from it (``distinct``).
    alpha : float, optional
        Fix the prior precision instead of learning it (then ``held_out`` is None).
    personal : bool
        With ``alpha`` given, whether to use the per-user coefficients (as a fit of all
        users decided: :class:`StylePrior`); ignored when ``alpha`` is learnt, where the
        fallback rule decides.
    method : {"cv", "evidence", "later"}
        How ``alpha`` is learnt (:func:`user_style_alpha`).
    earlier : array_like of bool, optional
        For ``"later"``: ``(n,)`` True for each user's earlier votes, fitted to judge the
        later ones (the coefficients returned are fitted on all votes).
    folds : int
        Folds of the cross-validation and of the held-out comparison.
    min_gain_se : float
        Standard errors by which the per-user coefficients must beat the aggregate's on
        held-out votes to be used (the fallback rule); 0 keeps them whenever they win.
    confidence : float
        Coverage of the intervals.
    rng : numpy.random.Generator or int, optional
        Chooses the folds.

    Returns
    -------
    UserStyle
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    x, y, off, groups, mu = check_style_votes(
        differences, outcomes, offsets, users, n_users, aggregate
    )
    p = mu.size
    names = tuple(features) if features is not None else tuple(f"style{j}" for j in range(p))
    if len(names) != p:
        raise ValueError(f"Argument 'features' must name {p} covariates, not {len(names)}.")
    held_out: HeldOutGain | None = None
    if alpha is None:
        alpha, held_out = user_style_alpha(
            x, y, off, groups, n_users, mu, method=method, earlier=earlier, folds=folds, rng=rng
        )
        personal = held_out.gain > 0 and held_out.gain >= min_gain_se * held_out.se
    beta, covariance = fit_user_style_posterior(x, y, off, groups, n_users, mu, alpha)
    sd = np.sqrt(np.diagonal(covariance, axis1=1, axis2=2))
    z = float(norm.ppf(0.5 + confidence / 2.0))
    extra = (
        np.zeros(p)
        if aggregate_covariance is None
        else np.diagonal(np.asarray(aggregate_covariance, dtype=np.float64).reshape(p, p))
    )
    distinct = np.abs(beta - mu) > z * np.sqrt(sd**2 + extra)
    if not personal:
        beta = np.tile(mu, (n_users, 1))
        distinct = np.zeros_like(distinct)
    n_battles = np.bincount(groups, minlength=n_users).astype(np.int64)
    return UserStyle(
        names,
        beta,
        beta - z * sd,
        beta + z * sd,
        mu,
        distinct,
        n_battles,
        float(alpha),
        bool(personal),
        held_out,
        confidence,
    )


def style_under_prior(
    prior: StylePrior,
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike | None = None,
    n_users: int = 1,
    *,
    confidence: float = 0.95,
) -> UserStyle:
    """Users' taste fitted under what a fit of all users learnt (its aggregate, its
    ``alpha``, its fallback decision): one person's board refitted after a vote.

    Parameters
    ----------
    prior : StylePrior
        From :meth:`UserStyle.prior` of the fit of all users.
    differences, outcomes, offsets
        As :func:`fit_user_style`.
    users : array_like of int, optional
        ``(n,)`` user of each vote; one user by default.
    n_users : int
        Number of users.
    confidence : float
        Coverage of the intervals.
    """
    x = np.asarray(differences, dtype=np.float64).reshape(-1, prior.aggregate.size)
    groups = np.zeros(x.shape[0], dtype=np.intp) if users is None else users
    return fit_user_style(
        x, outcomes, offsets, groups, n_users, prior.aggregate, features=prior.features,
        aggregate_covariance=prior.covariance, alpha=prior.alpha, personal=prior.personal,
        confidence=confidence,
    )  # fmt: skip


def earlier_votes(users: npt.ArrayLike, n_users: int) -> BoolArray:
    """True for each user's first half of their votes (rounded up), in the order given:
    the ``earlier`` of ``method="later"``.

    Parameters
    ----------
    users : array_like of int
        ``(n,)`` user of each vote, in vote order, below ``n_users``.
    n_users : int
        Number of users.
    """
    codes = np.asarray(users, dtype=np.intp).reshape(-1)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n_users)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.empty(codes.size, dtype=np.intp)
    position[order] = np.arange(codes.size) - np.repeat(starts, counts)
    return np.asarray(position < np.ceil(counts[codes] / 2.0), dtype=bool)
