"""Bradley-Terry maximum likelihood with a Gaussian prior, for one or many groups at once.

The model: ``P(a beats b) = 1 / (1 + exp(theta_b - theta_a))``, a tie counting as half a
win and half a loss (the FastChat and arena-rank convention). Every fit minimises

    ``sum_i w_i * logloss(y_i, theta[g_i, a_i] - theta[g_i, b_i])
      + alpha_g / 2 * ||theta_g - mu_g||^2``

for each group ``g`` independently, by Newton's method with an analytic gradient and
Hessian and a backtracking line search. One group is the aggregate leaderboard; many
groups are the bootstrap replicates or the users of a per-user fit, all solved in one
call by :mod:`ranking.bt_solver`: the votes collapsed to per-group pair counts, then each
group's ``k x k`` Newton system in a compiled loop (``pair_matrices`` is re-exported
here).

The prior does two jobs. With the default tiny ``alpha`` (``DEFAULT_ALPHA``) it only keeps
the problem well posed: ratings are identified (each connected part of the comparison
graph is centred on ``mu``, zero by default), and a model that never lost stays finite, at
about ``log(n_wins / alpha)`` nats above its opponents, instead of running off to infinity.
With a real ``alpha`` and ``mu`` (the aggregate), it is the shrinkage prior of a per-user
fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, TypedDict, Unpack, cast

import numpy as np
import numpy.typing as npt

from ranking.bt_solver import Problem, newton
from ranking.types import FloatArray, IntArray, Matchups, Outcomes, Ratings, Weights

__all__ = [
    "DEFAULT_ALPHA",
    "GroupedOptions",
    "GroupedVotes",
    "VoteOptions",
    "Posterior",
    "bt_gradient",
    "bt_hessian",
    "bt_objective",
    "fit_bt",
    "fit_bt_grouped",
    "fit_bt_posterior",
    "grouped_votes",
]

#: Prior precision (natural-log units) of a plain fit: negligible next to any real data.
DEFAULT_ALPHA = 1e-3


@dataclass(frozen=True)
class Posterior:
    """Grouped Bradley-Terry fit with its Laplace approximation.

    Attributes
    ----------
    theta : ndarray
        ``(G, k)`` posterior modes (natural-log strengths).
    variance : ndarray
        ``(G, k)`` posterior variance of each strength (diagonal of ``H^-1``).
    relative_variance : ndarray
        ``(G, k)`` posterior variance of each strength relative to the group's mean
        strength: what a plain fit, whose mean the data cannot fix, can say.
    log_evidence : ndarray
        ``(G,)`` Laplace approximation of each group's log marginal likelihood.
    """

    theta: npt.NDArray[np.float64]
    variance: npt.NDArray[np.float64]
    relative_variance: npt.NDArray[np.float64]
    log_evidence: npt.NDArray[np.float64]


def _as_group_array(value: float | npt.ArrayLike, n_groups: int, name: str) -> FloatArray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(n_groups, float(arr))
    if arr.shape != (n_groups,):
        raise ValueError(f"Argument '{name}' must be a scalar or have shape ({n_groups},).")
    if np.any(arr <= 0) or not np.all(np.isfinite(arr)):
        raise ValueError(f"Argument '{name}' must be positive and finite, not {value!r}.")
    return arr


def _as_prior_mean(value: npt.ArrayLike | None, n_groups: int, n_models: int) -> FloatArray:
    if value is None:
        return np.zeros((n_groups, n_models))
    arr = np.asarray(value, dtype=np.float64)
    return np.broadcast_to(arr, (n_groups, n_models)).copy()


class VoteOptions(TypedDict, total=False):
    """Keyword options of :func:`grouped_votes`: the groups, prior and starting point."""

    groups: IntArray | None
    n_groups: int
    prior_mean: npt.ArrayLike | None
    alpha: float | npt.ArrayLike
    initial_params: FloatArray | None


class GroupedOptions(VoteOptions, total=False):
    """Keyword options of :func:`fit_bt_grouped` and :func:`fit_bt_posterior`."""

    max_iter: int
    tol: float


class GroupedVotes(NamedTuple):
    """The arguments of a grouped fit as arrays, checked (see :func:`grouped_votes`)."""

    matchups: npt.NDArray[np.intp]
    outcomes: FloatArray
    weights: FloatArray
    groups: npt.NDArray[np.intp]
    prior_mean: FloatArray
    alpha: FloatArray
    initial: FloatArray
    n_groups: int


def grouped_votes(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    *,
    groups: IntArray | None = None,
    n_groups: int = 1,
    prior_mean: npt.ArrayLike | None = None,
    alpha: float | npt.ArrayLike = DEFAULT_ALPHA,
    initial_params: FloatArray | None = None,
) -> GroupedVotes:
    """The votes, prior and starting point of :func:`fit_bt_grouped` as checked arrays.

    Raises
    ------
    ValueError
        Naming the argument whose length, shape, index or value is wrong.
    """
    matchups = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    outcomes = np.asarray(outcomes, dtype=np.float64)
    n = matchups.shape[0]
    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    groups = np.zeros(n, dtype=np.intp) if groups is None else np.asarray(groups, dtype=np.intp)
    if outcomes.shape != (n,) or weights.shape != (n,) or groups.shape != (n,):
        raise ValueError("Arguments 'outcomes', 'weights' and 'groups' must have one entry a row.")
    if n and (matchups.min() < 0 or matchups.max() >= n_models):
        raise ValueError(f"Argument 'matchups' must hold model indices below {n_models}.")
    if n and (groups.min() < 0 or groups.max() >= n_groups):
        raise ValueError(f"Argument 'groups' must hold group indices below {n_groups}.")
    alphas = _as_group_array(alpha, n_groups, "alpha")
    mu = _as_prior_mean(prior_mean, n_groups, n_models)
    theta = mu.copy() if initial_params is None else np.array(initial_params, dtype=np.float64)
    if theta.shape != (n_groups, n_models):
        raise ValueError(
            f"Argument 'initial_params' must have shape ({n_groups}, {n_models}), "
            f"not {theta.shape}."
        )
    return GroupedVotes(matchups, outcomes, weights, groups, mu, alphas, theta, n_groups)


def fit_bt_grouped(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    **options: Unpack[GroupedOptions],
) -> FloatArray:
    """Fit Bradley-Terry strengths for many independent groups of votes at once.

    Parameters
    ----------
    n_models : int
        Number of models ``k``; indices in ``matchups`` are below it.
    matchups : Matchups
        ``(n, 2)`` model indices.
    outcomes : Outcomes
        ``(n,)`` outcome for the first model: 1, 0.5 (tie) or 0.
    weights : Weights, optional
        ``(n,)`` vote counts; ones by default.
    **options
        Keywords only (:class:`GroupedOptions`):

        ``groups`` (array of int)
            ``(n,)`` group of each row, below ``n_groups``; all rows in group 0 by
            default.
        ``n_groups`` (int)
            Number of groups ``G``; 1 by default.
        ``prior_mean`` (array_like)
            ``(k,)`` or ``(G, k)`` prior mean (natural-log units); zero by default.
        ``alpha`` (float or array_like)
            Prior precision, one for all groups or ``(G,)``; ``DEFAULT_ALPHA`` by default.
        ``initial_params`` (ndarray)
            ``(G, k)`` starting point; the prior mean by default.
        ``max_iter`` (int)
            Most Newton iterations; 100 by default.
        ``tol`` (float)
            Convergence when half the squared Newton decrement is below
            ``tol * (1 + |objective|)`` in every group; ``1e-12`` by default.

    Returns
    -------
    ndarray
        ``(G, k)`` natural-log strengths. A model a group never saw gets the prior mean.

    Raises
    ------
    RuntimeError
        If Newton's method does not converge in ``max_iter`` iterations.
    """
    return _solve(n_models, matchups, outcomes, weights, options, posterior=False).theta


def fit_bt_posterior(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    **options: Unpack[GroupedOptions],
) -> Posterior:
    """Like :func:`fit_bt_grouped`, with each group's Laplace posterior and evidence.

    With the Gaussian prior ``N(mu_g, I / alpha_g)``, the posterior of group ``g`` is
    approximated by ``N(theta_g, H_g^-1)`` where ``H_g`` is the Hessian of the objective at
    the mode, and the log marginal likelihood (evidence) by
    ``-objective_g + k/2 log(alpha_g) - 1/2 log det H_g`` (Laplace's method; MacKay 1992).
    Maximising the summed evidence over ``alpha`` is empirical Bayes.

    Returns
    -------
    Posterior
        Modes, posterior variances of each strength, and log evidence per group.
    """
    return _solve(n_models, matchups, outcomes, weights, options, posterior=True)


def _solve(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None,
    options: GroupedOptions,
    *,
    posterior: bool,
) -> Posterior:
    solver_keys = ("max_iter", "tol")  # the rest go to grouped_votes, a wrong key a TypeError
    vote_options = cast(
        VoteOptions, {key: value for key, value in options.items() if key not in solver_keys}
    )
    votes = grouped_votes(n_models, matchups, outcomes, weights, **vote_options)
    max_iter, tol = options.get("max_iter", 100), options.get("tol", 1e-12)
    g = votes.n_groups
    problem = Problem(
        n_models, g, votes.matchups, votes.outcomes, votes.weights, votes.groups,
        votes.prior_mean, votes.alpha,
    )  # fmt: skip
    theta = newton(problem, votes.initial, max_iter, tol)
    if not posterior:
        unknown = np.full((g, n_models), np.nan)
        return Posterior(theta, unknown, unknown, np.full(g, np.nan))
    evidence, variance, relative = problem.laplace(theta)
    return Posterior(theta, variance, relative, evidence)


def fit_bt(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    initial_params: Ratings | None = None,
    max_iter: int = 100,
    tol: float = 1e-12,
) -> Ratings:
    """Fit one Bradley-Terry model; natural-log strengths that sum to zero.

    See :func:`fit_bt_grouped` for the parameters; this is its one-group case with a
    zero prior mean, so the strengths of each connected part of the graph sum to zero.
    """
    initial = None if initial_params is None else np.asarray(initial_params)[None, :]
    theta = fit_bt_grouped(
        n_models,
        matchups,
        outcomes,
        weights,
        alpha=alpha,
        initial_params=initial,
        max_iter=max_iter,
        tol=tol,
    )
    return theta[0]


def _single_problem(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None,
    alpha: float,
) -> Problem:
    n = len(outcomes)
    k = theta.shape[0]
    return Problem(
        k,
        1,
        np.asarray(matchups, dtype=np.intp),
        np.asarray(outcomes, dtype=np.float64),
        np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64),
        np.zeros(n, dtype=np.intp),
        np.zeros((1, k)),
        np.array([alpha]),
    )


def bt_objective(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> float:
    """Penalised negative log-likelihood of one group at ``theta`` (natural-log units)."""
    problem = _single_problem(theta, matchups, outcomes, weights, alpha)
    return float(problem.objective(theta[None, :])[0])


def bt_gradient(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> Ratings:
    """Gradient of :func:`bt_objective` with respect to ``theta``."""
    problem = _single_problem(theta, matchups, outcomes, weights, alpha)
    return problem.gradient(theta[None, :])[0]


def bt_hessian(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> FloatArray:
    """Hessian ``(k, k)`` of :func:`bt_objective` with respect to ``theta``."""
    problem = _single_problem(theta, matchups, outcomes, weights, alpha)
    return problem.hessian(theta[None, :])[0]
