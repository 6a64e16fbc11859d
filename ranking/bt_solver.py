"""The batched Bradley-Terry objective and the damped Newton solver that minimises it.

For each group ``g`` of a batch, the penalised negative log-likelihood of
:mod:`ranking.bt` with its analytic gradient and ``k x k`` Hessian (:class:`Problem`),
the Newton iterations with a backtracking line search over all groups at once
(:func:`newton`), the groups cut into batches that bound the Hessians' memory
(:func:`group_batches`), and the second-moment matrices of pairwise votes
(:func:`pair_matrices`, re-exported by :mod:`ranking.bt`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy.special import expit

from ranking.types import FloatArray, IntArray, Matchups, Outcomes, Weights

__all__ = ["Problem", "group_batches", "newton", "pair_matrices"]


def pair_matrices(
    n_models: int,
    a: IntArray,
    b: IntArray,
    values: FloatArray,
    groups: IntArray | None = None,
    n_groups: int = 1,
) -> FloatArray:
    """Sum ``v_i (e_a - e_b)(e_a - e_b)^T`` over rows, per group: ``(G, k, k)``.

    The shape of every second-moment matrix of pairwise votes: the Hessian (``v`` the
    Bernoulli variance) and the sandwich's meat (``v`` the squared residual).
    """
    k = n_models
    base = (np.zeros(len(a), dtype=np.intp) if groups is None else groups) * k * k
    index = np.concatenate(
        [base + a * (k + 1), base + b * (k + 1), base + a * k + b, base + b * k + a]
    )
    flat = np.bincount(
        index,
        weights=np.concatenate([values, values, -values, -values]),
        minlength=n_groups * k * k,
    )
    return flat.astype(np.float64, copy=False).reshape(n_groups, k, k)


def group_batches(
    groups: IntArray, n_groups: int, n_models: int, max_entries: int
) -> Iterator[tuple[int, int, IntArray]]:
    """The groups in batches whose ``k x k`` matrices hold at most ``max_entries`` floats.

    Yields ``(start, stop, rows)``: groups ``start`` to ``stop - 1`` and the rows of theirs
    (``groups`` of each row below ``n_groups``), in row order within each group.
    """
    batch = max(1, max_entries // max(n_models * n_models, 1))
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(0, n_groups + 1))
    for start in range(0, n_groups, batch):
        stop = min(start + batch, n_groups)
        yield start, stop, order[bounds[start] : bounds[stop]]


class Problem:
    """Rows of one batch of groups, with the prior, ready for repeated evaluation."""

    def __init__(
        self,
        n_models: int,
        n_groups: int,
        matchups: Matchups,
        outcomes: Outcomes,
        weights: Weights,
        groups: IntArray,
        prior_mean: FloatArray,
        alpha: FloatArray,
    ) -> None:
        self.k, self.g = n_models, n_groups
        self.a, self.b = matchups[:, 0], matchups[:, 1]
        self.y, self.w, self.groups = outcomes, weights, groups
        self.mu, self.alpha = prior_mean, alpha
        self.flat_a = groups * n_models + self.a
        self.flat_b = groups * n_models + self.b

    def diff(self, theta: FloatArray) -> FloatArray:
        flat = theta.ravel()
        return flat[self.flat_a] - flat[self.flat_b]

    def objective(self, theta: FloatArray) -> FloatArray:
        d = self.diff(theta)
        loss = self.w * (self.y * np.logaddexp(0.0, -d) + (1.0 - self.y) * np.logaddexp(0.0, d))
        prior = 0.5 * self.alpha * np.sum((theta - self.mu) ** 2, axis=1)
        return np.bincount(self.groups, weights=loss, minlength=self.g) + prior

    def gradient(self, theta: FloatArray) -> FloatArray:
        r = self.w * (expit(self.diff(theta)) - self.y)
        size = self.g * self.k
        grad = np.bincount(self.flat_a, weights=r, minlength=size) - np.bincount(
            self.flat_b, weights=r, minlength=size
        )
        return grad.reshape(self.g, self.k) + self.alpha[:, None] * (theta - self.mu)

    def hessian(self, theta: FloatArray) -> FloatArray:
        p = expit(self.diff(theta))
        hess = pair_matrices(self.k, self.a, self.b, self.w * p * (1.0 - p), self.groups, self.g)
        idx = np.arange(self.k)
        hess[:, idx, idx] += self.alpha[:, None]
        return hess


def newton(problem: Problem, theta: FloatArray, max_iter: int, tol: float) -> FloatArray:
    """Damped Newton iterations on every group of ``problem`` until all have converged.

    A group has converged when half its squared Newton decrement is below
    ``tol * (1 + |objective|)``: relative, because the objective of a group with 100,000
    votes carries rounding noise far above any absolute tolerance. Converged groups stop
    moving while the others go on.
    """
    f = problem.objective(theta)
    for _ in range(max_iter):
        grad = problem.gradient(theta)
        step = np.linalg.solve(problem.hessian(theta), grad[..., None])[..., 0]
        decrement = np.sum(grad * step, axis=1)  # Newton decrement squared, >= 0
        active = decrement > 2.0 * tol * (1.0 + np.abs(f))
        if not active.any():
            return theta
        step[~active] = 0.0
        noise = 1e-13 * (1.0 + np.abs(f))
        t = np.ones(problem.g)
        for _ in range(60):
            candidate = theta - t[:, None] * step
            f_new = problem.objective(candidate)
            ok = f_new <= f - 1e-4 * t * decrement * active + noise
            if ok.all():
                break
            t = np.where(ok, t, 0.5 * t)
        theta, f = candidate, np.minimum(f_new, f)
    raise RuntimeError(f"Bradley-Terry fit did not converge in {max_iter} Newton iterations.")
