"""Empirical Bayes: how strongly to shrink each user's ratings toward a prior.

Each user's strengths are modelled as ``theta_u = mu_u + delta_u`` with
``delta_u ~ N(0, I / alpha)``: ``mu_u`` is what is known before the user votes (the
aggregate, or a prediction from the user's queries) and ``1 / sqrt(alpha)`` the typical
size of a user's departure from it. ``alpha`` is learnt from the data by maximising the
summed Laplace evidence of all users (type-II maximum likelihood), so the strength of
the shrinkage is neither hand-set nor tuned on held-out answers.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize_scalar

from ranking.bt import fit_bt_posterior
from ranking.types import Matchups, Outcomes

__all__ = ["ALPHA_BOUNDS", "empirical_bayes_alpha"]

#: Search range for the prior precision (natural-log units): a deviation sd from
#: 0.03 nats (5 Elo points) to 10 nats (1,700 Elo points).
ALPHA_BOUNDS = (1e-2, 1e3)


def empirical_bayes_alpha(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    groups: npt.NDArray[np.intp],
    n_groups: int,
    prior_mean: npt.ArrayLike,
    *,
    bounds: tuple[float, float] = ALPHA_BOUNDS,
    max_groups: int = 20_000,
    rng: np.random.Generator | int | None = 0,
) -> float:
    """The prior precision that maximises the summed Laplace evidence of the groups.

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
    bounds : (float, float)
        Search range for ``alpha``.
    max_groups : int
        Estimate from a random subset of at most this many groups (a single scalar is
        well determined by a few thousand users; the full fit comes after).
    rng : numpy.random.Generator or int, optional
        Chooses the subset.

    Returns
    -------
    float
        The estimated ``alpha``; at a bound when the data push it there (at the upper
        bound, users do not differ detectably from the prior).
    """
    groups = np.asarray(groups, dtype=np.intp)
    mu = np.broadcast_to(np.asarray(prior_mean, dtype=np.float64), (n_groups, n_models))
    if n_groups > max_groups:
        chosen = np.sort(np.random.default_rng(rng).choice(n_groups, max_groups, replace=False))
        remap = np.full(n_groups, -1, dtype=np.intp)
        remap[chosen] = np.arange(max_groups)
        keep = remap[groups] >= 0
        matchups, outcomes, groups = matchups[keep], outcomes[keep], remap[groups[keep]]
        mu, n_groups = mu[chosen], max_groups
    warm: dict[str, npt.NDArray[np.float64]] = {"theta": np.array(mu)}

    def negative_evidence(log_alpha: float) -> float:
        fit = fit_bt_posterior(
            n_models,
            matchups,
            outcomes,
            groups=groups,
            n_groups=n_groups,
            prior_mean=mu,
            alpha=math.exp(log_alpha),
            initial_params=warm["theta"],
        )
        warm["theta"] = fit.theta
        return -float(fit.log_evidence.sum())

    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    result = minimize_scalar(
        negative_evidence, bounds=(lo, hi), method="bounded", options={"xatol": 0.02}
    )
    return float(math.exp(result.x))
