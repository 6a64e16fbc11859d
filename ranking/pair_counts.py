"""Many groups' votes collapsed into their sufficient statistics: counts per model pair.

A group (a user, a bootstrap replicate, a fold) is one row per unordered pair of the
models it voted on, with the total weight of those votes and the weight the first model
won; the compiled Newton loops of :mod:`ranking.bt_kernel` pass over these rows, not over
the votes. Indices are checked here, once: the loops do not check bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from ranking.types import FloatArray, IntArray

__all__ = ["PairCounts", "Pairs", "collect_pairs"]

_Int32Array = npt.NDArray[np.int32]
#: What the loops take for a :class:`PairCounts`: ``(row_offsets, model_offsets, models,
#: first, second, wins, total)``, offsets absolute, so a range of groups is its offsets cut.
Pairs = tuple[IntArray, IntArray, IntArray, _Int32Array, _Int32Array, FloatArray, FloatArray]


@dataclass(frozen=True)
class PairCounts:
    """The votes of ``n_groups`` groups, one row per group and unordered pair of models.

    Group ``g`` voted on models ``models[model_offsets[g]:model_offsets[g + 1]]`` (its
    local indices ``0, 1, ...`` in that order), and its rows are
    ``row_offsets[g]:row_offsets[g + 1]``: local indices ``first < second`` (equal only
    for a model voted against itself), ``total`` the summed weight of those votes and
    ``wins`` the weight the first model won (a tie half).
    """

    n_models: int
    n_groups: int
    row_offsets: IntArray
    model_offsets: IntArray
    models: IntArray
    first: _Int32Array
    second: _Int32Array
    wins: FloatArray
    total: FloatArray

    def pairs(self, start: int = 0, stop: int | None = None) -> Pairs:
        """The columns the loops take, for groups ``start`` to ``stop - 1``."""
        stop = self.n_groups if stop is None else stop
        return (
            self.row_offsets[start : stop + 1],
            self.model_offsets[start : stop + 1],
            self.models,
            self.first,
            self.second,
            self.wins,
            self.total,
        )


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _collect(
    n_models: int,
    a: IntArray,
    b: IntArray,
    y: FloatArray,
    w: FloatArray,
    groups: IntArray,
    n_groups: int,
) -> tuple[
    IntArray, IntArray, IntArray, _Int32Array, _Int32Array, FloatArray, FloatArray
]:  # pragma: no cover - compiled
    n = a.shape[0]
    start = np.zeros(n_groups + 1, dtype=np.intp)
    for i in range(n):
        start[groups[i] + 1] += 1
    for g in range(n_groups):
        start[g + 1] += start[g]
    fill = start[:-1].copy()
    sa, sb = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
    sy, sw = np.empty(n), np.empty(n)
    for i in range(n):  # a counting sort by group, row order kept within each
        j = fill[groups[i]]
        fill[groups[i]] = j + 1
        sa[j], sb[j], sy[j], sw[j] = a[i], b[i], y[i], w[i]
    local = np.full(n_models, -1, dtype=np.intp)
    slot = np.full(n_models * n_models, -1, dtype=np.intp)
    row_offsets = np.zeros(n_groups + 1, dtype=np.intp)
    model_offsets = np.zeros(n_groups + 1, dtype=np.intp)
    models = np.empty(min(2 * n, n_groups * n_models), dtype=np.intp)
    first = np.empty(n, dtype=np.int32)
    second = np.empty(n, dtype=np.int32)
    wins = np.empty(n)
    total = np.empty(n)
    r, m = 0, 0
    for g in range(n_groups):
        r0, m0 = r, m
        for i in range(start[g], start[g + 1]):
            if sw[i] == 0.0:
                continue  # a row of weight zero adds nothing to anything
            la, lb = local[sa[i]], local[sb[i]]
            if la < 0:
                la = m - m0
                local[sa[i]] = la
                models[m] = sa[i]
                m += 1
            if lb < 0:
                lb = m - m0
                local[sb[i]] = lb
                models[m] = sb[i]
                m += 1
            if la < lb:
                p, q, won = la, lb, sw[i] * sy[i]
            else:
                p, q, won = lb, la, sw[i] * (1.0 - sy[i])
            key = p * n_models + q
            s = slot[key]
            if s < 0:
                s = r
                slot[key] = r
                first[r], second[r] = p, q
                wins[r], total[r] = 0.0, 0.0
                r += 1
            wins[s] += won
            total[s] += sw[i]
        for t in range(r0, r):
            slot[first[t] * n_models + second[t]] = -1
        for t in range(m0, m):
            local[models[t]] = -1
        row_offsets[g + 1], model_offsets[g + 1] = r, m
    return row_offsets, model_offsets, models[:m], first[:r], second[:r], wins[:r], total[:r]


def collect_pairs(
    n_models: int,
    matchups: IntArray,
    outcomes: FloatArray,
    weights: FloatArray,
    groups: IntArray,
    n_groups: int,
) -> PairCounts:
    """Collapse every group's votes into one row per group and unordered pair of models.

    The arguments are those of :func:`ranking.bt.fit_bt_grouped`; weights must not be
    negative. Rows of weight zero are dropped.
    """
    pairs = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    a, b = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
    y = np.ascontiguousarray(outcomes, dtype=np.float64)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    g = np.ascontiguousarray(groups, dtype=np.intp)
    if not a.shape[0] == y.shape[0] == w.shape[0] == g.shape[0]:
        raise ValueError(
            f"Arguments 'matchups', 'outcomes', 'weights' and 'groups' must have the same "
            f"length, not {a.shape[0]}, {y.shape[0]}, {w.shape[0]} and {g.shape[0]}."
        )
    _check_indices("matchups", a, n_models)
    _check_indices("matchups", b, n_models)
    _check_indices("groups", g, n_groups)
    arrays = _collect(int(n_models), a, b, y, w, g, int(n_groups))
    return PairCounts(int(n_models), int(n_groups), *arrays)


def _check_indices(name: str, values: IntArray, bound: int) -> None:
    """The loops do not check bounds: an index out of range is refused here."""
    if values.size and (values.min() < 0 or values.max() >= bound):
        bad = values[(values < 0) | (values >= bound)][0]
        raise ValueError(f"Argument '{name}' must hold indices in [0, {bound}), not {bad}.")
