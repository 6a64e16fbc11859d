"""Online Elo and its bootstrap as NumPy did them before issue 18: the compiled kernels' reference.

All groups (users, or bootstrap rounds) step together, vote by vote of each group, with
fancy indexing. ``tests/ranking/test_elo_kernel.py`` checks :mod:`ranking.elo` and the
Elo bootstrap against it; benchmark L (:mod:`bench.ranking.elo_bootstrap`) times them
against it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ranking.elo import INITIAL, K_FACTOR
from ranking.pairwise import position_in_group
from ranking.types import BASE, SCALE

__all__ = ["numpy_bootstrap_elo_batch", "numpy_online_elo_grouped"]


def numpy_online_elo_grouped(
    n_models: int,
    matchups: npt.NDArray[np.intp],
    outcomes: npt.NDArray[np.float64],
    groups: npt.NDArray[np.intp],
    n_groups: int,
    *,
    k: float = K_FACTOR,
    initial: float | npt.ArrayLike = INITIAL,
) -> npt.NDArray[np.float64]:
    """:func:`ranking.elo.online_elo_grouped` before issue 18: all groups in step."""
    groups = np.asarray(groups, dtype=np.intp)
    ratings = np.empty((n_groups, n_models))
    ratings[:] = np.asarray(initial, dtype=np.float64)
    if groups.size == 0:
        return ratings
    position = position_in_group(groups)
    by_step = np.argsort(position, kind="stable")
    step_bounds = np.searchsorted(position[by_step], np.arange(position.max() + 2))
    g_all, a_all, b_all = groups[by_step], matchups[by_step, 0], matchups[by_step, 1]
    y_all = np.asarray(outcomes, dtype=np.float64)[by_step]
    flat = ratings.ravel()
    for lo, hi in zip(step_bounds[:-1], step_bounds[1:], strict=True):
        ia = g_all[lo:hi] * n_models + a_all[lo:hi]
        ib = g_all[lo:hi] * n_models + b_all[lo:hi]
        ra, rb = flat[ia], flat[ib]
        delta = k * (y_all[lo:hi] - 1.0 / (1.0 + np.power(BASE, (rb - ra) / SCALE)))
        flat[ia] = ra + delta
        flat[ib] = rb - delta
    return ratings


def numpy_bootstrap_elo_batch(
    n_models: int,
    matchups: npt.NDArray[np.intp],
    outcomes: npt.NDArray[np.float64],
    size: int,
    rng: np.random.Generator,
    *,
    k: float = K_FACTOR,
) -> npt.NDArray[np.float64]:
    """:func:`ranking.intervals.elo_bootstrap.bootstrap_elo_batch` before issue 18: rows
    drawn at once."""
    n = len(outcomes)
    rows = rng.integers(0, n, size=(size, n)).ravel()
    groups = np.repeat(np.arange(size), n)
    return numpy_online_elo_grouped(n_models, matchups[rows], outcomes[rows], groups, size, k=k)
