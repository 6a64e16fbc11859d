"""Contextual Bradley-Terry: a model's strength depends on the query it answers.

Each vote comes with a context vector ``c`` (for a query: 1, its topic one-hot, its
standardised writing style). Model ``m`` has a coefficient vector ``w_m`` and strength
``w_m . c`` in that context, so that::

    P(a beats b | c) = sigmoid((w_a - w_b) . c)

The first context entry is the constant 1, so ``w_m[0]`` is the model's base strength,
the next ones its per-topic strengths, the rest its style interactions. It is a logistic
regression on the rows ``(e_a - e_b) (x) c`` (Kronecker product), fitted by
scikit-learn with an L2 penalty ``alpha / 2 * ||w||^2``; ties count as half a win each
way. Strengths are centred over models in every context.

Because strength is linear in the context, a user's expected strength over their own
queries is the strength at their mean context: :meth:`ContextualBT.strengths` of a user
profile's topic shares and mean style is the user's predicted rating.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from ranking.progress import Advance
from ranking.types import FloatArray, Matchups, Outcomes

__all__ = [
    "ALPHA_GRID",
    "ContextualBT",
    "alpha_losses",
    "choose_alpha",
    "contextual_design",
    "fit_contextual_bt",
    "held_out_log_loss",
]

ALPHA_GRID: tuple[float, ...] = tuple(10.0 ** np.arange(-1.0, 2.51, 0.5))


@dataclass(frozen=True)
class ContextualBT:
    """A fitted contextual Bradley-Terry model.

    Attributes
    ----------
    coef : ndarray
        ``(n_models, p)`` coefficients in natural-log units, centred over models.
    alpha : float
        The L2 penalty it was fitted with.
    """

    coef: FloatArray
    alpha: float

    @property
    def n_models(self) -> int:
        return int(self.coef.shape[0])

    def strengths(self, contexts: npt.ArrayLike) -> FloatArray:
        """``(n, n_models)`` strengths (natural-log units) in each of ``(n, p)`` contexts."""
        c = np.atleast_2d(np.asarray(contexts, dtype=np.float64))
        if c.shape[1] != self.coef.shape[1]:
            raise ValueError(
                f"Argument 'contexts' must have {self.coef.shape[1]} columns, not {c.shape[1]}."
            )
        return c @ self.coef.T

    def win_probability(self, matchups: Matchups, contexts: npt.ArrayLike) -> FloatArray:
        """``(n,)`` probability that ``matchups[:, 0]`` beats ``matchups[:, 1]``."""
        s = self.strengths(contexts)
        rows = np.arange(len(s))
        d = s[rows, matchups[:, 0]] - s[rows, matchups[:, 1]]
        return 1.0 / (1.0 + np.exp(-d))


def contextual_design(
    matchups: Matchups, contexts: npt.ArrayLike, n_models: int
) -> sparse.csr_matrix:
    """The ``(n, n_models * p)`` rows ``(e_a - e_b) (x) c`` of the logistic regression."""
    c = np.asarray(contexts, dtype=np.float64)
    n, p = c.shape
    m = np.asarray(matchups, dtype=np.intp)
    columns = np.concatenate([m[:, :1] * p + np.arange(p), m[:, 1:] * p + np.arange(p)], axis=1)
    values = np.concatenate([c, -c], axis=1)
    rows = np.repeat(np.arange(n), 2 * p)
    return sparse.csr_matrix((values.ravel(), (rows, columns.ravel())), shape=(n, n_models * p))


def _expand_ties(
    design: sparse.csr_matrix, outcomes: Outcomes, weights: FloatArray
) -> tuple[sparse.csr_matrix, npt.NDArray[np.int8], FloatArray]:
    """Wins as one row; a tie as half a win each way (two rows of half weight)."""
    y = np.asarray(outcomes, dtype=np.float64)
    tie = np.flatnonzero(y == 0.5)
    x = sparse.vstack([design, design[tie]], format="csr")
    label = np.concatenate([(y >= 0.5).astype(np.int8), np.zeros(tie.size, dtype=np.int8)])
    w = np.concatenate([np.where(y == 0.5, 0.5, 1.0) * weights, 0.5 * weights[tie]])
    return x, label, w


def fit_contextual_bt(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    *,
    alpha: float = 1.0,
    weights: npt.ArrayLike | None = None,
    max_iter: int = 500,
) -> ContextualBT:
    """Fit a contextual Bradley-Terry model.

    Parameters
    ----------
    matchups : array of int
        ``(n, 2)`` model indices.
    outcomes : array of float
        ``(n,)`` 1 if the first model won, 0 if the second, 0.5 for a tie.
    contexts : array_like
        ``(n, p)`` context of each vote; the first column should be the constant 1.
    n_models : int
        Number of models.
    alpha : float
        L2 penalty on the coefficients (natural-log units; larger is smoother).
    weights : array_like, optional
        ``(n,)`` vote weights.
    max_iter : int
        Iterations of L-BFGS.

    Returns
    -------
    ContextualBT
    """
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"Argument 'alpha' must be a positive number, not {alpha!r}.")
    c = np.asarray(contexts, dtype=np.float64)
    if c.ndim != 2 or len(c) != len(outcomes):
        raise ValueError(
            f"Argument 'contexts' must have one row per vote ({len(outcomes)}), "
            f"not shape {c.shape}."
        )
    w = np.ones(len(outcomes)) if weights is None else np.asarray(weights, dtype=np.float64)
    x, y, w = _expand_ties(contextual_design(matchups, c, n_models), outcomes, w)
    if np.unique(y).size < 2:  # one class only: nothing to learn beyond the prior
        return ContextualBT(np.zeros((n_models, c.shape[1])), alpha)
    model = LogisticRegression(C=1.0 / alpha, fit_intercept=False, max_iter=max_iter, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x, y, sample_weight=w)
    coef = model.coef_.reshape(n_models, c.shape[1])
    return ContextualBT(coef - coef.mean(axis=0), alpha)


def held_out_log_loss(
    model: ContextualBT, matchups: Matchups, outcomes: Outcomes, contexts: npt.ArrayLike
) -> float:
    """Mean log-loss of ``model`` on votes (a tie scored as half a win each way)."""
    p = np.clip(model.win_probability(matchups, contexts), 1e-12, 1 - 1e-12)
    y = np.asarray(outcomes, dtype=np.float64)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def alpha_losses(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    folds: npt.ArrayLike,
    grid: Sequence[float] = ALPHA_GRID,
    advance: Advance | None = None,
) -> FloatArray:
    """Held-out log-loss per vote of each penalty of ``grid``, over the given folds.

    ``folds`` labels each vote with its fold; grouping votes by user makes this the loss
    of predicting *new users*. ``advance``, if given, is told of each of the
    ``len(grid) * n_folds`` fits as it is done.
    """
    fold = np.asarray(folds)
    c = np.asarray(contexts, dtype=np.float64)
    m = np.asarray(matchups, dtype=np.intp)
    y = np.asarray(outcomes, dtype=np.float64)
    losses = np.zeros(len(grid))
    for i, alpha in enumerate(grid):
        for f in np.unique(fold):
            train, test = fold != f, fold == f
            model = fit_contextual_bt(m[train], y[train], c[train], n_models, alpha=alpha)
            losses[i] += held_out_log_loss(model, m[test], y[test], c[test]) * test.sum()
            if advance is not None:
                advance(1)
    return losses / len(y)


def choose_alpha(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    folds: npt.ArrayLike,
    grid: Sequence[float] = ALPHA_GRID,
) -> float:
    """The penalty of ``grid`` with the lowest held-out log-loss (:func:`alpha_losses`)."""
    losses = alpha_losses(matchups, outcomes, contexts, n_models, folds, grid)
    return float(grid[int(np.argmin(losses))])
