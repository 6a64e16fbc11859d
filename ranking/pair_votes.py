"""Contextual Bradley-Terry votes grouped by model pair: the fit without a design matrix.

The logistic regression of :mod:`ranking.contextual` has a design row ``(e_a - e_b) (x) c``
a vote: ``n_models * p`` columns, of which a row touches only its two models' blocks.
Grouped by unordered pair ``{a, b}``, the votes of a pair share those blocks, so the
penalised log-likelihood needs, per pair, the margins ``C_P (w_a - w_b)``, one product
``C_P' r_P`` for the gradient and one ``C_P' diag(v_P) C_P`` for the Hessian, each added
to (and taken from) the pair's blocks. That costs ``O(n p^2)`` a Newton step over the
``p`` columns of the contexts, where a design holds ``2 n p`` entries and their indices.

:class:`PairVotes` holds the votes once, sorted by pair; a fit of a subset of them (a
fold's) is a fit with zero weight on the others, so the folds and the penalties of a
search share one copy of the contexts. :func:`newton_fit` minimises::

    sum_i w_i * (log(1 + exp(d_i)) - y_i d_i) + alpha / 2 * ||W||^2

(``d_i`` the margin of the pair's lower model, ``y_i`` its score: 1 a win, 0.5 a tie, 0 a
loss), by Newton's method with a Cholesky solve of the penalised Hessian and backtracking
on the objective: a handful of steps where L-BFGS on the design takes hundreds. Past
:data:`NEWTON_MAX_COEFFICIENTS` coefficients (many models and a wide context) the
Hessian's solve would cost more than it saves, and L-BFGS runs on the same gradient.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import linalg, optimize
from scipy.special import expit
from threadpoolctl import threadpool_limits

from ranking.types import FloatArray

__all__ = ["NEWTON_MAX_COEFFICIENTS", "PairVotes", "newton_fit", "pair_order"]

logger = logging.getLogger(__name__)

#: Coefficients (``n_models * p``) up to which :func:`newton_fit` takes Newton steps;
#: past it, L-BFGS on the same gradient (a Cholesky of 3,000 coefficients is ~9 GFLOP).
NEWTON_MAX_COEFFICIENTS = 3_000

#: Relative error of the objective (a sum of one loss a vote) within which a step that
#: promised less is accepted on its own merit.
ROUNDING = 1e-12

#: A fit is done once no coefficient moves by more than this in a step (natural-log
#: units: a millionth of an Elo point is about 6e-9 of them).
STEP_TOLERANCE = 1e-8


def pair_order(matchups: npt.ArrayLike, n_models: int) -> npt.NDArray[np.intp]:
    """The order :class:`PairVotes` stores votes in: by unordered model pair, stably.

    A caller that builds the contexts in this order (``contexts[i]`` the context of vote
    ``order[i]``), with the matchups and outcomes taken in it too, gives
    ``PairVotes(..., copy=False)`` votes it uses as they are, without reordering them.
    """
    m = np.asarray(matchups, dtype=np.intp)
    key = np.minimum(m[:, 0], m[:, 1]) * n_models + np.maximum(m[:, 0], m[:, 1])
    return np.argsort(key, kind="stable")


@dataclass(frozen=True)
class _Pair:
    low: int
    high: int
    rows: slice


class PairVotes:
    """Votes with contexts, sorted by model pair, for fits without a design matrix.

    Parameters
    ----------
    matchups : array of int
        ``(n, 2)`` model indices.
    outcomes : array of float
        ``(n,)`` 1 if the first model won, 0 if the second, 0.5 for a tie.
    contexts : array of float
        ``(n, p)`` context of each vote.
    n_models : int
        Number of models.
    weights : array of float, optional
        ``(n,)`` vote weights (1 by default).
    rows : array of int, optional
        Only these votes (read from the whole arrays, not from a copy of those rows).
    copy : bool
        False sorts ``contexts`` (a float64 array of every vote, no ``rows``) in place, a
        block of columns at a time, and keeps it rather than a sorted copy: the caller's
        array is then in the stored order. Half the memory, for a caller that lets it go;
        votes given in :func:`pair_order` already are kept as they are.

    Attributes
    ----------
    rows : ndarray of int
        ``(m,)`` the row of the arrays given of each stored vote, in stored order: a
        per-vote array ``x`` of the caller is ``x[votes.rows]`` in this order.
    weights : ndarray
        ``(m,)`` the weights given, in stored order.
    contexts : ndarray
        ``(m, p)`` the contexts, in stored order.
    scores : ndarray
        ``(m,)`` each vote's score of its pair's lower model: 1 a win, 0.5 a tie, 0 a loss.
    n_models, p : int
        Models, and context columns.
    """

    def __init__(
        self,
        matchups: npt.ArrayLike,
        outcomes: npt.ArrayLike,
        contexts: npt.ArrayLike,
        n_models: int,
        weights: npt.ArrayLike | None = None,
        rows: npt.ArrayLike | None = None,
        copy: bool = True,
    ) -> None:
        m = np.asarray(matchups, dtype=np.intp)
        y = np.asarray(outcomes, dtype=np.float64)
        c = np.asarray(contexts, dtype=np.float64)
        chosen = np.arange(len(y)) if rows is None else np.asarray(rows, dtype=np.intp)
        low = np.minimum(m[chosen, 0], m[chosen, 1])
        high = np.maximum(m[chosen, 0], m[chosen, 1])
        key = low * n_models + high
        order = np.argsort(key, kind="stable")
        self.rows = chosen[order]
        self.n_models = int(n_models)
        self.p = int(c.shape[1])
        if copy or rows is not None or c is not contexts or not c.flags.writeable:
            self.contexts = c[self.rows]
        elif np.array_equal(self.rows, np.arange(len(self.rows))):  # in pair order already
            self.contexts = c
        else:
            _sort_in_place(c, self.rows)
            self.contexts = c
        # the lower model's score: the outcome if it was listed first, else its reverse
        first_is_low = m[self.rows, 0] == low[order]
        self.scores = np.where(first_is_low, y[self.rows], 1.0 - y[self.rows])
        all_weights = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
        self.weights = all_weights[self.rows]
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else key
        ends = np.r_[starts[1:], key.size][: starts.size]
        self._pairs = [
            _Pair(int(key[s] // n_models), int(key[s] % n_models), slice(int(s), int(e)))
            for s, e in zip(starts, ends, strict=True)
        ]

    def __len__(self) -> int:
        return len(self.rows)

    def margins(self, coef: FloatArray) -> FloatArray:
        """``(m,)`` each stored vote's margin of its pair's lower model, ``c . (w_a - w_b)``."""
        d = np.empty(len(self))
        for pair in self._pairs:
            d[pair.rows] = self.contexts[pair.rows] @ (coef[pair.low] - coef[pair.high])
        return d

    def objective(self, coef: FloatArray, weights: FloatArray, alpha: float) -> float:
        """The penalised negative log-likelihood at ``coef`` (``(n_models, p)``)."""
        d = self.margins(coef)
        loss = weights @ (np.logaddexp(0.0, d) - self.scores * d)
        return float(loss + 0.5 * alpha * np.sum(coef * coef))

    def derivatives(
        self, coef: FloatArray, weights: FloatArray, alpha: float, *, hessian: bool = True
    ) -> tuple[float, FloatArray, FloatArray | None]:
        """The objective at ``coef``, its ``(n_models, p)`` gradient and (unless
        ``hessian`` is false) its ``(n_models * p, n_models * p)`` Hessian."""
        k, p = self.n_models, self.p
        d = self.margins(coef)
        loss = float(weights @ (np.logaddexp(0.0, d) - self.scores * d))
        sigma = expit(d)
        residual = weights * (sigma - self.scores)
        curvature = weights * sigma * (1.0 - sigma)
        grad = alpha * coef
        blocks = np.zeros((k, p, k, p)) if hessian else None
        for pair in self._pairs:
            c = self.contexts[pair.rows]
            g = residual[pair.rows] @ c
            grad[pair.low] += g
            grad[pair.high] -= g
            if blocks is not None:
                h = c.T @ (curvature[pair.rows, None] * c)
                blocks[pair.low, :, pair.low] += h
                blocks[pair.high, :, pair.high] += h
                blocks[pair.low, :, pair.high] -= h
                blocks[pair.high, :, pair.low] -= h
        value = loss + 0.5 * alpha * float(np.sum(coef * coef))
        if blocks is None:
            return value, grad, None
        full = blocks.reshape(k * p, k * p)
        full[np.diag_indices_from(full)] += alpha
        return value, grad, full

    def loss_hessian(self, coef: FloatArray, weights: FloatArray) -> FloatArray:
        """The loss's Hessian alone (no penalty) at ``coef``, for :func:`newton_fit`'s
        ``curvature``."""
        with threadpool_limits(limits=1, user_api="blas"):
            hessian = self.derivatives(coef, weights, 0.0)[2]
        assert hessian is not None
        return hessian

    def log_loss(self, coef: FloatArray, weights: FloatArray) -> float:
        """Weighted mean log-loss of ``coef`` on the votes of nonzero weight."""
        d = self.margins(coef)
        total = weights.sum()
        return float(weights @ (np.logaddexp(0.0, d) - self.scores * d) / total)


#: Columns :func:`_sort_in_place` gathers at a time: 128 bytes of a row, two cache lines.
SORT_BLOCK = 16


def _sort_in_place(c: FloatArray, order: npt.NDArray[np.intp]) -> None:
    """Reorder the rows of ``c`` to ``c[order]`` in place, a block of columns at a time:
    no second copy of ``c`` (1.8 GB at two million votes of 110 columns), only one of
    :data:`SORT_BLOCK` columns (a column at a time reads one double per cache line: 29.8 s
    against 8.6 s for two million rows of 127 columns in random order, measured)."""
    for j in range(0, c.shape[1], SORT_BLOCK):
        c[:, j : j + SORT_BLOCK] = c[order, j : j + SORT_BLOCK]


def newton_fit(
    votes: PairVotes,
    alpha: float,
    *,
    weights: FloatArray | None = None,
    start: FloatArray | None = None,
    max_iter: int = 100,
    curvature: FloatArray | None = None,
) -> FloatArray:
    """Minimise the penalised contextual Bradley-Terry loss of ``votes``.

    Parameters
    ----------
    votes : PairVotes
        The votes.
    alpha : float
        The L2 penalty, ``alpha / 2 * ||W||^2``.
    weights : array of float, optional
        ``(len(votes),)`` weights in stored order; ``votes.weights`` by default (zero
        weights leave votes out, as a fold's fit does).
    start : array of float, optional
        ``(n_models, p)`` coefficients to start from; zero by default.
    max_iter : int
        Steps at most (Newton's, or L-BFGS's past :data:`NEWTON_MAX_COEFFICIENTS`).
    curvature : array of float, optional
        ``(n_models * p, n_models * p)`` Hessian of the loss alone (no penalty) of a like
        problem, for Newton's first steps in place of one computed at ``start``: the
        fit of all votes gives a fold's fit its own, scaled to the fold's weight
        (:meth:`PairVotes.loss_hessian`). It changes the path, not the optimum.

    Returns
    -------
    ndarray
        ``(n_models, p)`` coefficients (natural-log units), not centred.
    """
    w = votes.weights if weights is None else weights
    coef = np.zeros((votes.n_models, votes.p)) if start is None else np.array(start, np.float64)
    # one BLAS thread: a pair's products are small, and OpenBLAS's threads spin on them
    # (20 times the CPU on two cores, measured)
    with threadpool_limits(limits=1, user_api="blas"):
        if votes.n_models * votes.p > NEWTON_MAX_COEFFICIENTS:
            return _lbfgs(votes, alpha, w, coef, max_iter)
        return _newton(votes, alpha, w, coef, max_iter, curvature)


def _newton(
    votes: PairVotes,
    alpha: float,
    w: FloatArray,
    coef: FloatArray,
    max_iter: int,
    curvature: FloatArray | None,
) -> FloatArray:
    """Newton's method with backtracking, from ``coef``, its Hessian kept while it serves.

    A Hessian costs ``O(n p^2)``, a gradient ``O(n p)``: a step reuses the last Hessian's
    factor as long as the gradient falls fourfold a step at full length (near the
    optimum, where a Newton step's Hessian barely changes), and computes a new one when
    progress slows. ``curvature``, the loss's Hessian of a like problem (the fit of all
    votes, for a fold's), stands for the first one.
    """
    shape = coef.shape
    if curvature is None:
        value, grad, hessian = votes.derivatives(coef, w, alpha)
    else:
        value, grad, _ = votes.derivatives(coef, w, alpha, hessian=False)
        hessian = curvature + alpha * np.eye(coef.size)
    assert hessian is not None
    factor = linalg.cho_factor(hessian)
    hessians, halvings, steps = int(curvature is None), 0, 0
    for _ in range(max_iter):
        steps += 1
        step = linalg.cho_solve(factor, grad.ravel()).reshape(shape)
        slope = float(grad.ravel() @ step.ravel())  # the decrease a full step promises
        before = np.linalg.norm(grad)
        t = 1.0
        # backtracking on the objective (Armijo); a full step, the usual case, is
        # measured with its gradient in the same pass over the votes
        trial = coef - step
        trial_grad: FloatArray | None
        trial_value, trial_grad, _ = votes.derivatives(trial, w, alpha, hessian=False)
        # a sum of millions of losses is exact to about 1e-13 of itself: a step whose
        # promised decrease is below that is judged by the step alone, not halved until
        # rounding errors agree
        noise = ROUNDING * max(abs(value), 1.0)
        while trial_value > value - 1e-4 * t * slope + noise and t >= 1e-10:
            t *= 0.5
            halvings += 1
            trial = coef - t * step
            trial_value = votes.objective(trial, w, alpha)
            trial_grad = None
        coef = trial
        if np.max(np.abs(t * step)) < STEP_TOLERANCE:
            break
        if trial_grad is None:
            value, grad, _ = votes.derivatives(coef, w, alpha, hessian=False)
        else:
            value, grad = trial_value, trial_grad
        if t < 1.0 or np.linalg.norm(grad) > 0.25 * before:  # progress slowed: a new Hessian
            value, grad, hessian = votes.derivatives(coef, w, alpha)
            hessians += 1
            assert hessian is not None
            factor = linalg.cho_factor(hessian)
    logger.debug("Newton: %d steps, %d Hessians, %d halvings", steps, hessians, halvings)
    return coef


def _lbfgs(
    votes: PairVotes, alpha: float, weights: FloatArray, coef: FloatArray, max_iter: int
) -> FloatArray:
    """L-BFGS on the pair gradient, for problems whose Hessian is too large to solve."""
    shape = coef.shape

    def fun(x: FloatArray) -> tuple[float, FloatArray]:
        value, grad, _ = votes.derivatives(x.reshape(shape), weights, alpha, hessian=False)
        return value, grad.ravel()

    scale = max(float(weights.sum()), 1.0)
    result = optimize.minimize(
        fun,
        coef.ravel(),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max(max_iter, 500), "gtol": 1e-8 * scale, "ftol": 1e-14},
    )
    return np.asarray(result.x).reshape(shape)
