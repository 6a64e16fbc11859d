"""Self-consistency of each user's votes: leave-one-vote-out log-odds of a personal fit.

Every user gets a shrunk personal Bradley-Terry fit (:func:`ranking.bt.fit_bt_grouped`,
one batched Newton problem over all users), centred on a prior mean (zero in
:mod:`ranking.integrity`, so that only the user's own votes speak). Each vote is then
predicted from the user's *other* votes: removing vote ``i`` from user ``u``'s objective
moves the mode by one Newton step,
``theta_u^(-i) = theta_u + (H_u - w_i v_i x_i x_i^T)^-1 g_i`` with ``x_i = e_a - e_b``,
``g_i = w_i (p_i - y_i) x_i`` the vote's gradient and ``v_i = p_i (1 - p_i)``, so that by
Sherman-Morrison its log-odds become

    ``d_i^(-i) = d_i + w_i (p_i - y_i) h_i / (1 - w_i v_i h_i)``,  ``h_i = x_i^T H_u^-1 x_i``

(the approximate leave-one-out of generalised linear models; exact for one Newton step).
A vote won by ``a`` (``y_i = 1 > p_i``) thus lowers ``d_i^(-i)`` below ``d_i``: the fit
without it believes less in ``a``. The per-user ``k x k`` inverses are taken in chunks of
users, so memory stays bounded at any number of users.

Regressing a user's outcomes on these log-odds measures how well their votes predict
each other: an honest user, however unusual their taste, agrees with their own fit; a
coin flipper's votes predict nothing, and the leave-one-out removes the fit's chasing of
that noise. As a coin flipper's votes grow, though, their own fit flattens and the
slope's standard error stops shrinking; :func:`preference_strength` (the score statistic
of "all models equal", per vote) is the complementary test whose power grows with the
votes. Both are blind to the direction of a taste.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import expit
from scipy.stats import norm

from ranking.bt import fit_bt_grouped
from ranking.bt_solver import group_batches, pair_matrices
from ranking.shrinkage import learn_alpha
from ranking.types import FloatArray, IntArray, Matchups, Outcomes, Weights

__all__ = [
    "honest_null",
    "learn_user_alpha",
    "leave_one_out_logits",
    "logistic_slopes",
    "lower_tail",
    "preference_strength",
]

#: ``1.4826 * MAD`` estimates a normal standard deviation.
_MAD_SCALE = 1.4826
#: Least honest spread, as a share of the honest centre.
_MIN_SPREAD = 0.05
#: Largest number of float64 Hessian entries inverted at once (bounds memory to ~80 MB).
_MAX_ENTRIES = 10_000_000


def leave_one_out_logits(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights,
    users: IntArray,
    n_users: int,
    prior_mean: FloatArray,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """Each vote's log-odds under its user's shrunk fit, with and without the vote.

    Parameters
    ----------
    n_models : int
        Number of models ``k``.
    matchups, outcomes, weights
        ``(n, 2)``, ``(n,)``, ``(n,)`` the votes of every user.
    users : array of int
        ``(n,)`` user of each vote, in ``[0, n_users)``.
    n_users : int
        Number of users.
    prior_mean : ndarray
        ``(k,)`` or ``(n_users, k)`` prior mean of each user's strengths (natural-log).
    alpha : float
        Prior precision of a user's departure from ``prior_mean``.

    Returns
    -------
    d, d_loo : ndarray
        ``(n,)`` log-odds of the first model winning: from the user's fit, and from the
        fit without the vote (to first order, see the module docstring).
    """
    k = n_models
    users = np.asarray(users, dtype=np.intp)
    a, b = matchups[:, 0], matchups[:, 1]
    theta = fit_bt_grouped(
        k, matchups, outcomes, weights, groups=users, n_groups=n_users,
        prior_mean=prior_mean, alpha=alpha,
    )  # fmt: skip
    d = theta[users, a] - theta[users, b]
    p = expit(d)
    v = weights * p * (1.0 - p)
    leverage = np.empty_like(d)
    eye = alpha * np.eye(k)
    for start, stop, rows in group_batches(users, n_users, k, _MAX_ENTRIES):
        g = users[rows] - start
        hess = pair_matrices(k, a[rows], b[rows], v[rows], g, stop - start) + eye
        inv = np.linalg.inv(hess)
        ra, rb = a[rows], b[rows]
        leverage[rows] = inv[g, ra, ra] + inv[g, rb, rb] - 2.0 * inv[g, ra, rb]
    d_loo = d + weights * (p - outcomes) * leverage / (1.0 - v * leverage)
    return d, d_loo


def logistic_slopes(
    d: FloatArray, y: FloatArray, w: FloatArray, users: IntArray, n_users: int
) -> tuple[FloatArray, FloatArray]:
    """Per-user maximum-likelihood slope of ``y ~ expit(beta * d)`` and its standard error.

    Returns
    -------
    beta, se : ndarray
        ``(n_users,)``; NaN for a user whose ``d`` are all zero (or who has no votes).
    """
    beta = np.ones(n_users)
    info0 = np.bincount(users, weights=w * d * d, minlength=n_users)
    for _ in range(25):
        p = expit(beta[users] * d)
        score = np.bincount(users, weights=w * (y - p) * d, minlength=n_users)
        info = np.bincount(users, weights=w * p * (1 - p) * d * d, minlength=n_users)
        step = np.divide(score, info, out=np.zeros(n_users), where=info > 1e-12)
        beta = np.clip(beta + np.clip(step, -2.0, 2.0), -10.0, 10.0)
        if np.max(np.abs(step), initial=0.0) < 1e-8:
            break
    p = expit(beta[users] * d)
    info = np.bincount(users, weights=w * p * (1 - p) * d * d, minlength=n_users)
    se = np.full(n_users, np.nan)
    ok = info0 > 1e-12
    se[ok] = 1.0 / np.sqrt(np.maximum(info[ok], 1e-12))
    beta[~ok] = np.nan
    return beta, se


def preference_strength(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights,
    users: IntArray,
    n_users: int,
) -> tuple[FloatArray, FloatArray]:
    """How strongly each user's votes agree on *some* order of the models, per vote.

    The Rao score statistic of "no preferences" (all strengths equal, every vote a coin
    flip), ``S_u = g_u^T I_u^+ g_u`` with ``g_u = sum_i w_i (y_i - 1/2) x_i`` and
    ``I_u = sum_i w_i x_i x_i^T / 4``, is about ``chi^2_r(lambda_u)``, ``r`` the rank of
    ``I_u``, and ``lambda_u`` grows with the votes as ``n_u kappa_u``. Returned is
    ``kappa_u = (S_u - r) / n_u`` and its standard error ``sqrt(2 (r + 2 lambda_u)) / n_u``:
    a coin flipper's ``kappa`` tends to 0 as their votes grow, any consistent taste's to
    a positive value, in whatever direction the taste lies.

    Returns
    -------
    kappa, se : ndarray
        ``(n_users,)``; NaN for a user without votes.
    """
    k = n_models
    users = np.asarray(users, dtype=np.intp)
    a, b = matchups[:, 0], matchups[:, 1]
    r = weights * (outcomes - 0.5)
    size = n_users * k
    score = np.bincount(users * k + a, weights=r, minlength=size) - np.bincount(
        users * k + b, weights=r, minlength=size
    )
    score = score.reshape(n_users, k)
    stat, rank = np.zeros(n_users), np.zeros(n_users)
    for start, stop, rows in group_batches(users, n_users, k, _MAX_ENTRIES):
        info = pair_matrices(
            k, a[rows], b[rows], 0.25 * weights[rows], users[rows] - start, stop - start
        )
        values, vectors = np.linalg.eigh(info)
        keep = values > 1e-9 * np.maximum(values[:, -1:], 1e-12)
        proj = np.einsum("uji,uj->ui", vectors, score[start:stop])
        stat[start:stop] = np.sum(np.where(keep, proj**2 / np.where(keep, values, 1.0), 0.0), 1)
        rank[start:stop] = keep.sum(axis=1)
    n = np.bincount(users, weights=weights, minlength=n_users)
    kappa = np.full(n_users, np.nan)
    se = np.full(n_users, np.nan)
    ok = n > 0
    kappa[ok] = (stat[ok] - rank[ok]) / n[ok]
    se[ok] = np.sqrt(2.0 * (rank[ok] + 2.0 * np.maximum(stat[ok] - rank[ok], 0.0))) / n[ok]
    return kappa, se


def learn_user_alpha(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights,
    users: IntArray,
    n_users: int,
    prior_mean: FloatArray,
) -> float:
    """Prior precision of the personal fits: 3-fold held-out log-loss over 1,000 users.

    :func:`ranking.shrinkage.learn_alpha` counts rows, not weights: a row of integer
    weight is repeated that many times; other weights count as one vote a row.
    """
    w = np.asarray(weights, dtype=np.float64)
    whole = np.allclose(w, np.rint(w))
    rows = (
        np.repeat(np.arange(w.size), np.maximum(np.rint(w), 0).astype(np.intp)) if whole else None
    )
    if rows is not None:
        matchups, outcomes, users = matchups[rows], outcomes[rows], users[rows]
    return learn_alpha(
        n_models, matchups, outcomes, users, n_users, prior_mean, folds=3, max_groups=1_000
    )


def honest_null(stat: FloatArray, se: FloatArray, votes: npt.ArrayLike) -> tuple[float, float]:
    """Robust centre and spread of a per-user statistic among (mostly) honest users.

    The centre is the median; the spread is the MAD of the users with the most votes (at
    least the median), whose statistics are the most precise, less their typical noise
    ``se``, and at least ``5%`` of the centre. A few anomalous users move neither.
    Below 5 users: ``(1, 0.5)``.
    """
    stat, se = np.asarray(stat, dtype=np.float64), np.asarray(se, dtype=np.float64)
    if stat.size < 5:
        return 1.0, 0.5
    centre = float(np.median(stat))
    n = np.asarray(votes, dtype=np.float64)
    precise = n >= np.median(n)
    mad = _MAD_SCALE * float(np.median(np.abs(stat[precise] - centre)))
    spread = np.sqrt(max(mad**2 - float(np.median(se[precise] ** 2)), 0.0))
    return centre, max(float(spread), _MIN_SPREAD * abs(centre), 1e-12)


def lower_tail(stat: FloatArray, se: FloatArray, null: tuple[float, float]) -> FloatArray:
    """``Phi((stat - m) / sqrt(tau^2 + se^2))`` for ``null = (m, tau)``; 1 where NaN."""
    centre, spread = null
    z = (stat - centre) / np.sqrt(spread**2 + se**2)
    return np.where(np.isfinite(z), norm.cdf(np.nan_to_num(z)), 1.0)
