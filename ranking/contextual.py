"""Contextual Bradley-Terry: a model's strength depends on the query it answers.

Each vote comes with a context vector ``c`` (for a query: 1, its topic one-hot, its
standardised writing style). Model ``m`` has a coefficient vector ``w_m`` and strength
``w_m . c`` in that context, so that::

    P(a beats b | c) = sigmoid((w_a - w_b) . c)

The first context entry is the constant 1, so ``w_m[0]`` is the model's base strength,
the next ones its per-topic strengths, the rest its style interactions. It is a logistic
regression on the rows ``(e_a - e_b) (x) c`` (Kronecker product, :func:`contextual_design`)
with an L2 penalty ``alpha / 2 * ||w||^2``; ties count as half a win each way. It is
fitted without building that design: the votes grouped by model pair
(:class:`ranking.pair_votes.PairVotes`) give the gradient and Hessian in ``O(n p^2)``,
and Newton's method converges in a few steps (scikit-learn's L-BFGS on the design took
hundreds, and a design per fold). Strengths are centred over models in every context.

Because strength is linear in the context, a user's expected strength over their own
queries is the strength at their mean context: :meth:`ContextualBT.strengths` of a user
profile's topic shares and mean style is the user's predicted rating.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import sparse

from ranking.pair_votes import PairVotes, newton_fit
from ranking.progress import Advance
from ranking.types import FloatArray, Matchups, Outcomes

__all__ = [
    "ALPHA_GRID",
    "AlphaSearch",
    "ContextualBT",
    "contextual_design",
    "contextual_path",
    "fit_contextual_bt",
    "fit_folds",
    "fit_with_folds",
    "held_out_log_loss",
    "search_alpha",
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


#: Context entries made into design entries at a time: bounds what building a design
#: needs beside the design itself (about 40 bytes an entry, some 160 MB).
_DESIGN_CHUNK_ENTRIES = 1 << 22


def contextual_design(
    matchups: Matchups, contexts: npt.ArrayLike, n_models: int
) -> sparse.csr_matrix:
    """The ``(n, n_models * p)`` rows ``(e_a - e_b) (x) c`` of the logistic regression.

    Only the nonzero entries are stored (a context's one-hot topic columns are mostly
    zero, and a stored zero adds nothing to a product but its time), each row's columns
    in order, the lower model's block first. Built as CSR directly, a block of rows at a
    time, so that building it takes little more memory than the design itself.
    """
    c = np.asarray(contexts, dtype=np.float64)
    return _design(np.asarray(matchups, dtype=np.intp), c, n_models, np.arange(len(c)))


def _design(
    matchups: npt.NDArray[np.intp],
    contexts: FloatArray,
    n_models: int,
    rows: npt.NDArray[np.intp],
) -> sparse.csr_matrix:
    """:func:`contextual_design` of the votes ``rows`` (in that order, repeats allowed),
    read from the whole arrays rather than from a copy of those rows."""
    n, p = len(rows), contexts.shape[1]
    chunk = max(1, _DESIGN_CHUNK_ENTRIES // max(p, 1))
    blocks = range(0, n, chunk)
    per_row = np.empty(n, dtype=np.int64)
    for first in blocks:
        per_row[first : first + chunk] = np.count_nonzero(contexts[rows[first : first + chunk]], 1)
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_row, out=starts[1:])
    index = np.int32 if n_models * p < 2**31 else np.int64
    columns = np.empty(2 * int(starts[-1]), dtype=index)
    values = np.empty(2 * int(starts[-1]))
    for first in blocks:
        block = rows[first : first + chunk]
        c, m = contexts[block], matchups[block]
        low, high = m.min(axis=1), m.max(axis=1)
        row, feature = np.nonzero(c)  # row-major: each row's features in order
        # entry t of the block, of rank q in its row r, goes to 2 * starts[r] + q (the
        # lower model's block), and per_row[r] further on (the higher model's)
        at_low = np.arange(row.size, dtype=np.int64) + starts[first] + starts[first + row]
        at_high = at_low + per_row[first + row]
        columns[at_low] = low[row] * p + feature
        columns[at_high] = high[row] * p + feature
        values[at_low] = c[row, feature] * np.where(m[row, 0] == low[row], 1.0, -1.0)
        values[at_high] = -values[at_low]
    design = sparse.csr_matrix((values, columns, 2 * starts), shape=(n, n_models * p))
    design.has_sorted_indices = True
    return design


def _check_fit(outcomes: Outcomes, contexts: npt.ArrayLike, alphas: Sequence[float]) -> FloatArray:
    for alpha in alphas:
        if not (math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"Argument 'alpha' must be a positive number, not {alpha!r}.")
    c = np.asarray(contexts, dtype=np.float64)
    if c.ndim != 2 or len(c) != len(outcomes):
        raise ValueError(
            f"Argument 'contexts' must have one row per vote ({len(outcomes)}), "
            f"not shape {c.shape}."
        )
    return c


def contextual_path(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    alphas: Sequence[float],
    *,
    weights: npt.ArrayLike | None = None,
    max_iter: int = 500,
    start: ContextualBT | None = None,
) -> Iterator[ContextualBT]:
    """Fit a contextual Bradley-Terry model at each penalty of ``alphas`` in turn.

    The votes are grouped by pair once (:class:`~ranking.pair_votes.PairVotes`), and each
    fit starts from the previous one's coefficients, so a path from the strongest penalty
    down converges in a few Newton steps a penalty. The fits are lazy: a search that
    stops early pays for no more.

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
    alphas : sequence of float
        L2 penalties on the coefficients (natural-log units; larger is smoother).
    weights : array_like, optional
        ``(n,)`` vote weights.
    max_iter : int
        Solver steps per fit at most (Newton's; L-BFGS's past
        :data:`ranking.pair_votes.NEWTON_MAX_COEFFICIENTS` coefficients).
    start : ContextualBT, optional
        A fit of a like problem to start the first fit from (the model of all votes,
        when fitting a fold's); without it, the first fit starts from zero.

    Yields
    ------
    ContextualBT
        The fit at each penalty, in the order of ``alphas``.
    """
    c = _check_fit(outcomes, contexts, alphas)
    if start is not None:
        _check_start(start, n_models, c.shape[1])
    votes = PairVotes(matchups, outcomes, c, n_models, weights)
    del c, contexts  # a lazy path holds its votes alone, not the caller's contexts too
    coef = None if start is None else start.coef
    for alpha in alphas:
        coef = newton_fit(votes, alpha, start=coef, max_iter=max_iter)
        yield _centred(coef, alpha)


def _check_start(start: ContextualBT, n_models: int, p: int) -> None:
    if start.coef.shape != (n_models, p):
        raise ValueError(
            f"Argument 'start' must have coefficients of shape {(n_models, p)}, "
            f"not {start.coef.shape}."
        )


def _centred(coef: FloatArray, alpha: float) -> ContextualBT:
    """The model of ``coef`` centred over models: the loss sees only differences between
    models, and the penalty's optimum is centred already (up to the solver's tolerance)."""
    return ContextualBT(coef - coef.mean(axis=0), alpha)


def fit_contextual_bt(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    *,
    alpha: float = 1.0,
    weights: npt.ArrayLike | None = None,
    max_iter: int = 500,
    start: ContextualBT | None = None,
) -> ContextualBT:
    """Fit a contextual Bradley-Terry model at one penalty ``alpha``.

    The arguments are those of :func:`contextual_path`, with ``max_iter`` solver steps at
    most; ``alpha`` is the L2 penalty on the coefficients (natural-log units; larger is
    smoother).

    Returns
    -------
    ContextualBT
    """
    path = contextual_path(
        matchups,
        outcomes,
        contexts,
        n_models,
        [alpha],
        weights=weights,
        max_iter=max_iter,
        start=start,
    )
    return next(path)


def fit_folds(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    folds: npt.ArrayLike,
    labels: Sequence[int],
    *,
    alpha: float,
    start: ContextualBT | None = None,
    advance: Advance | None = None,
) -> dict[int, ContextualBT]:
    """Fit, for each fold of ``labels``, the model of every vote outside that fold.

    The votes are grouped by pair once; a fold's fit gives its own votes zero weight, so
    the folds share one copy of the contexts and no fold builds a design.

    Parameters
    ----------
    matchups, outcomes, contexts, n_models
        The votes, as in :func:`contextual_path`.
    folds : array_like
        ``(n,)`` fold label of each vote.
    labels : sequence of int
        The folds to fit (a label no vote has gets the model of every vote).
    alpha : float
        The L2 penalty.
    start : ContextualBT, optional
        Each fold's fit starts from it: the model of all votes, which a fold's model
        differs little from, saves it iterations (it converges to the same optimum).
    advance : callable, optional
        Told of each fit as it is done.

    Returns
    -------
    dict of int to ContextualBT
    """
    c = _check_fit(outcomes, contexts, [alpha])
    if start is not None:
        _check_start(start, n_models, c.shape[1])
    votes = PairVotes(matchups, outcomes, c, n_models)
    return _fold_fits(votes, np.asarray(folds)[votes.rows], labels, alpha, start, advance)


def _fold_fits(
    votes: PairVotes,
    fold: npt.NDArray[np.intp],
    labels: Sequence[int],
    alpha: float,
    start: ContextualBT | None,
    advance: Advance | None,
    *,
    curvature: FloatArray | None = None,
    fold_starts: Mapping[int, ContextualBT] | None = None,
) -> dict[int, ContextualBT]:
    """:func:`fit_folds` of votes grouped already (``fold`` in their stored order).

    Each fold's fit starts from its model in ``fold_starts`` where it has one of this
    shape, else from ``start``. Newton's first Hessian is ``curvature`` (the loss's, of
    all votes), or else the loss's at ``start``, scaled to each fold's weight.
    """
    first = None if start is None else start.coef
    if curvature is None and first is not None and len(labels):
        curvature = votes.loss_hessian(first, votes.weights)
    shape = (votes.n_models, votes.p)
    total = max(float(votes.weights.sum()), 1e-300)
    models = {}
    for f in labels:
        weights = votes.weights * (fold != f)
        share = None if curvature is None else curvature * (weights.sum() / total)
        earlier = None if fold_starts is None else fold_starts.get(f)
        begin = earlier.coef if earlier is not None and earlier.coef.shape == shape else first
        coef = newton_fit(votes, alpha, weights=weights, start=begin, curvature=share)
        models[f] = _centred(coef, alpha)
        if advance is not None:
            advance(1)
    return models


def fit_with_folds(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.NDArray[np.float64],
    n_models: int,
    folds: npt.ArrayLike,
    labels: Sequence[int],
    *,
    alpha: float,
    start: ContextualBT | None = None,
    fold_starts: Mapping[int, ContextualBT] | None = None,
    advance: Advance | None = None,
) -> tuple[ContextualBT, dict[int, ContextualBT]]:
    """The model of every vote, then :func:`fit_folds` started from it, on one copy.

    ``contexts`` (float64, one row per vote) is **sorted in place** by model pair and
    kept while fitting, so that the fits hold no second copy of it: the caller must not
    read it afterwards. Votes given in :func:`~ranking.pair_votes.pair_order` are not
    moved. ``advance`` is told of the model of all votes, then of each fold.

    ``start`` and ``fold_starts`` are an earlier fit's models of all votes and of each
    fold (a refit's, after a few more votes): each fit starts from its own and converges
    in a step or two. Started so, the loss's Hessian at ``start`` serves as the first of
    every fit. They change the path, not the optimum.

    Returns
    -------
    model : ContextualBT
        The fit of every vote at ``alpha``.
    folds : dict of int to ContextualBT
        For each fold of ``labels``, the model of the votes outside it.
    """
    c = _check_fit(outcomes, contexts, [alpha])
    if start is not None:
        _check_start(start, n_models, c.shape[1])
    votes = PairVotes(matchups, outcomes, c, n_models, copy=False)
    first = None if start is None else start.coef
    curvature = None if first is None else votes.loss_hessian(first, votes.weights)
    coef = newton_fit(votes, alpha, start=first, curvature=curvature)
    model = _centred(coef, alpha)
    if advance is not None:
        advance(1)
    fold = np.asarray(folds)[votes.rows]
    return model, _fold_fits(
        votes, fold, labels, alpha, model, advance, curvature=curvature, fold_starts=fold_starts
    )


def held_out_log_loss(
    model: ContextualBT, matchups: Matchups, outcomes: Outcomes, contexts: npt.ArrayLike
) -> float:
    """Mean log-loss of ``model`` on votes (a tie scored as half a win each way)."""
    p = np.clip(model.win_probability(matchups, contexts), 1e-12, 1 - 1e-12)
    y = np.asarray(outcomes, dtype=np.float64)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


@dataclass(frozen=True)
class AlphaSearch:
    """The penalty chosen by held-out votes, with what the search fitted on the way.

    Attributes
    ----------
    losses : ndarray
        Held-out log-loss per vote of each penalty of the grid, in the grid's order;
        ``inf`` for the penalties the search did not reach.
    alpha : float
        The penalty of the lowest loss.
    fold_models : dict of int to ContextualBT
        For each fold label, the model at ``alpha`` fitted on the other folds' votes.
    """

    losses: FloatArray
    alpha: float
    fold_models: dict[int, ContextualBT]


def search_alpha(
    matchups: Matchups,
    outcomes: Outcomes,
    contexts: npt.ArrayLike,
    n_models: int,
    folds: npt.ArrayLike,
    grid: Sequence[float] = ALPHA_GRID,
    advance: Advance | None = None,
) -> AlphaSearch:
    """Choose the penalty of ``grid`` by the held-out log-loss over the given folds.

    ``folds`` labels each vote with its fold; grouping votes by user makes this the loss
    of predicting *new users*. The search walks the grid from the strongest penalty down,
    each fold's fits warm-started along the way, all of them on one copy of the votes
    grouped by pair (a fold's own votes weighted zero), and stops once
    the loss has risen on two penalties in a row: the held-out loss of a ridge path is
    taken to be unimodal in the penalty, and the weak penalties are the slow fits.
    ``advance``, if given, is told of each of the ``len(grid) * n_folds`` fits as it is
    done, and of those skipped when the search stops.
    """
    c = np.asarray(contexts, dtype=np.float64)
    votes = PairVotes(matchups, outcomes, c, n_models)
    fold = np.asarray(folds)[votes.rows]
    labels = [int(f) for f in np.unique(fold)]
    order = sorted(range(len(grid)), key=lambda i: -grid[i])
    coefs: dict[int, FloatArray | None] = dict.fromkeys(labels)
    # each fold's loss Hessian at its first fit: Newton's first along the rest of the path
    curvatures: dict[int, FloatArray | None] = dict.fromkeys(labels)
    losses = np.full(len(grid), np.inf)
    best: tuple[float, dict[int, ContextualBT]] = (np.inf, {})
    rises = 0
    for step, i in enumerate(order):
        models, total = {}, 0.0
        for f in labels:
            held = fold == f
            weights = votes.weights * ~held
            coef = newton_fit(
                votes, grid[i], weights=weights, start=coefs[f], curvature=curvatures[f]
            )
            if curvatures[f] is None:
                curvatures[f] = votes.loss_hessian(coef, weights)
            coefs[f] = coef
            models[f] = _centred(coef, grid[i])
            total += votes.log_loss(coef, votes.weights * held) * held.sum()
            if advance is not None:
                advance(1)
        losses[i] = total / len(votes)
        if losses[i] < best[0]:
            best, rises = (losses[i], models), 0
        else:
            rises += 1
        if rises == 2:
            if advance is not None and step + 1 < len(order):
                advance(len(labels) * (len(order) - step - 1))
            break
    return AlphaSearch(losses, float(grid[int(np.argmin(losses))]), best[1])
