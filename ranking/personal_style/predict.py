"""What a user's style coefficients say of a vote: the win probability, the strengths
of a person's board before any answer is seen, and the log-loss of votes."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import expit

from ranking.personal_style.posterior import vote_losses
from ranking.types import FloatArray

__all__ = [
    "style_log_loss",
    "style_win_probability",
    "taste_strengths",
]


def style_win_probability(
    offsets: npt.ArrayLike,
    differences: npt.ArrayLike,
    coefficients: npt.ArrayLike,
) -> FloatArray:
    """``P(model_a wins)`` of each vote under a person's style coefficients.

    Parameters
    ----------
    offsets : array_like
        ``(n,)`` log-odds before style (``theta_a - theta_b``, natural log).
    differences : array_like
        ``(n, p)`` the votes' style covariates.
    coefficients : array_like
        ``(p,)`` one person's coefficients, or ``(n, p)`` each vote's voter's.
    """
    x = np.asarray(differences, dtype=np.float64)
    beta = np.broadcast_to(np.asarray(coefficients, dtype=np.float64), x.shape)
    return expit(np.asarray(offsets, dtype=np.float64) + np.einsum("ij,ij->i", x, beta))


def taste_strengths(
    theta: npt.ArrayLike, model_covariates: npt.ArrayLike, coefficients: npt.ArrayLike
) -> FloatArray:
    """Models' strengths for people with these tastes, before any answer is seen.

    Where a vote's answers are not known yet (a board, a recommendation), each model's
    typical answer stands in for its answer: ``model_covariates[m]`` is model ``m``'s
    typical answer against the average answer (for the log-ratio covariate of length,
    exactly the difference of a vote's two models'), so a person ``u`` sees model ``m``
    at ``theta_m + model_covariates[m] . beta_u``.

    Parameters
    ----------
    theta : array_like
        ``(k,)`` style-controlled strengths, natural log.
    model_covariates : array_like
        ``(k, p)`` each model's typical answer's covariates against the average answer.
    coefficients : array_like
        ``(p,)`` one person's coefficients, or ``(U, p)`` several people's.

    Returns
    -------
    ndarray
        ``(k,)`` or ``(U, k)`` strengths, natural log, centred over the models.
    """
    beta = np.asarray(coefficients, dtype=np.float64)
    strengths = (
        np.asarray(theta, dtype=np.float64)
        + beta @ np.asarray(model_covariates, dtype=np.float64).T
    )
    centred: FloatArray = strengths - strengths.mean(axis=-1, keepdims=True)
    return centred


def style_log_loss(
    offsets: npt.ArrayLike,
    differences: npt.ArrayLike,
    coefficients: npt.ArrayLike,
    outcomes: npt.ArrayLike,
) -> FloatArray:
    """Per-vote log-loss (natural log, ties as 0.5) under the coefficients given, as
    :func:`style_win_probability` takes them."""
    x = np.asarray(differences, dtype=np.float64)
    beta = np.broadcast_to(np.asarray(coefficients, dtype=np.float64), x.shape)
    eta = np.asarray(offsets, dtype=np.float64) + np.einsum("ij,ij->i", x, beta)
    return vote_losses(eta, np.asarray(outcomes, dtype=np.float64))
