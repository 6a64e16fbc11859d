"""A user profile's numbers, from the rows of their queries.

:func:`battle_queries` reads a battle frame's users and prompts; :func:`profile_values`
adds each user's rows up (:func:`user_sums`) and smooths them toward the population,
the columns :mod:`features.profile` describes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["battle_queries", "profile_values", "user_sums"]


def battle_queries(
    frame: pd.DataFrame,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[Any], pd.Series]:
    """User codes, user names and prompts of a battle frame, validated.

    Parameters
    ----------
    frame : DataFrame
        Battles with ``user_id`` (never missing) and ``prompt``.

    Returns
    -------
    codes : ndarray of int
        Each row's user, a position in ``names``.
    names : ndarray of object
        The users, sorted (as strings).
    prompts : Series
        Each row's prompt (missing for a vote without one).
    """
    for column in ("user_id", "prompt"):
        if column not in frame.columns:
            raise ValueError(
                f"battles need a {column!r} column for user profiles; "
                f"the columns are {', '.join(map(str, frame.columns))}"
            )
    users = frame["user_id"]
    if users.isna().any():
        row = int(np.flatnonzero(users.isna().to_numpy())[0])
        raise ValueError(f"row {row}: field 'user_id' is missing; profiles need every user id")
    codes, names = pd.factorize(users.astype(str), sort=True)
    return codes.astype(np.intp), np.asarray(names, dtype=object), frame["prompt"]


def user_sums(
    owner: npt.NDArray[np.intp], n_users: int
) -> Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]:
    """Sums of rows by user: ``rows -> (n_users, width)``, each user's rows added in
    row order (the same floats as ``numpy.add.at``, in one sparse product).

    Parameters
    ----------
    owner : ndarray of int
        The user of each row.
    n_users : int
        Number of users.
    """
    from scipy import sparse

    ones = np.ones(owner.size)
    indicator = sparse.csr_matrix((ones, (owner, np.arange(owner.size))), (n_users, owner.size))

    def by_user(rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        if rows.size == 0:
            return np.zeros((n_users, rows.shape[1]))
        return np.asarray(indicator @ rows, dtype=np.float64)

    return by_user


def profile_values(
    codes: npt.NDArray[np.intp],
    n_users: int,
    present: npt.NDArray[np.bool_],
    topics: npt.NDArray[np.intp],
    style: npt.NDArray[np.float64],
    *,
    smoothing: float,
    topic_share: npt.NDArray[np.float64],
    style_mean: npt.NDArray[np.float64],
    relative: npt.NDArray[np.float64] | None = None,
    query: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None,
) -> npt.NDArray[np.float64]:
    """The ``(n_users, n_features)`` profiles of the users of some battle rows.

    Parameters
    ----------
    codes : ndarray of int
        The user of each row (each a vote).
    n_users : int
        Number of users.
    present : ndarray of bool
        The rows with a prompt (each a query).
    topics, style : ndarray
        The topic and the style features of each query (the rows of ``present``).
    smoothing : float
        Pseudo-queries, distributed like the population's, added to every user.
    topic_share, style_mean : ndarray
        The population's share of each topic and mean of each style feature.
    relative : ndarray, optional
        Each query's style relative to its topic (``style_rel:``); None for profilers
        fitted before it, whose profiles lack those columns.
    query : (ndarray, ndarray), optional
        Each query's embedding components, and their population mean (``query_pc:``).

    Returns
    -------
    ndarray
        Topic shares, style means and standard deviations, relative style, query
        components, then ``log(1 + votes)``, one row per user.
    """
    s = float(smoothing)
    votes = np.bincount(codes, minlength=n_users).astype(float)
    owner = codes[present]
    by_user = user_sums(owner, n_users)
    n_queries = np.bincount(owner, minlength=n_users).astype(float)[:, None]
    n_topics = topic_share.size
    counts = np.bincount(owner * n_topics + topics, minlength=n_users * n_topics)
    counts = counts.reshape(n_users, n_topics).astype(float)
    sums = by_user(style)
    squares = by_user(style**2)
    safe = np.maximum(n_queries, 1.0)
    raw_mean = sums / safe
    sd = np.sqrt(np.maximum(squares / safe - raw_mean**2, 0.0))
    denominator = np.maximum(n_queries + s, 1e-12)
    shares = (counts + s * topic_share) / denominator
    means = (sums + s * style_mean) / denominator
    empty = n_queries[:, 0] == 0  # no prompt and no smoothing: the population's values
    shares[empty], means[empty] = topic_share, style_mean
    blocks = [shares, means, sd]
    if relative is not None:
        blocks.append(by_user(relative) / denominator)  # smoothed toward 0, the population's
    if query is not None:
        rows, query_mean = query
        summed = by_user(rows)
        query_means = (summed + s * query_mean) / denominator
        query_means[empty] = query_mean
        blocks.append(query_means)
    return np.hstack([*blocks, np.log1p(votes)[:, None]])
