"""Standing: which votes come from voters who have been around long enough to count.

Made-up voters cost an attacker nothing, so a cap per voter (:mod:`ranking.integrity.daily_cap`)
and tests per voter (:mod:`ranking.integrity.voters`) price nothing on their own: a thousand
fresh names vote a thousand times as much. What a made-up voter cannot make up is
*time*, measured by the server. :func:`established_mask` keeps a vote only when its voter
had already voted on ``min_days`` earlier calendar days (UTC) of server time when it
arrived. A voter's first days of votes never count (not later either: counting them once
the voter is established would let a burst wait for its accounts to age), so a burst of
fresh names moves nothing, and an attacker must keep each name voting over several days
before any of its votes count.

Votes without a receive time come from a log the operator trusts (the fit's own log) and
always count, as does every vote of a voter who has one there.
"""

from __future__ import annotations

import numpy as np

from ranking.types import BoolArray, FloatArray, IntArray

__all__ = ["established_mask", "newcomer_days"]

_DAY_S = 86_400.0


def newcomer_days(users: IntArray, received: FloatArray) -> IntArray:
    """How many distinct earlier UTC days (of ``received``) each vote's voter voted on.

    Parameters
    ----------
    users : array of int
        ``(n,)`` user code of each vote; negative for a vote without a user.
    received : array of float
        ``(n,)`` unix time at which the server received each vote; NaN where unknown.

    Returns
    -------
    ndarray of int
        ``(n,)`` for a vote with a user and a receive time, the number of distinct UTC
        days before the vote's own on which the same user had a vote with a receive
        time; -1 elsewhere.
    """
    users = np.asarray(users, dtype=np.intp)
    received = np.asarray(received, dtype=np.float64)
    if users.shape != received.shape or users.ndim != 1:
        raise ValueError("Arguments 'users' and 'received' must have one entry a vote.")
    days = np.full(users.size, -1, dtype=np.intp)
    rows = np.flatnonzero((users >= 0) & np.isfinite(received))
    if rows.size == 0:
        return days
    day = np.floor(received[rows] / _DAY_S)
    u = users[rows]
    order = np.lexsort((day, u))
    u, d = u[order], day[order]
    new_user = np.ones(order.size, dtype=bool)
    new_user[1:] = u[1:] != u[:-1]
    new_day = new_user.copy()
    new_day[1:] |= d[1:] != d[:-1]
    distinct = np.cumsum(new_day) - 1  # index of the (user, day) pair, over everyone
    first = np.maximum.accumulate(np.where(new_user, distinct, 0))
    days[rows[order]] = distinct - first
    return days


def established_mask(users: IntArray, received: FloatArray, min_days: int) -> BoolArray:
    """Which votes come from voters established when the vote arrived.

    Parameters
    ----------
    users : array of int
        ``(n,)`` user code of each vote; negative for a vote without a user.
    received : array of float
        ``(n,)`` unix time at which the server received each vote; NaN for a vote of a
        trusted log (the operator's own, read from a file).
    min_days : int
        The distinct earlier UTC days a voter must have voted on (by receive time) for a
        vote to count; 0 counts every vote.

    Returns
    -------
    ndarray of bool
        ``(n,)`` true for the votes that count: every vote of a trusted log, every vote of
        a voter with a vote there, and a received vote whose voter had voted on at least
        ``min_days`` earlier days. A received vote without a user never counts (while
        ``min_days > 0``): nobody can tell who sent it.
    """
    if isinstance(min_days, bool) or not isinstance(min_days, int | np.integer) or min_days < 0:
        raise ValueError(f"Argument 'min_days' must be an integer >= 0, not {min_days!r}.")
    users = np.asarray(users, dtype=np.intp)
    received = np.asarray(received, dtype=np.float64)
    earlier = newcomer_days(users, received)
    if min_days == 0:
        return np.ones(users.size, dtype=bool)
    trusted = ~np.isfinite(received)
    keep = trusted | (earlier >= min_days)
    known = users >= 0
    if (trusted & known).any():
        vouched = np.zeros(int(users.max()) + 1, dtype=bool)
        vouched[users[trusted & known]] = True
        keep[known] |= vouched[users[known]]
    return keep
