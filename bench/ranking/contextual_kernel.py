"""Benchmark X (issue 33, item 1): the rating predictor's contextual fits, beside the
solver they replaced, on the same votes in the same run.

The rating predictor fits a contextual Bradley-Terry model per member, per fold and per
penalty of its search (:mod:`features.predictor_fit`). Each fit was scikit-learn's
L-BFGS logistic regression on a sparse design built for it, ``(e_a - e_b) (x) c`` a vote
(ties as two half-weight rows); it is now Newton's method on the votes grouped by pair
(:mod:`ranking.pair_votes`), with no design. Both are timed here on one problem of
benchmark R's shape: 15 models, contexts of 1, a one-hot topic of 10, 8 query components
and 16 style components shared by each user's 20 votes, outcomes (10% ties) drawn from
known coefficients; first the fit of all votes from zero, then a fold's fit (a fifth of
the users left out) started from it, as :func:`ranking.contextual.fit_folds` does. CPU
seconds of this process (both run on one BLAS thread: the reference's products are
sparse), the objective each reaches and their largest coefficient difference.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import numpy as np
from scipy import sparse

from bench.common import Row, make_row
from ranking.types import FloatArray

__all__ = ["run"]

#: (votes, users) of the full and quick runs: benchmark R's log has 2,009,134 votes.
FULL = (2_000_000, 100_000)
QUICK = (40_000, 2_000)
N_MODELS, TOPICS, QUERY, STYLE = 15, 10, 8, 16
ALPHA = 1.0


def _problem(n: int, users: int) -> tuple[np.ndarray, np.ndarray, FloatArray, np.ndarray]:
    """Matchups, outcomes, contexts and each vote's fold (by user) of a problem of
    benchmark R's shape."""
    rng = np.random.default_rng(0)
    user = rng.integers(0, users, n)
    style = rng.normal(size=(users, STYLE))[user]
    topic = np.eye(TOPICS)[rng.integers(0, TOPICS, n)]
    contexts = np.hstack([np.ones((n, 1)), topic, rng.normal(size=(n, QUERY)), style])
    first = rng.integers(0, N_MODELS, n)
    second = (first + rng.integers(1, N_MODELS, n)) % N_MODELS
    truth = rng.normal(scale=0.3, size=(N_MODELS, contexts.shape[1]))
    truth[:, 0] = rng.normal(scale=1.0, size=N_MODELS)
    margin = np.einsum("ij,ij->i", contexts, truth[first] - truth[second])
    outcomes = (rng.random(n) < 1 / (1 + np.exp(-margin))).astype(float)
    outcomes[rng.random(n) < 0.1] = 0.5
    return np.column_stack([first, second]), outcomes, contexts, user % 5


def _design_fit(
    matchups: np.ndarray,
    outcomes: np.ndarray,
    contexts: FloatArray,
    keep: np.ndarray,
    start: FloatArray | None,
) -> FloatArray:
    """The solver before: scikit-learn's L-BFGS on the design of the votes ``keep``,
    ties as two half-weight rows, tolerance 1e-6, warm-started from ``start``."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    from ranking.contextual import contextual_design

    rows = np.flatnonzero(keep)
    tie = rows[outcomes[rows] == 0.5]
    every = np.concatenate([rows, tie])
    x = contextual_design(matchups[every], contexts[every], N_MODELS)
    label = np.concatenate([(outcomes[rows] >= 0.5), np.zeros(tie.size, bool)]).astype(np.int8)
    weight = np.concatenate([np.where(outcomes[rows] == 0.5, 0.5, 1.0), np.full(tie.size, 0.5)])
    model = LogisticRegression(
        C=1 / ALPHA, fit_intercept=False, max_iter=500, tol=1e-6, warm_start=True
    )
    if start is not None:
        model.coef_ = start.reshape(1, -1).copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(sparse.csr_matrix(x), label, sample_weight=weight)
    return np.asarray(model.coef_).reshape(N_MODELS, -1)


def _cpu(task: Callable[[], FloatArray]) -> tuple[float, FloatArray]:
    start = time.process_time()
    result = task()
    return time.process_time() - start, result


def run(quick: bool = False) -> list[Row]:
    """Run benchmark X; ``quick`` fits 40,000 votes."""
    from threadpoolctl import threadpool_limits

    from ranking.pair_votes import PairVotes, newton_fit

    n, users = QUICK if quick else FULL
    matchups, outcomes, contexts, fold = _problem(n, users)
    every = np.ones(n, dtype=bool)
    label = (
        f"simulated contexts of benchmark R's shape: {n:,} votes of {users:,} users, "
        f"{N_MODELS} models, p = {contexts.shape[1]}"
    )
    with threadpool_limits(limits=1, user_api="blas"):
        ours_s, ours = _cpu(
            lambda: newton_fit(PairVotes(matchups, outcomes, contexts, N_MODELS), ALPHA)
        )
        theirs_s, theirs = _cpu(lambda: _design_fit(matchups, outcomes, contexts, every, None))
        votes = PairVotes(matchups, outcomes, contexts, N_MODELS)
        held = fold[votes.rows] == 0
        fold_s, fold_ours = _cpu(
            lambda: newton_fit(votes, ALPHA, weights=votes.weights * ~held, start=ours)
        )
        fold_ref_s, fold_theirs = _cpu(
            lambda: _design_fit(matchups, outcomes, contexts, fold != 0, theirs)
        )
    objective = [votes.objective(c, votes.weights, ALPHA) for c in (ours, theirs)]
    fold_weights = votes.weights * ~held
    fold_objective = [votes.objective(c, fold_weights, ALPHA) for c in (fold_ours, fold_theirs)]
    return [
        make_row(
            "contextual Bradley-Terry, the fit of all votes from zero: Newton on votes grouped "
            "by pair (ours) vs scikit-learn's L-BFGS on the design (the solver before)",
            label,
            ours=ours_s,
            reference=theirs_s,
            notes=f"CPU seconds, the design's building included; objective "
            f"{objective[0]:,.3f} vs {objective[1]:,.3f}; largest coefficient difference "
            f"{np.abs(ours - theirs).max():.1e} nats",
        ),
        make_row(
            "the same, a fold's fit (a fifth of the users out) started from the fit of all",
            label,
            ours=fold_s,
            reference=fold_ref_s,
            notes=f"CPU seconds; objective {fold_objective[0]:,.3f} vs {fold_objective[1]:,.3f}; "
            f"largest coefficient difference {np.abs(fold_ours - fold_theirs).max():.1e} nats",
        ),
    ]
