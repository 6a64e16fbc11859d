"""A daily cap on each user's votes: at most ``cap`` a user and UTC calendar day.

The earliest votes of the day count, like FastChat's ``limit_user_votes``; votes without a
user or a timestamp are kept. One of the defences of :mod:`ranking.integrity`.
"""

from __future__ import annotations

import numpy as np

from ranking.types import BoolArray, FloatArray, IntArray

__all__ = ["daily_cap_mask"]

_DAY_S = 86_400.0


def daily_cap_mask(users: IntArray, tstamps: FloatArray, cap: int) -> BoolArray:
    """Keep at most ``cap`` votes per user and UTC calendar day, the earliest ones.

    Parameters
    ----------
    users : array of int
        ``(n,)`` user code of each vote; negative for a vote without a user.
    tstamps : array of float
        ``(n,)`` unix time of each vote; NaN where unknown.
    cap : int
        Most votes of one user counted in one day (at least 1).

    Returns
    -------
    ndarray of bool
        ``(n,)`` true for the votes kept. Votes without a user or a timestamp are kept;
        among votes at the same instant, the earlier row wins.
    """
    if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 1:
        raise ValueError(f"Argument 'cap' must be an integer >= 1, not {cap!r}.")
    users = np.asarray(users, dtype=np.intp)
    tstamps = np.asarray(tstamps, dtype=np.float64)
    if users.shape != tstamps.shape or users.ndim != 1:
        raise ValueError("Arguments 'users' and 'tstamps' must have one entry a vote.")
    keep = np.ones(users.size, dtype=bool)
    rows = np.flatnonzero((users >= 0) & np.isfinite(tstamps))
    if rows.size == 0:
        return keep
    day = np.floor(tstamps[rows] / _DAY_S)
    order = np.lexsort((rows, tstamps[rows], day, users[rows]))
    u, d = users[rows][order], day[order]
    start = np.ones(order.size, dtype=bool)
    start[1:] = (u[1:] != u[:-1]) | (d[1:] != d[:-1])
    group_start = np.maximum.accumulate(np.where(start, np.arange(order.size), 0))
    rank = np.arange(order.size) - group_start
    keep[rows[order[rank >= cap]]] = False
    return keep
