"""The Bradley-Terry sandwich (robust) covariance and its normal intervals.

Each model's sandwich variance is moderated toward the model-based one
(:func:`moderate_sandwich`), which the raw board and the style-controlled board
(:mod:`ranking.style_control`) share.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from ranking.bt import DEFAULT_ALPHA, bt_hessian
from ranking.bt_solver import pair_matrices
from ranking.intervals.summary import normal_intervals
from ranking.types import FloatArray, Matchups, Outcomes, Ratings, Weights

__all__ = [
    "MODERATION_VOTES",
    "centred_inverse",
    "moderate_sandwich",
    "moderated_covariance",
    "sandwich_covariance",
    "sandwich_intervals",
]

#: Votes a model needs before its sandwich variance outweighs the model-based one.
MODERATION_VOTES = 20.0


def sandwich_covariance(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> FloatArray:
    """Robust (sandwich) covariance ``H^-1 M H^-1`` of Bradley-Terry strengths.

    ``H`` is the Hessian of the penalised negative log-likelihood and
    ``M = sum_i w_i (p_i - y_i)^2 x_i x_i^T`` the outer product of per-vote scores (a
    collapsed row of weight ``w`` stands for ``w`` identical votes). Unlike ``H^-1`` it
    stays valid when ties or heterogeneous voters make the Bernoulli variance wrong.

    Parameters
    ----------
    theta : Ratings
        ``(k,)`` fitted natural-log strengths.
    matchups, outcomes, weights
        The votes ``theta`` was fitted on.
    alpha : float
        The prior precision used in the fit.

    Returns
    -------
    ndarray
        ``(k, k)`` covariance in natural-log units. Every vote's score is orthogonal to
        a common shift, so the covariance describes ratings relative to their mean.
    """
    bread, meat = _bread_and_meat(theta, matchups, outcomes, weights, alpha)
    cov: FloatArray = bread @ meat @ bread
    return 0.5 * (cov + cov.T)


def _bread_and_meat(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """``C H^-1 C`` and ``M`` of the sandwich, each computed once."""
    matchups = np.asarray(matchups, dtype=np.intp)
    w = np.ones(len(outcomes)) if weights is None else np.asarray(weights, dtype=np.float64)
    a, b = matchups[:, 0], matchups[:, 1]
    r2 = w * (expit(theta[a] - theta[b]) - outcomes) ** 2
    meat = pair_matrices(theta.shape[0], a, b, r2)[0]
    bread = centred_inverse(bt_hessian(theta, matchups, outcomes, w, alpha))
    return bread, meat


def centred_inverse(hessian: FloatArray) -> FloatArray:
    """``C H^-1 C``, the inverse Hessian of ratings relative to their mean (``C = I - J``).

    A Bradley-Terry Hessian has the all-ones vector as an eigenvector whose eigenvalue is
    only the prior precision ``alpha``: inverted as it is, that direction carries
    ``1 / alpha``, and rounding errors of that size swamp everything else when ``alpha``
    is tiny. Raising that one eigenvalue to the scale of the rest (``H + c J``) before
    inverting changes nothing else, and the centring then removes it exactly.
    """
    k = hessian.shape[0]
    shift = np.full((k, k), max(float(np.trace(hessian)) / k, 1e-12) / k)
    centre = np.eye(k) - 1.0 / k
    inverse: FloatArray = centre @ np.linalg.inv(hessian + shift) @ centre
    return inverse


def sandwich_intervals(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = 0.95,
    prior_votes: float = MODERATION_VOTES,
) -> tuple[Ratings, Ratings]:
    """Normal intervals ``theta +- z * sd`` from a moderated sandwich variance.

    The sandwich variance of a model estimates its uncertainty from that model's own
    residuals, which is right with many votes and wrong with a handful: two ties with an
    evenly matched opponent leave residuals near zero, and a sandwich interval of a few
    points. Each model's variance is therefore moderated toward the model-based
    (Bernoulli) variance ``H^-1``, weighing the sandwich by the model's ``n`` votes
    against ``prior_votes``::

        var = (n * sandwich + prior_votes * model_based) / (n + prior_votes)

    With thousands of votes this is the sandwich; with two it is the model-based
    variance, which does not depend on the residuals. Natural-log units.
    """
    covariance = moderated_covariance(
        theta, matchups, outcomes, weights, alpha=alpha, prior_votes=prior_votes
    )
    return normal_intervals(theta, covariance, confidence)


def moderated_covariance(
    theta: Ratings,
    matchups: Matchups,
    outcomes: Outcomes,
    weights: Weights | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    prior_votes: float = MODERATION_VOTES,
) -> FloatArray:
    """The covariance behind :func:`sandwich_intervals`: moderated variances, sandwich
    correlations.

    Its diagonal is the moderated variance of :func:`sandwich_intervals`; the
    correlations between models are the sandwich's. It is what the leaderboard's
    ``p_best`` and rank range draw from (a Gaussian approximation with these moments).
    Natural-log units, ``(k, k)``.
    """
    bread, meat = _bread_and_meat(theta, matchups, outcomes, weights, alpha)
    w = np.ones(len(outcomes)) if weights is None else np.asarray(weights, dtype=np.float64)
    n = np.bincount(np.ravel(matchups), weights=np.repeat(w, 2), minlength=theta.shape[0])
    return moderate_sandwich(bread, meat, n, prior_votes)


def moderate_sandwich(
    bread: FloatArray, meat: FloatArray, votes: npt.ArrayLike, prior_votes: float
) -> FloatArray:
    """The sandwich ``bread @ meat @ bread`` with each variance moderated toward the
    model-based ``bread``'s by the parameter's ``votes`` against ``prior_votes``, and the
    sandwich's correlations kept.

    A parameter whose sandwich variance is zero keeps its moderated variance,
    uncorrelated. Shared by the raw board (:func:`moderated_covariance`) and the
    style-controlled one (:mod:`ranking.style_control`).
    """
    votes = np.asarray(votes, dtype=np.float64)
    sandwich = bread @ meat @ bread
    sandwich = 0.5 * (sandwich + sandwich.T)
    s_var, b_var = np.clip(np.diag(sandwich), 0.0, None), np.clip(np.diag(bread), 0.0, None)
    variance = (votes * s_var + prior_votes * b_var) / (votes + prior_votes)
    s_sd = np.sqrt(s_var)
    scale = np.divide(np.sqrt(variance), s_sd, out=np.zeros_like(s_sd), where=s_sd > 0)
    covariance: FloatArray = sandwich * scale[:, None] * scale[None, :]
    alone = s_sd <= 0
    covariance[alone, alone] = variance[alone]
    return covariance
