"""The references our code is timed against: FastChat-style Bradley-Terry and choix.

FastChat's ``compute_bt`` (``fastchat/serve/monitor/rating_systems.py``) minimises the
Bradley-Terry negative log-likelihood with ``scipy.optimize.minimize(method="L-BFGS-B")``
and an analytic gradient, ratings in ``log10`` units, ties counting half. It now collapses
identical rows first; the reference here is the version before that, over all ``N`` rows
(weights one), with ``np.bincount`` in place of FastChat's slower ``np.add.at``.

Run the L-BFGS-B reference inside :func:`reference_blas`: with OpenBLAS's default thread
pool, scipy's L-BFGS-B can spend milliseconds per iteration handing tiny vector
operations to threads (at times 7 ms against 0.08 ms with one thread on the 2-core
benchmark machine, whatever the problem size), which would flatter every ratio against it.
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.optimize import OptimizeResult, minimize
from scipy.special import expit
from scipy.stats import norm
from threadpoolctl import threadpool_limits

from ranking.types import CENTER, SCALE, WINNER_OUTCOME, FloatArray, Matchups, Outcomes

__all__ = [
    "FASTCHAT_FTOL",
    "REFERENCE_FTOL",
    "bootstrap_reference",
    "choix_user_fit",
    "fastchat_arrays",
    "fit_bt_reference",
    "reference_blas",
    "sandwich_reference",
]


#: ``ftol`` of scipy's L-BFGS-B as FastChat leaves it (the default, ``factr = 1e7``).
FASTCHAT_FTOL = 2.220446049250313e-09
#: ``ftol`` of the reference: over all N rows FastChat's default stops early, many Elo
#: points from the optimum, so the reference is run to agreement instead.
REFERENCE_FTOL = 1e-12
_LN10 = math.log(10.0)


def reference_blas() -> AbstractContextManager[Any]:
    """Limit BLAS to one thread, the reference's fastest setting (see the module docstring)."""
    return threadpool_limits(limits=1, user_api="blas")


def fastchat_arrays(battles: pd.DataFrame) -> tuple[Matchups, Outcomes, list[str]]:
    """FastChat's ``get_matchups_models`` and outcome coding, ties as 0.5.

    Returns
    -------
    matchups : ndarray
        ``(N, 2)`` model indices in order of first appearance.
    outcomes : ndarray
        ``(N,)`` 1, 0.5 or 0 for ``model_a``.
    models : list of str
        The model names.
    """
    n = len(battles)
    codes, models = pd.factorize(pd.concat([battles["model_a"], battles["model_b"]]))
    matchups = np.column_stack([codes[:n], codes[n:]]).astype(np.intp)
    winners = battles["winner"].astype(str).map(WINNER_OUTCOME)
    outcomes = np.asarray(winners.to_numpy(dtype=np.float64), dtype=np.float64)
    return matchups, outcomes, [str(m) for m in models]


def _loss_and_grad(
    ratings: FloatArray, a: npt.NDArray[np.intp], b: npt.NDArray[np.intp], y: FloatArray
) -> tuple[float, FloatArray]:
    """FastChat's ``bt_loss_and_grad`` with unit weights (``log10`` ratings)."""
    probs = expit(_LN10 * (ratings[a] - ratings[b]))
    loss = -float(np.sum(np.log(probs) * y + np.log1p(-probs) * (1.0 - y)))
    g = -_LN10 * (y - probs)
    k = ratings.size
    grad = np.bincount(a, g, minlength=k) - np.bincount(b, g, minlength=k)
    return loss, grad.astype(np.float64, copy=False)


def fit_bt_reference(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    *,
    ftol: float = REFERENCE_FTOL,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> tuple[FloatArray, OptimizeResult]:
    """FastChat-style L-BFGS-B Bradley-Terry fit over every (un-collapsed) row.

    Parameters
    ----------
    n_models : int
        Number of models.
    matchups, outcomes
        One row per vote.
    ftol : float
        L-BFGS-B's relative function tolerance (:data:`FASTCHAT_FTOL` is FastChat's).
    tol : float
        Gradient tolerance (FastChat's ``1e-6``).
    max_iter : int
        Most iterations (FastChat's 100).

    Returns
    -------
    ratings : ndarray
        ``(k,)`` Elo-scale ratings averaging 1000.
    result : scipy.optimize.OptimizeResult
        The optimiser's report (``x`` in ``log10`` units).
    """
    a = np.ascontiguousarray(matchups[:, 0])
    b = np.ascontiguousarray(matchups[:, 1])
    result = minimize(
        _loss_and_grad,
        np.zeros(n_models),
        args=(a, b, np.asarray(outcomes, dtype=np.float64)),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": tol, "ftol": ftol},
    )
    elo = SCALE * result.x
    return CENTER + elo - elo.mean(), result


def sandwich_reference(
    ratings: FloatArray, matchups: Matchups, outcomes: Outcomes, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Sandwich intervals ``H^+ M H^+``, summed over all N rows, on the Elo scale.

    The same formula as :func:`ranking.intervals.sandwich.sandwich_covariance`, without a prior
    (a pseudo-inverse handles the common shift) and without collapsing the rows.
    """
    k = ratings.size
    theta = (ratings - CENTER) * _LN10 / SCALE  # natural-log units
    a, b = matchups[:, 0], matchups[:, 1]
    p = expit(theta[a] - theta[b])
    cells = np.concatenate([a * (k + 1), b * (k + 1), a * k + b, b * k + a])

    def outer_sum(v: FloatArray) -> FloatArray:
        flat = np.bincount(cells, np.concatenate([v, v, -v, -v]), minlength=k * k)
        return flat.astype(np.float64, copy=False).reshape(k, k)

    # Pseudo-inverse of the Hessian, dropping its null direction (the common shift).
    eigenvalues, vectors = np.linalg.eigh(outer_sum(p * (1.0 - p)))
    keep = eigenvalues > 1e-10 * eigenvalues.max()
    bread = (vectors[:, keep] / eigenvalues[keep]) @ vectors[:, keep].T
    cov = bread @ outer_sum((p - outcomes) ** 2) @ bread
    half = float(norm.ppf(0.5 + confidence / 2.0)) * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    half *= SCALE / _LN10
    return ratings - half, ratings + half


def bootstrap_reference(
    n_models: int,
    matchups: Matchups,
    outcomes: Outcomes,
    rounds: int,
    rng: np.random.Generator,
) -> FloatArray:
    """FastChat's bootstrap: resample the N rows with replacement and refit, ``rounds`` times.

    Returns
    -------
    ndarray
        ``(rounds, k)`` Elo-scale ratings.
    """
    n = len(outcomes)
    samples = []
    for _ in range(rounds):
        rows = rng.integers(0, n, size=n)
        samples.append(fit_bt_reference(n_models, matchups[rows], outcomes[rows])[0])
    return np.array(samples)


def choix_user_fit(
    n_models: int, matchups: Matchups, outcomes: Outcomes, alpha: float
) -> FloatArray:
    """One user's Bradley-Terry fit with ``choix.opt_pairwise``, on the Elo scale.

    choix takes ``(winner, loser)`` pairs and has no ties, so every vote is written twice:
    a win as two wins, a tie as one win each way, which counts a tie as half a win and
    half a loss. choix's penalty is ``alpha * ||theta||^2`` on that doubled likelihood,
    the same as our ``alpha / 2 * ||theta||^2`` on the votes once.
    """
    import choix

    pairs: list[tuple[int, int]] = []
    for (a, b), y in zip(matchups.tolist(), outcomes.tolist(), strict=True):
        if y == 1.0:
            pairs += [(a, b), (a, b)]
        elif y == 0.0:
            pairs += [(b, a), (b, a)]
        else:
            pairs += [(a, b), (b, a)]
    theta = choix.opt_pairwise(n_models, pairs, alpha=alpha)
    return np.asarray(CENTER + SCALE / _LN10 * theta, dtype=np.float64)
