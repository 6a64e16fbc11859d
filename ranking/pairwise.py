"""Plain operations on pairwise vote arrays: collapsing, counting, Elo-scale conversion."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ranking.types import BASE, CENTER, SCALE, PairwiseData

__all__ = [
    "ModelCounts",
    "collapse",
    "model_counts",
    "pair_share",
    "position_in_group",
    "to_elo_scale",
]

#: Natural-log strength units to Elo points.
ELO_PER_NAT = SCALE / math.log(BASE)


def to_elo_scale(theta: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Convert natural-log strengths to the Elo scale, ``0`` mapping to ``CENTER``."""
    return CENTER + ELO_PER_NAT * np.asarray(theta, dtype=np.float64)


def position_in_group(groups: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """0-based position of each row among its group's rows, in array order.

    Rows of a negative group (no group) get ``-1``. Used to step every group's votes
    together (online Elo) and to find each user's latest votes (held-out evaluation).
    """
    groups = np.asarray(groups, dtype=np.intp)
    position = np.full(groups.size, -1, dtype=np.intp)
    rows = np.flatnonzero(groups >= 0)
    order = np.argsort(groups[rows], kind="stable")
    sorted_groups = groups[rows][order]
    group_start = np.searchsorted(sorted_groups, sorted_groups)
    position[rows[order]] = np.arange(order.size) - group_start
    return position


#: Largest dense key space (3 k^2 cells) :func:`collapse` counts with ``bincount``.
_MAX_DENSE_KEYS = 10_000_000


def collapse(data: PairwiseData) -> PairwiseData:
    """Merge identical ``(model_a, model_b, outcome)`` rows into one row with their count.

    ``(a, b, y)`` and ``(b, a, 1 - y)`` are the same observation, so pairs are first put
    in canonical order (``a < b``, the outcome flipped where swapped); this also makes
    every fit invariant to the swap. The result holds at
    most ``3 * k * (k - 1) / 2`` rows for ``k`` models, whatever the number of votes.

    Parameters
    ----------
    data : PairwiseData
        Votes, weighted or not.

    Returns
    -------
    PairwiseData
        The same votes with unique rows; weights are summed. Rows of zero total weight
        are dropped.
    """
    a, b = data.matchups[:, 0], data.matchups[:, 1]
    k = max(data.n_models, 1)
    # outcome in {0, 0.5, 1} -> code in {0, 1, 2}, flipped (2 - code) where a > b; each
    # row becomes one integer key of its canonical (min, max, outcome) form.
    code = (data.outcomes * 2.0).astype(np.intp)
    if np.any(code != data.outcomes * 2.0):
        raise ValueError("Argument 'outcomes' must hold only 0, 0.5 and 1 to be collapsed.")
    swap = a > b
    code = np.where(swap, 2 - code, code)
    key = (np.minimum(a, b) * k + np.maximum(a, b)) * 3 + code
    if 3 * k * k <= _MAX_DENSE_KEYS:
        counts = np.bincount(key, weights=data.weights, minlength=3 * k * k)
        unique = np.flatnonzero(counts > 0)
        weights = counts[unique]
    else:
        unique, inverse = np.unique(key, return_inverse=True)
        weights = np.bincount(inverse, weights=data.weights, minlength=unique.size)
        keep = weights > 0
        unique, weights = unique[keep], weights[keep]
    pair, code = np.divmod(unique, 3)
    new_matchups = np.stack(np.divmod(pair, k), axis=1).astype(np.intp)
    return PairwiseData(data.models, new_matchups, code / 2.0, weights.astype(np.float64))


@dataclass(frozen=True)
class ModelCounts:
    """Battles, wins, losses and ties per model, in the order of ``PairwiseData.models``."""

    battles: npt.NDArray[np.int64]
    wins: npt.NDArray[np.int64]
    losses: npt.NDArray[np.int64]
    ties: npt.NDArray[np.int64]


def model_counts(data: PairwiseData) -> ModelCounts:
    """Count battles, wins, losses and ties per model from (weighted) votes."""
    k = data.n_models
    a, b = data.matchups[:, 0], data.matchups[:, 1]
    w, y = data.weights, data.outcomes

    def count(index: npt.NDArray[np.intp], mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        return np.rint(np.bincount(index, weights=w * mask, minlength=k)).astype(np.int64)

    tie = y == 0.5
    wins = count(a, y == 1.0) + count(b, y == 0.0)
    losses = count(a, y == 0.0) + count(b, y == 1.0)
    ties = count(a, tie) + count(b, tie)
    return ModelCounts(wins + losses + ties, wins, losses, ties)


def pair_share(data: PairwiseData) -> npt.NDArray[np.float64]:
    """``(k, k)`` share of the (weighted) votes on each ordered pair ``(model_a, model_b)``."""
    k = data.n_models
    index = data.matchups[:, 0] * k + data.matchups[:, 1]
    counts = np.bincount(index, weights=data.weights, minlength=k * k).astype(np.float64)
    total = counts.sum()
    return (counts / total if total > 0 else counts).reshape(k, k)
