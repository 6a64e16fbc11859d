"""Each user's style coefficients at a given prior: ``p``-dimensional ridge logistic
regressions, solved for all users at once by damped Newton steps on the ``(U, p, p)``
Hessians, with their Laplace posterior (:mod:`ranking.personal_style` describes the
model)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import expit, log_expit

from ranking.types import FloatArray, IntArray, Outcomes

__all__ = [
    "check_style_votes",
    "fit_user_style_posterior",
    "newton_steps",
    "ridge_objective",
    "vote_losses",
]

#: The Newton solver's limits.
_MAX_ITER, _TOL = 100, 1e-9


def check_style_votes(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
) -> tuple[FloatArray, Outcomes, FloatArray, IntArray, FloatArray]:
    """The arrays as floats and ints, their shapes checked against each other."""
    x = np.asarray(differences, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"Argument 'differences' must be (n, p), not of shape {x.shape}.")
    n, p = x.shape
    y = np.asarray(outcomes, dtype=np.float64).reshape(-1)
    off = np.asarray(offsets, dtype=np.float64).reshape(-1)
    groups = np.asarray(users, dtype=np.intp).reshape(-1)
    mu = np.asarray(aggregate, dtype=np.float64).reshape(-1)
    for name, array in (("outcomes", y), ("offsets", off), ("users", groups)):
        if array.size != n:
            raise ValueError(f"Argument '{name}' must have {n} entries, not {array.size}.")
    if mu.size != p:
        raise ValueError(f"Argument 'aggregate' must have {p} entries, not {mu.size}.")
    if n and (groups.min() < 0 or groups.max() >= n_users):
        raise ValueError(f"Argument 'users' must lie in [0, {n_users}), not {groups.max()}.")
    if not (np.isfinite(x).all() and np.isfinite(off).all()):
        raise ValueError("Arguments 'differences' and 'offsets' must be finite.")
    return x, y, off, groups, mu


def _sums(x: FloatArray, values: FloatArray, groups: IntArray, n_groups: int) -> FloatArray:
    """``(G, p)``: ``sum_i values_i x_i`` per group."""
    out = np.empty((n_groups, x.shape[1]))
    for j in range(x.shape[1]):
        out[:, j] = np.bincount(groups, weights=values * x[:, j], minlength=n_groups)
    return out


def _outer_sums(x: FloatArray, values: FloatArray, groups: IntArray, n_groups: int) -> FloatArray:
    """``(G, p, p)``: ``sum_i values_i x_i x_i^T`` per group."""
    p = x.shape[1]
    out = np.empty((n_groups, p, p))
    for j in range(p):
        for k in range(j, p):
            out[:, j, k] = out[:, k, j] = np.bincount(
                groups, weights=values * x[:, j] * x[:, k], minlength=n_groups
            )
    return out


def vote_losses(eta: FloatArray, y: Outcomes) -> FloatArray:
    """Per-vote log-loss of log-odds ``eta`` with outcome ``y`` (ties as 0.5)."""
    return -(y * log_expit(eta) + (1.0 - y) * log_expit(-eta))


def ridge_objective(
    beta: FloatArray,
    fit: tuple[FloatArray, Outcomes, FloatArray, IntArray],
    mu: FloatArray,
    alpha: FloatArray,
) -> FloatArray:
    """``(G,)`` penalised negative log-likelihood of each group."""
    x, y, off, groups = fit
    eta = off + np.einsum("ij,ij->i", x, beta[groups])
    data = np.bincount(groups, weights=vote_losses(eta, y), minlength=beta.shape[0])
    return data + 0.5 * alpha * ((beta - mu) ** 2).sum(axis=1)


def newton_steps(
    fit: tuple[FloatArray, Outcomes, FloatArray, IntArray],
    mu: FloatArray,
    alpha: FloatArray,
    start: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Every group's posterior mode and Hessian there, by damped Newton steps."""
    x, y, off, groups = fit
    n_groups, p = mu.shape
    beta = start.copy()
    eye = np.eye(p)
    current = ridge_objective(beta, fit, mu, alpha)
    for _ in range(_MAX_ITER):
        prob = expit(off + np.einsum("ij,ij->i", x, beta[groups]))
        gradient = _sums(x, prob - y, groups, n_groups) + alpha[:, None] * (beta - mu)
        hessian = _outer_sums(x, prob * (1.0 - prob), groups, n_groups)
        hessian += alpha[:, None, None] * eye
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        if np.abs(step).max(initial=0.0) < _TOL:
            return beta, hessian
        size = np.ones(n_groups)
        for _ in range(40):  # halve each group's step until its objective does not rise
            trial = beta - size[:, None] * step
            value = ridge_objective(trial, fit, mu, alpha)
            worse = value > current + 1e-12 * np.abs(current)
            if not worse.any():
                break
            size[worse] *= 0.5
        beta, current = trial, value
    raise RuntimeError(f"Per-user style fits did not converge in {_MAX_ITER} Newton steps.")


def fit_user_style_posterior(
    differences: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    offsets: npt.ArrayLike,
    users: npt.ArrayLike,
    n_users: int,
    aggregate: npt.ArrayLike,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """Each user's posterior mode and covariance under the prior ``N(aggregate, I / alpha)``.

    Parameters
    ----------
    differences : array_like
        ``(n, p)`` style covariates of each vote (model_a's answer against model_b's).
    outcomes : array_like
        ``(n,)`` 1 where model_a won, 0 where model_b did, 0.5 for a tie.
    offsets : array_like
        ``(n,)`` log-odds of model_a winning before style: ``theta_a - theta_b``, natural
        log.
    users : array_like of int
        ``(n,)`` user of each vote, below ``n_users``.
    n_users : int
        Number of users.
    aggregate : array_like
        ``(p,)`` the prior mean: the aggregate's style coefficients.
    alpha : float
        Prior precision.

    Returns
    -------
    coefficients : ndarray
        ``(U, p)`` posterior modes (the aggregate for a user with no vote).
    covariance : ndarray
        ``(U, p, p)`` the Laplace posterior's covariance.
    """
    if not alpha > 0:
        raise ValueError(f"Argument 'alpha' must be positive, not {alpha}.")
    x, y, off, groups, mu = check_style_votes(
        differences, outcomes, offsets, users, n_users, aggregate
    )
    prior = np.tile(mu, (n_users, 1))
    beta, hessian = newton_steps((x, y, off, groups), prior, np.full(n_users, alpha), prior)
    covariance = np.asarray(np.linalg.inv(hessian), dtype=np.float64)
    return beta, covariance
