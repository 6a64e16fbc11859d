"""The batched Bradley-Terry objective and the damped Newton solver that minimises it.

For each group ``g``, the penalised negative log-likelihood of :mod:`ranking.bt` with its
analytic gradient, ``k x k`` Hessian and Laplace posterior (:class:`Problem`, over the
votes collapsed to per-group pair counts), the Newton iterations with a backtracking line
search for every group (:func:`newton`), both compiled in :mod:`ranking.bt_kernel`; the
groups cut into batches that bound memory for the per-vote leverages of
:mod:`ranking.consistency` (:func:`group_batches`), and the second-moment matrices of
pairwise votes (:func:`pair_matrices`, re-exported by :mod:`ranking.bt`).
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ranking.bt_kernel import (
    NOT_POSITIVE,
    derivative_loop,
    newton_loop,
    objective_loop,
    posterior_loop,
)
from ranking.pair_counts import collect_pairs
from ranking.types import FloatArray, IntArray, Matchups, Outcomes, Weights

__all__ = ["Problem", "group_batches", "newton", "pair_matrices"]

#: Fewest groups worth a thread of their own.
_GROUPS_PER_THREAD = 4_096


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
    """Votes of many groups, with the prior, ready for repeated evaluation.

    The rows are collapsed once into per-group pair counts
    (:func:`ranking.pair_counts.collect_pairs`); every evaluation and Newton step after that
    is a compiled pass over them, ranges of groups in threads when there are many.
    """

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
        self.counts = collect_pairs(n_models, matchups, outcomes, weights, groups, n_groups)
        self.mu = np.ascontiguousarray(prior_mean, dtype=np.float64)
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        if self.mu.shape != (n_groups, n_models) or self.alpha.shape != (n_groups,):
            raise ValueError(
                f"Arguments 'prior_mean' and 'alpha' must have shapes ({n_groups}, {n_models}) "
                f"and ({n_groups},), not {self.mu.shape} and {self.alpha.shape}."
            )

    def with_alpha(self, alpha: FloatArray) -> Problem:
        """The same votes and prior mean under another ``(G,)`` prior precision."""
        other = copy.copy(self)
        other.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        return other

    def _theta(self, theta: FloatArray) -> FloatArray:
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if theta.shape != (self.g, self.k):
            raise ValueError(
                f"Argument 'theta' must have shape {(self.g, self.k)}, not {theta.shape}."
            )
        return theta

    def _in_threads(self, task: Callable[[int, int], None]) -> None:
        """Run ``task(start, stop)`` over consecutive ranges of groups, one a thread."""
        workers = min(os.cpu_count() or 1, self.g // _GROUPS_PER_THREAD)
        if workers <= 1:
            task(0, self.g)
            return
        cuts = np.linspace(0, self.g, workers + 1).astype(int).tolist()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for done in [pool.submit(task, a, b) for a, b in itertools.pairwise(cuts)]:
                done.result()

    def objective(self, theta: FloatArray) -> FloatArray:
        out = np.empty(self.g)
        objective_loop(self.counts.pairs(), self._theta(theta), self.mu, self.alpha, out)
        return out

    def gradient(self, theta: FloatArray) -> FloatArray:
        return self._derivatives(theta)[0]

    def hessian(self, theta: FloatArray) -> FloatArray:
        """``(G, k, k)`` Hessians: for a few groups (large ones are never built here)."""
        return self._derivatives(theta)[1]

    def _derivatives(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        grad, hess = np.empty((self.g, self.k)), np.empty((self.g, self.k, self.k))
        derivative_loop(self.counts.pairs(), self._theta(theta), self.mu, self.alpha, grad, hess)
        return grad, hess

    def laplace(
        self, theta: FloatArray, *, variances: bool = True
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Each group's Laplace evidence and posterior variances at the mode ``theta``.

        Returns ``(G,)`` log evidence ``-objective + k/2 log(alpha) - 1/2 log det H`` and
        ``(G, k)`` diagonals of ``H^-1`` and of ``C H^-1 C`` (``C`` the centring), the
        variances NaN without ``variances``.
        """
        theta = self._theta(theta)
        objective, logdet = np.empty(self.g), np.empty(self.g)
        absolute, relative = np.full((2, self.g, self.k), np.nan)

        def task(a: int, b: int) -> None:
            posterior_loop(
                self.counts.pairs(a, b), theta[a:b], self.mu[a:b], self.alpha[a:b], variances,
                objective[a:b], logdet[a:b], absolute[a:b], relative[a:b],
            )  # fmt: skip

        self._in_threads(task)
        evidence = -objective + 0.5 * self.k * np.log(self.alpha) - 0.5 * logdet
        return evidence, absolute, relative


def newton(problem: Problem, theta: FloatArray, max_iter: int, tol: float) -> FloatArray:
    """Damped Newton iterations on every group of ``problem`` until all have converged.

    A group has converged when half its squared Newton decrement is below
    ``tol * (1 + |objective|)``: relative, because the objective of a group with 100,000
    votes carries rounding noise far above any absolute tolerance. Each step is shortened
    by half until it decreases the group's objective enough (Armijo, at most 60 times).
    Groups are independent: each is solved on its own in a compiled loop
    (:mod:`ranking.bt_kernel`), consecutive ranges of groups in threads when there are many.

    Returns the modes, a new ``(G, k)`` array.
    """
    theta = np.array(problem._theta(theta), order="C")  # a copy, updated in place
    status = np.zeros(problem.g, dtype=np.int8)

    def task(a: int, b: int) -> None:
        newton_loop(
            problem.counts.pairs(a, b), theta[a:b], problem.mu[a:b], problem.alpha[a:b],
            int(max_iter), float(tol), status[a:b],
        )  # fmt: skip

    problem._in_threads(task)
    if np.any(status == NOT_POSITIVE):
        raise RuntimeError(
            "Bradley-Terry fit failed: a Hessian lost positive definiteness to rounding "
            f"in {int(np.sum(status == NOT_POSITIVE))} group(s); raise 'alpha'."
        )
    if np.any(status != 0):
        raise RuntimeError(f"Bradley-Terry fit did not converge in {max_iter} Newton iterations.")
    return theta
