"""The prior precision of users' style coefficients, learnt from all users' votes: by
held-out log-loss over folds, by the summed Laplace evidence, or by how well each
user's earlier votes predict their later ones; and the held-out gain of per-user taste
over the aggregate's that the fallback rule reads."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ranking.personal_style.posterior import (
    check_style_votes,
    newton_steps,
    ridge_objective,
    vote_losses,
)
from ranking.personal_style.results import STYLE_ALPHA_METHODS, HeldOutGain, StyleAlphaMethod
from ranking.shrinkage import ALPHA_BOUNDS, search_log_alpha
from ranking.types import FloatArray, IntArray, Outcomes

__all__ = [
    "user_style_alpha",
]


def _folds(
    x: FloatArray,
    y: Outcomes,
    off: FloatArray,
    groups: IntArray,
    n_users: int,
    folds: int,
    rng: np.random.Generator | int | None,
) -> tuple[tuple[FloatArray, Outcomes, FloatArray, IntArray], IntArray]:
    """All folds as one problem: fold ``f``'s training votes of user ``g`` are group
    ``f * U + g`` (as :func:`ranking.shrinkage.cross_validated_alpha` does). Returns the
    training problem and each vote's held-out group."""
    fold = np.random.default_rng(rng).integers(0, folds, size=y.size)
    train = [np.flatnonzero(fold != f) for f in range(folds)]
    rows = np.concatenate(train)
    fit_groups = np.concatenate([groups[r] + f * n_users for f, r in enumerate(train)])
    return (x[rows], y[rows], off[rows], fit_groups), fold * n_users + groups


def _held_out_losses(
    x: FloatArray,
    y: Outcomes,
    off: FloatArray,
    held_group: IntArray,
    beta: FloatArray,
) -> FloatArray:
    """Per-vote log-loss of each vote under its held-out fold's coefficients."""
    return vote_losses(off + np.einsum("ij,ij->i", x, beta[held_group]), y)


def user_style_alpha(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
    *,
    method: StyleAlphaMethod = "cv",
    earlier: npt.ArrayLike | None = None,
    bounds: tuple[float, float] = ALPHA_BOUNDS,
    folds: int = 5,
    rng: np.random.Generator | int | None = 0,
) -> tuple[float, HeldOutGain]:
    """Learn the prior precision of the users' style coefficients, and score it.

    Parameters
    ----------
    differences, outcomes, offsets, users, n_users, aggregate
        As :func:`fit_user_style_posterior`.
    method : {"cv", "evidence", "later"}
        Held-out log-loss over ``folds`` folds of every user's votes, the summed Laplace
        evidence (which over-shrinks with many ties, as for the ratings), or the log-loss
        of each user's later votes under the fit of their ``earlier`` ones (what a
        person's first votes say of their next: where taste drifts, or later votes are
        on other prompts, it shrinks harder than ``"cv"``).
    earlier : array_like of bool, optional
        ``(n,)`` True for a vote fitted, False for one judged: needed by ``"later"``.
    bounds : (float, float)
        Search range of ``alpha``: :data:`ranking.shrinkage.ALPHA_BOUNDS` by default.
    folds : int
        Folds of the cross-validation, and of the held-out comparison returned (not
        used by ``"later"``).
    rng : numpy.random.Generator or int, optional
        Chooses the folds.

    Returns
    -------
    alpha : float
        The learnt prior precision (at the upper bound where users do not differ
        detectably from the aggregate).
    held_out : HeldOutGain
        The per-user coefficients at ``alpha`` against the aggregate's, on the same
        held-out votes (the folds, or the later votes for ``"later"``).
    """
    if method not in STYLE_ALPHA_METHODS:
        raise ValueError(f"Argument 'method' must be one of {STYLE_ALPHA_METHODS}, not {method!r}.")
    if folds < 2:
        raise ValueError(f"Argument 'folds' must be at least 2, not {folds}.")
    x, y, off, groups, mu = check_style_votes(
        differences, outcomes, offsets, users, n_users, aggregate
    )
    if y.size == 0:
        raise ValueError("Argument 'outcomes' must hold some votes to learn from.")
    if method == "later":
        if earlier is None:
            raise ValueError("Argument 'earlier' is needed by method 'later'.")
        fitted = np.asarray(earlier, dtype=bool).reshape(-1)
        if fitted.size != y.size:
            raise ValueError(f"Argument 'earlier' must have {y.size} entries, not {fitted.size}.")
        held = np.flatnonzero(~fitted)
        if held.size == 0:
            raise ValueError("Argument 'earlier' must leave some votes to judge.")
        fit = (x[fitted], y[fitted], off[fitted], groups[fitted])
        held_group, size = groups[held], n_users
    else:
        fit, held_group = _folds(x, y, off, groups, n_users, folds, rng)
        held, size = np.arange(y.size), folds * n_users
    prior = np.tile(mu, (size, 1))
    warm = prior

    def held_out(log_alpha: float) -> FloatArray:
        nonlocal warm
        warm, _ = newton_steps(fit, prior, np.full(size, math.exp(log_alpha)), warm)
        return _held_out_losses(x[held], y[held], off[held], held_group, warm)

    if method == "evidence":
        alpha = _evidence_alpha((x, y, off, groups), np.tile(mu, (n_users, 1)), bounds)
    else:
        alpha = search_log_alpha(lambda a: float(held_out(a).mean()), bounds)
    per_user = held_out(math.log(alpha))
    baseline = vote_losses(off[held] + x[held] @ mu, y[held])
    return alpha, _gain(per_user, baseline, groups[held], n_users)


def _evidence_alpha(
    fit: tuple[FloatArray, Outcomes, FloatArray, IntArray],
    prior: FloatArray,
    bounds: tuple[float, float],
) -> float:
    """The ``alpha`` that maximises the users' summed Laplace evidence."""
    n_users, p = prior.shape
    warm = prior

    def negative_evidence(log_alpha: float) -> float:
        nonlocal warm
        alpha = np.full(n_users, math.exp(log_alpha))
        warm, hessian = newton_steps(fit, prior, alpha, warm)
        _, logdet = np.linalg.slogdet(hessian)
        value = ridge_objective(warm, fit, prior, alpha) + 0.5 * logdet - 0.5 * p * np.log(alpha)
        return float(value.sum())

    return search_log_alpha(negative_evidence, bounds)


def _gain(
    per_user: FloatArray, baseline: FloatArray, groups: IntArray, n_users: int
) -> HeldOutGain:
    """The paired held-out difference, its standard error clustered by user."""
    n = per_user.size
    difference = baseline - per_user
    gain = float(difference.mean())
    # the ratio estimator's clustered variance: per-user sums of the centred differences
    clusters = np.bincount(groups, weights=difference - gain, minlength=n_users)
    voted = np.bincount(groups, minlength=n_users) > 0
    m = int(voted.sum())
    se = math.sqrt(m / max(m - 1, 1) * float((clusters[voted] ** 2).sum())) / n if n else math.nan
    return HeldOutGain(float(per_user.mean()), float(baseline.mean()), gain, se, n)
