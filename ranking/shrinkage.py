"""Empirical Bayes: how strongly to shrink each user's ratings toward a prior.

Each user's strengths are modelled as ``theta_u = mu_u + delta_u`` with
``delta_u ~ N(0, I / alpha)``: ``mu_u`` is what is known before the user votes (the
aggregate, or a prediction from the user's queries) and ``1 / sqrt(alpha)`` the typical
size of a user's departure from it. ``alpha`` is learnt from the users' own votes, one
scalar for everyone, in one of two ways:

``"cv"`` (the default)
    minimise the log-loss of held-out votes, ``folds``-fold over every user's votes.
    It scores what the ratings are for, predicting votes, whatever the tie convention.
``"evidence"``
    maximise the summed Laplace evidence of all users (type-II maximum likelihood).
    Exact in spirit and cheaper, but a tie counted as half a win and half a loss has the
    likelihood ``sqrt(p (1 - p))``, which is not a normalised probability and peaks at
    equal strengths: with many ties the evidence over-shrinks.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize_scalar

from ranking.bt_solver import Problem, newton
from ranking.types import Matchups, Outcomes

__all__ = [
    "ALPHA_BOUNDS",
    "ALPHA_METHODS",
    "cross_validated_alpha",
    "evidence_alpha",
    "later_votes_alpha",
    "learn_alpha",
    "search_log_alpha",
]

#: The ways :func:`learn_alpha` can choose the prior precision.
ALPHA_METHODS = ("cv", "evidence")

#: Search range for the prior precision (natural-log units): a deviation sd from
#: 0.03 nats (5 Elo points) to 10 nats (1,700 Elo points).
ALPHA_BOUNDS = (1e-2, 1e3)
#: The Newton solver's limits, those of :func:`ranking.bt.fit_bt_grouped`.
_MAX_ITER, _TOL = 100, 1e-12


def _subsample(
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    mu: npt.NDArray[np.float64],
    max_groups: int,
    rng: np.random.Generator,
) -> tuple[Matchups, Outcomes, npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Keep the votes of at most ``max_groups`` random groups, renumbered from zero."""
    n_groups = mu.shape[0]
    if n_groups <= max_groups:
        return matchups, outcomes, groups, mu
    chosen = np.sort(rng.choice(n_groups, max_groups, replace=False))
    remap = np.full(n_groups, -1, dtype=np.intp)
    remap[chosen] = np.arange(max_groups)
    keep = remap[groups] >= 0
    return matchups[keep], outcomes[keep], remap[groups[keep]], mu[chosen]


def search_log_alpha(loss: Callable[[float], float], bounds: tuple[float, float]) -> float:
    """Minimise ``loss(log alpha)`` over ``bounds``; returns ``alpha``."""
    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    result = minimize_scalar(loss, bounds=(lo, hi), method="bounded", options={"xatol": 0.05})
    return float(math.exp(result.x))


def learn_alpha(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    n_groups: int,
    prior_mean: npt.ArrayLike,
    *,
    method: str = "cv",
    bounds: tuple[float, float] = ALPHA_BOUNDS,
    max_groups: int = 10_000,
    folds: int = 5,
    rng: np.random.Generator | int | None = 0,
) -> float:
    """Learn the prior precision ``alpha`` from the groups' votes.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups, outcomes
        Every group's votes.
    groups : array of int
        ``(n,)`` group (user) of each vote.
    n_groups : int
        Number of groups.
    prior_mean : array_like
        ``(k,)`` or ``(n_groups, k)`` prior mean, natural-log units.
    method : {"cv", "evidence"}
        Held-out log-loss or Laplace evidence (see the module docstring).
    bounds : (float, float)
        Search range for ``alpha``.
    max_groups : int
        Learn from a random subset of at most this many groups: one scalar is well
        determined by a few thousand users, and the full fit comes after.
    folds : int
        Folds of the cross-validation.
    rng : numpy.random.Generator or int, optional
        Chooses the subset and the folds.

    Returns
    -------
    float
        The learnt ``alpha``; at the upper bound when users do not differ detectably
        from the prior.
    """
    if method not in ALPHA_METHODS:
        raise ValueError(f"Argument 'method' must be one of {ALPHA_METHODS}, not {method!r}.")
    generator = np.random.default_rng(rng)
    groups = np.asarray(groups, dtype=np.intp)
    mu = np.broadcast_to(np.asarray(prior_mean, dtype=np.float64), (n_groups, n_models))
    matchups, outcomes, groups, mu = _subsample(
        np.asarray(matchups, dtype=np.intp), np.asarray(outcomes), groups, mu, max_groups, generator
    )
    if method == "evidence":
        return evidence_alpha(n_models, matchups, outcomes, groups, mu, bounds)
    return cross_validated_alpha(n_models, matchups, outcomes, groups, mu, bounds, folds, generator)


def cross_validated_alpha(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    prior_mean: npt.NDArray[np.float64],
    bounds: tuple[float, float] = ALPHA_BOUNDS,
    folds: int = 5,
    rng: np.random.Generator | int | None = 0,
) -> float:
    """The ``alpha`` with the lowest ``folds``-fold held-out log-loss (ties as 0.5).

    All folds are one problem, collapsed once: fold ``f``'s training votes of group ``g``
    are group ``f * G + g``, and at each ``alpha`` tried every fold's fit starts from its
    fit at the ``alpha`` before.
    """
    matchups = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    outcomes = np.asarray(outcomes, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.intp)
    n_groups = prior_mean.shape[0]
    fold = np.random.default_rng(rng).integers(0, folds, size=len(outcomes))
    train = [np.flatnonzero(fold != f) for f in range(folds)]
    rows = np.concatenate(train)
    fit_groups = np.concatenate([groups[r] + f * n_groups for f, r in enumerate(train)])
    mu = np.tile(prior_mean, (folds, 1))
    size = folds * n_groups
    fits = Problem(
        n_models, size, matchups[rows], outcomes[rows], np.ones(rows.size), fit_groups, mu,
        np.ones(size),
    )  # fmt: skip
    # The held-out votes of fold f, scored by fold f's fit: no prior (alpha zero).
    held_out = Problem(
        n_models, size, matchups, outcomes, np.ones(len(outcomes)), fold * n_groups + groups,
        mu, np.zeros(size),
    )  # fmt: skip
    warm = mu

    def held_out_loss(log_alpha: float) -> float:
        nonlocal warm
        alpha = np.full(size, math.exp(log_alpha))
        warm = newton(fits.with_alpha(alpha), warm, _MAX_ITER, _TOL)
        return float(held_out.objective(warm).sum()) / len(outcomes)

    return search_log_alpha(held_out_loss, bounds)


def later_votes_alpha(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    prior_mean: npt.ArrayLike,
    earlier: npt.NDArray[np.bool_],
    bounds: tuple[float, float] = ALPHA_BOUNDS,
) -> float:
    """The ``alpha`` whose fits of each group's earlier votes best predict its later ones.

    Each group's ``earlier`` votes are fitted under the prior ``N(prior_mean, I / alpha)``
    and its other votes scored by that fit (log-loss, ties as 0.5). Unlike
    :func:`cross_validated_alpha`, whose folds mix every vote of a group, this asks what a
    person's first votes say of their next ones: where taste drifts, or first votes
    cover other prompts than later ones, it shrinks harder.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups, outcomes
        Every group's votes, earlier and later.
    groups : array of int
        ``(n,)`` group of each vote.
    prior_mean : array_like
        ``(n_groups, n_models)`` prior mean of each group, natural-log units.
    earlier : array of bool
        ``(n,)`` True for a vote fitted, False for one scored.
    bounds : (float, float)
        Search range for ``alpha``.
    """
    mu = np.ascontiguousarray(prior_mean, dtype=np.float64)
    n_groups = mu.shape[0]
    matchups = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    outcomes = np.asarray(outcomes, dtype=np.float64)
    groups = np.asarray(groups, dtype=np.intp)
    earlier = np.asarray(earlier, dtype=bool)
    later = ~earlier
    if not later.any():
        raise ValueError("Argument 'earlier' must leave some votes to score.")
    fits = Problem(
        n_models, n_groups, matchups[earlier], outcomes[earlier], np.ones(int(earlier.sum())),
        groups[earlier], mu, np.ones(n_groups),
    )  # fmt: skip
    scored = Problem(
        n_models, n_groups, matchups[later], outcomes[later], np.ones(int(later.sum())),
        groups[later], mu, np.zeros(n_groups),
    )  # fmt: skip
    warm = mu

    def later_loss(log_alpha: float) -> float:
        nonlocal warm
        warm = newton(
            fits.with_alpha(np.full(n_groups, math.exp(log_alpha))), warm, _MAX_ITER, _TOL
        )
        return float(scored.objective(warm).sum()) / int(later.sum())

    return search_log_alpha(later_loss, bounds)


def evidence_alpha(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    prior_mean: npt.NDArray[np.float64],
    bounds: tuple[float, float] = ALPHA_BOUNDS,
) -> float:
    """The ``alpha`` that maximises the summed Laplace evidence of the groups."""
    n_groups = prior_mean.shape[0]
    problem = Problem(
        n_models, n_groups, np.asarray(matchups, dtype=np.intp), np.asarray(outcomes),
        np.ones(len(outcomes)), np.asarray(groups, dtype=np.intp), prior_mean, np.ones(n_groups),
    )  # fmt: skip
    warm = np.asarray(prior_mean)

    def negative_evidence(log_alpha: float) -> float:
        nonlocal warm
        fit = problem.with_alpha(np.full(n_groups, math.exp(log_alpha)))
        warm = newton(fit, warm, _MAX_ITER, _TOL)
        return -float(fit.laplace(warm, variances=False)[0].sum())

    return search_log_alpha(negative_evidence, bounds)
