"""The contextual Bradley-Terry fit of style control: the strengths and the style
coefficients together (:func:`fit_style_bt`), their moderated sandwich covariance
(:func:`style_covariance`) and the log-loss of votes under them (:func:`style_log_loss`).
:mod:`ranking.style_control` describes the model."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit, log_expit

from ranking.bt import DEFAULT_ALPHA
from ranking.bt_solver import pair_matrices
from ranking.intervals.sandwich import MODERATION_VOTES, moderate_sandwich
from ranking.types import FloatArray, Matchups, Outcomes

__all__ = [
    "BETA_ALPHA",
    "fit_style_bt",
    "style_covariance",
    "style_log_loss",
]

#: Prior precision of the style coefficients: negligible, it only keeps a covariate that
#: never varies from making the problem singular (such a covariate gets no coefficient).
BETA_ALPHA = 1e-6


def _check(
    n_models: int, matchups: Matchups, outcomes: Outcomes, differences: FloatArray, weights: Any
) -> tuple[Matchups, Outcomes, FloatArray, FloatArray]:
    m = np.asarray(matchups, dtype=np.intp)
    y = np.asarray(outcomes, dtype=np.float64)
    x = np.asarray(differences, dtype=np.float64)
    n = y.shape[0]
    if m.shape != (n, 2):
        raise ValueError(f"Argument 'matchups' must have shape ({n}, 2), not {m.shape}.")
    if x.ndim != 2 or x.shape[0] != n:
        raise ValueError(f"Argument 'differences' must have shape ({n}, p), not {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("Argument 'differences' must hold finite values only.")
    if n and (m.min() < 0 or m.max() >= n_models):
        raise ValueError(f"Argument 'matchups' must hold model indices below {n_models}.")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0):
        raise ValueError(f"Argument 'weights' must be {n} non-negative numbers.")
    return m, y, x, w


def _parts(params: FloatArray, k: int, m: Matchups, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each vote's logit, and the strengths (the design ``(e_a - e_b, x)`` stays implicit)."""
    theta, beta = params[:k], params[k:]
    return theta[m[:, 0]] - theta[m[:, 1]] + x @ beta, theta


def _second_moment(k: int, m: Matchups, x: FloatArray, v: FloatArray) -> FloatArray:
    """``sum_i v_i g_i g_i^T`` with ``g_i = (e_a - e_b, x_i)``: ``(k + p, k + p)``."""
    a, b = m[:, 0], m[:, 1]
    p = x.shape[1]
    out = np.zeros((k + p, k + p))
    out[:k, :k] = pair_matrices(k, a, b, v)[0]
    vx = v[:, None] * x
    cross = np.zeros((k, p))
    for j in range(p):
        cross[:, j] = np.bincount(a, vx[:, j], minlength=k) - np.bincount(b, vx[:, j], minlength=k)
    out[:k, k:] = cross
    out[k:, :k] = cross.T
    out[k:, k:] = x.T @ vx
    return out


def _penalty(k: int, p: int, alpha: float, beta_alpha: float) -> FloatArray:
    return np.concatenate([np.full(k, alpha), np.full(p, beta_alpha)])


def _objective(
    params: FloatArray,
    k: int,
    m: Matchups,
    y: Outcomes,
    x: FloatArray,
    w: FloatArray,
    prior: FloatArray,
) -> float:
    eta, _ = _parts(params, k, m, x)
    loss = -(w * (y * log_expit(eta) + (1.0 - y) * log_expit(-eta))).sum()
    return float(loss + 0.5 * (prior * params**2).sum())


def fit_style_bt(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    differences: FloatArray,
    weights: FloatArray | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    beta_alpha: float = BETA_ALPHA,
    initial_params: FloatArray | None = None,
    max_iter: int = 100,
    tol: float = 1e-8,
) -> tuple[FloatArray, FloatArray]:
    """Bradley-Terry strengths and style coefficients, fitted together by Newton's method.

    Minimises ``sum_i w_i logloss(y_i, theta_a - theta_b + x_i . beta)
    + alpha / 2 ||theta||^2 + beta_alpha / 2 ||beta||^2``.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups : Matchups
        ``(n, 2)`` model indices of each vote.
    outcomes : Outcomes
        ``(n,)`` 1 when ``model_a`` won, 0 when ``model_b`` won, 0.5 for a tie.
    differences : ndarray
        ``(n, p)`` style covariates of each vote, ``model_a``'s answer against
        ``model_b``'s.
    weights : ndarray, optional
        ``(n,)`` votes each row stands for (1 each by default).
    alpha : float
        Prior precision of the strengths: the raw board's (:data:`ranking.bt.DEFAULT_ALPHA`).
    beta_alpha : float
        Prior precision of the coefficients (:data:`BETA_ALPHA`).
    initial_params : ndarray, optional
        ``(n_models + p,)`` warm start, strengths then coefficients.
    max_iter : int
        Newton steps at most.
    tol : float
        Converged when the Newton decrement (half the predicted decrease) is below it.

    Returns
    -------
    theta : ndarray
        ``(n_models,)`` natural-log strengths, averaging zero.
    beta : ndarray
        ``(p,)`` coefficients, natural-log odds per unit of each covariate.

    Raises
    ------
    ValueError
        On arrays of the wrong shape, non-finite covariates or negative weights.
    RuntimeError
        When Newton's method does not converge in ``max_iter`` steps.
    """
    m, y, x, w = _check(n_models, matchups, outcomes, differences, weights)
    k, p = n_models, x.shape[1]
    prior = _penalty(k, p, alpha, beta_alpha)
    params = np.zeros(k + p) if initial_params is None else np.array(initial_params, float)
    value = _objective(params, k, m, y, x, w, prior)
    for _ in range(max_iter):
        eta, _ = _parts(params, k, m, x)
        q = expit(eta)
        r = w * (q - y)
        grad = _second_moment_vector(k, m, x, r) + prior * params
        hess = _second_moment(k, m, x, w * q * (1.0 - q)) + np.diag(prior)
        step = np.linalg.solve(hess, grad)
        decrement = 0.5 * float(grad @ step)
        if decrement < tol:
            return params[:k], params[k:]
        t = 1.0  # backtracking (Armijo) line search on the penalised objective
        while True:
            trial = params - t * step
            trial_value = _objective(trial, k, m, y, x, w, prior)
            if trial_value <= value - 0.5 * t * decrement:
                break
            t *= 0.5
            if t < 1e-10:  # no step decreases it: rounding has the last word, converged
                return params[:k], params[k:]
        params, value = trial, trial_value
    raise RuntimeError(f"Style-controlled Bradley-Terry did not converge in {max_iter} steps.")


def _second_moment_vector(k: int, m: Matchups, x: FloatArray, r: FloatArray) -> FloatArray:
    """``sum_i r_i g_i``: the likelihood's gradient when ``r`` is the weighted residual."""
    a, b = m[:, 0], m[:, 1]
    theta_part = np.bincount(a, r, minlength=k) - np.bincount(b, r, minlength=k)
    return np.concatenate([theta_part, x.T @ r])


def style_covariance(
    theta: FloatArray,
    beta: FloatArray,
    matchups: Matchups,
    outcomes: Outcomes,
    differences: FloatArray,
    weights: FloatArray | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    beta_alpha: float = BETA_ALPHA,
    prior_votes: float = MODERATION_VOTES,
) -> FloatArray:
    """The moderated sandwich covariance of strengths and coefficients together.

    As :func:`ranking.intervals.sandwich.moderated_covariance` for the raw board: the sandwich
    ``H^-1 M H^-1`` of the joint parameters, the strengths relative to their mean, each
    strength's variance moderated toward the model-based ``H^-1`` by its votes against
    ``prior_votes`` (a coefficient's by all the votes, which leaves it the sandwich's).

    Returns
    -------
    ndarray
        ``(k + p, k + p)`` covariance in natural-log units, strengths first.
    """
    m, y, x, w = _check(theta.shape[0], matchups, outcomes, differences, weights)
    k, p = theta.shape[0], x.shape[1]
    params = np.concatenate([theta, beta])
    q = expit(_parts(params, k, m, x)[0])
    hess = _second_moment(k, m, x, w * q * (1.0 - q)) + np.diag(_penalty(k, p, alpha, beta_alpha))
    meat = _second_moment(k, m, x, w * (q - y) ** 2)
    # The ones direction of the strengths has only the prior's curvature: raise it to
    # the scale of the rest before inverting, then project it out (centred_inverse).
    shift = np.zeros((k + p, k + p))
    shift[:k, :k] = max(float(np.trace(hess[:k, :k])) / k, 1e-12) / k
    centre = np.eye(k + p)
    centre[:k, :k] -= 1.0 / k
    bread = centre @ np.linalg.inv(hess + shift) @ centre
    n = np.concatenate([np.bincount(m.ravel(), np.repeat(w, 2), minlength=k), np.full(p, w.sum())])
    return moderate_sandwich(bread, meat, n, prior_votes)


def style_log_loss(
    theta: FloatArray,
    beta: FloatArray,
    matchups: Matchups,
    outcomes: Outcomes,
    differences: FloatArray,
) -> FloatArray:
    """Each vote's log-loss under a style-controlled fit (a tie scoring half each way).

    Returns
    -------
    ndarray
        ``(n,)`` natural-log loss per vote; with ``beta`` zero, the raw board's.
    """
    m, y, x, _ = _check(theta.shape[0], matchups, outcomes, differences, None)
    eta = theta[m[:, 0]] - theta[m[:, 1]] + x @ np.asarray(beta, dtype=np.float64)
    return np.asarray(-(y * log_expit(eta) + (1.0 - y) * log_expit(-eta)), dtype=np.float64)
