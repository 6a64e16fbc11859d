"""Many users' odds at once, compiled: ``p_best`` and rank ranges from Gaussian draws.

:func:`ranking.odds.rank_odds` holds every draw of every model in memory and sorts them;
for 100,000 users of 15 models and 400 draws that is 600 million values a fit, most of
``plb fit``'s time at that scale. :func:`gaussian_rank_odds` does the same for one user
at a time in a compiled loop (``numba``): each draw ranked by counting, each model's
ranks kept as a histogram, the rank range read off it with NumPy's ``linear`` quantile
(so the ranges equal :func:`~ranking.odds.rank_odds`'s), users in threads.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ranking.types import BoolArray, FloatArray

__all__ = ["gaussian_rank_odds"]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _quantile_of_histogram(counts: np.ndarray, n: int, q: float) -> float:  # pragma: no cover
    """NumPy's ``linear`` quantile ``q`` of ``n`` ranks given by their ``counts``."""
    virtual = (n - 1) * q
    if virtual >= n - 1:  # NumPy takes the largest (and below 0 the smallest) value
        return float(_rank_at(counts, n - 1))
    if virtual < 0:
        return float(_rank_at(counts, 0))
    previous = math.floor(virtual)
    gamma = virtual - previous
    a = _rank_at(counts, int(previous))
    diff = float(_rank_at(counts, int(previous) + 1) - a)
    if gamma >= 0.5:  # NumPy's _lerp, in its two halves
        return (a + diff) - diff * (1.0 - gamma)
    return a + diff * gamma


@numba.njit(cache=True, nogil=True)
def _rank_at(counts: np.ndarray, index: int) -> int:  # pragma: no cover - compiled
    """The rank at position ``index`` of the sorted ranks a histogram counts (1-based ranks)."""
    seen = 0
    for r in range(counts.shape[0]):
        seen += counts[r]
        if seen > index:
            return r + 1
    return counts.shape[0]


@numba.njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _odds_loop(
    mean: np.ndarray,
    sd: np.ndarray,
    listed: np.ndarray,
    z: np.ndarray,
    tail: float,
    p_best: np.ndarray,
    rank_lower: np.ndarray,
    rank_upper: np.ndarray,
) -> None:  # pragma: no cover - compiled
    n_users, k = mean.shape
    draws = z.shape[0]
    for u in numba.prange(n_users):
        x = np.empty(k)
        ranks = np.empty(k, dtype=np.int64)
        counts = np.zeros((k, k), dtype=np.int64)
        share = np.zeros(k)
        some = False
        for j in range(k):
            some = some or listed[u, j]
        for d in range(draws):
            for j in range(k):
                if not some:
                    x[j] = 0.0
                elif listed[u, j]:
                    x[j] = mean[u, j] + sd[u, j] * z[d, j]
                else:
                    x[j] = -np.inf
            top = 0
            for j in range(k):
                above = 0
                for i in range(k):
                    if x[i] > x[j]:
                        above += 1
                ranks[j] = above + 1
                if above == 0:
                    top += 1
            for j in range(k):
                counts[j, ranks[j] - 1] += 1
                if ranks[j] == 1:
                    share[j] += 1.0 / top
        for j in range(k):
            if not listed[u, j]:
                continue
            p_best[u, j] = share[j] / draws
            low = _quantile_of_histogram(counts[j], draws, tail)
            high = _quantile_of_histogram(counts[j], draws, 1.0 - tail)
            rank_lower[u, j] = math.floor(low + 1e-9)
            rank_upper[u, j] = math.ceil(high - 1e-9)


def gaussian_rank_odds(
    mean: FloatArray,
    sd: FloatArray,
    listed: BoolArray,
    z: FloatArray,
    confidence: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Each user's ``p_best`` and rank range among their listed models.

    Parameters
    ----------
    mean, sd : ndarray
        ``(U, k)`` each model's rating and its posterior sd (independent Gaussians).
    listed : ndarray of bool
        ``(U, k)`` the models each user's odds are among; the others get NaN.
    z : ndarray
        ``(R, k)`` standard normal draws shared by every user: draw ``d`` of user ``u``
        is ``mean[u] + sd[u] * z[d]``.
    confidence : float
        Coverage of the rank range, in (0, 1).

    Returns
    -------
    tuple of ndarray
        ``(p_best, rank_lower, rank_upper)``, each ``(U, k)`` floats, NaN where not
        listed: what :func:`ranking.odds.rank_odds` gives of the same draws, the
        unlisted models drawn at minus infinity (a user with none listed has all tied).
    """
    mean = np.ascontiguousarray(mean, dtype=np.float64)
    sd = np.ascontiguousarray(sd, dtype=np.float64)
    listed = np.ascontiguousarray(listed, dtype=np.bool_)
    z = np.ascontiguousarray(z, dtype=np.float64)
    if sd.shape != mean.shape or listed.shape != mean.shape or z.shape[1:] != mean.shape[1:]:
        raise ValueError(
            f"Arguments 'mean', 'sd', 'listed' must share one shape (U, k) and 'z' be (R, k), "
            f"not {mean.shape}, {sd.shape}, {listed.shape} and {z.shape}."
        )
    if z.shape[0] < 1:
        raise ValueError("Argument 'z' must hold at least one draw.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be between 0 and 1, not {confidence}.")
    p_best, rank_lower, rank_upper = (np.full(mean.shape, np.nan) for _ in range(3))
    _odds_loop(mean, sd, listed, z, 0.5 * (1.0 - confidence), p_best, rank_lower, rank_upper)
    return p_best, rank_lower, rank_upper
