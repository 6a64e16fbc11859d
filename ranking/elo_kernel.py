"""Compiled online Elo loops: the votes of many groups, and bootstrap replicates.

Online Elo is sequential by nature, so these are plain loops compiled with numba, one
scalar update a vote. :func:`online_elo_rows` runs the votes of many groups in the order
they appear (groups are independent, so this equals running every group in step, with
no sort). :func:`bootstrap_elo_rows` runs bootstrap replicates one after another, each
drawing its votes from NumPy's generator in chunks as it goes, so no ``(replicates, n)``
array of drawn rows is ever made, and reading each vote drawn as a 2-byte code into a
small table of distinct votes, so that the random reads stay in cache.

The update is FastChat's: ``delta = k * (s - 1 / (1 + BASE ** ((r_b - r_a) / SCALE)))``,
added to ``r_a`` and taken from ``r_b``. The power is computed as
``exp((r_b - r_a) * log(BASE) / SCALE)``, two to three times cheaper than ``pow`` here and
equal to it to the last bit or two, so ratings agree with :func:`ranking.elo.online_elo`'s
to about ``1e-13`` Elo. No fast-math. The first call in a fresh environment compiles
(under a second); the machine code is then cached beside this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
import numpy.typing as npt

from ranking.types import BASE, SCALE

__all__ = ["bootstrap_elo_rows", "online_elo_rows"]

#: A vote's entry in the table of distinct votes.
_Codes = npt.NDArray[np.uint16] | npt.NDArray[np.int32]
#: ``log(BASE) / SCALE``: ``BASE ** (d / SCALE) == exp(d * _LOG_BASE_PER_SCALE)``.
_LOG_BASE_PER_SCALE = math.log(BASE) / SCALE
#: Rows drawn at once within a replicate (512 kB of int64 indices, in cache).
_DRAW_CHUNK = 1 << 16
#: Largest table of distinct (model a, model b, outcome) votes the bootstrap indexes.
_MAX_TABLE = 1 << 24


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _grouped_loop(
    a: npt.NDArray[np.intp],
    b: npt.NDArray[np.intp],
    y: npt.NDArray[np.float64],
    groups: npt.NDArray[np.intp],
    ratings: npt.NDArray[np.float64],
    k: float,
) -> None:  # pragma: no cover - compiled
    for i in range(a.shape[0]):
        g, ia, ib = groups[i], a[i], b[i]
        ra, rb = ratings[g, ia], ratings[g, ib]
        delta = k * (y[i] - 1.0 / (1.0 + math.exp((rb - ra) * _LOG_BASE_PER_SCALE)))
        ratings[g, ia] = ra + delta
        ratings[g, ib] = rb - delta


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _drawn_loop(
    rows: npt.NDArray[np.int64],
    codes: _Codes,
    ta: npt.NDArray[np.intp],
    tb: npt.NDArray[np.intp],
    ty: npt.NDArray[np.float64],
    rating: npt.NDArray[np.float64],
    k: float,
    drawn: npt.NDArray[np.int32],
) -> None:  # pragma: no cover - compiled
    m = rows.shape[0]
    # The random reads first, in a loop of their own: there they overlap each other,
    # while inside the sequential update below each would wait on the last.
    for t in range(m):
        drawn[t] = codes[rows[t]]
    for t in range(m):
        c = drawn[t]
        ia, ib = ta[c], tb[c]
        ra, rb = rating[ia], rating[ib]
        delta = k * (ty[c] - 1.0 / (1.0 + math.exp((rb - ra) * _LOG_BASE_PER_SCALE)))
        rating[ia] = ra + delta
        rating[ib] = rb - delta


def _columns(
    matchups: npt.ArrayLike, outcomes: npt.ArrayLike
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    pairs = np.asarray(matchups, dtype=np.intp).reshape(-1, 2)
    a = np.ascontiguousarray(pairs[:, 0])
    b = np.ascontiguousarray(pairs[:, 1])
    return a, b, np.ascontiguousarray(outcomes, dtype=np.float64)


def _vote_table(
    n_models: int,
    a: npt.NDArray[np.intp],
    b: npt.NDArray[np.intp],
    y: npt.NDArray[np.float64],
) -> tuple[_Codes, npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Each vote as a small code into a table of ``(a, b, outcome)``.

    A bootstrap reads votes at random, so what it reads should fit in cache: with
    outcomes 1, 0.5 and 0 a vote is ``(a * n_models + b) * 3 + 2 * outcome`` into a
    table of ``3 * n_models**2`` entries, 2 bytes a vote up to 147 models, else 4;
    otherwise a vote is its own row.
    """
    twice = 2.0 * y
    size = 3 * n_models * n_models
    if size <= _MAX_TABLE and np.array_equal(twice, np.clip(np.rint(twice), 0.0, 2.0)):
        key = (a * n_models + b) * 3 + twice.astype(np.intp)
        codes: _Codes = key.astype(np.uint16) if size <= 1 << 16 else key.astype(np.int32)
        entry = np.arange(size)
        return codes, entry // (3 * n_models), entry // 3 % n_models, (entry % 3) / 2.0
    if a.shape[0] >= np.iinfo(np.int32).max:
        raise ValueError(f"Argument 'matchups' must hold under 2**31 votes, not {a.shape[0]}.")
    return np.arange(a.shape[0], dtype=np.int32), a, b, y


def _check_indices(name: str, values: npt.NDArray[np.intp], bound: int) -> None:
    """The loops do not check bounds: an index out of range is refused here."""
    if values.size and (values.min() < 0 or values.max() >= bound):
        bad = values[(values < 0) | (values >= bound)][0]
        raise ValueError(f"Argument '{name}' must hold indices in [0, {bound}), not {bad}.")


def online_elo_rows(
    matchups: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    groups: npt.ArrayLike,
    ratings: npt.NDArray[np.float64],
    *,
    k: float,
) -> None:
    """Run online Elo over votes in array order, each vote moving its group's ratings.

    Parameters
    ----------
    matchups : array_like
        ``(n, 2)`` model indices.
    outcomes : array_like
        ``(n,)`` outcome for the first model: 1, 0.5 (tie) or 0.
    groups : array_like
        ``(n,)`` row of ``ratings`` each vote moves.
    ratings : ndarray
        ``(n_groups, n_models)`` float64 ratings, updated in place.
    k : float
        The K-factor.
    """
    a, b, y = _columns(matchups, outcomes)
    g = np.ascontiguousarray(groups, dtype=np.intp)
    if not a.shape[0] == y.shape[0] == g.shape[0]:
        raise ValueError(
            f"Arguments 'matchups', 'outcomes' and 'groups' must have the same length, "
            f"not {a.shape[0]}, {y.shape[0]} and {g.shape[0]}."
        )
    _check_indices("matchups", a, ratings.shape[1])
    _check_indices("matchups", b, ratings.shape[1])
    _check_indices("groups", g, ratings.shape[0])
    _grouped_loop(a, b, y, g, ratings, float(k))


def bootstrap_elo_rows(
    matchups: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    ratings: npt.NDArray[np.float64],
    rng: np.random.Generator,
    *,
    k: float,
    advance: Callable[[int], object] | None = None,
) -> None:
    """Run online Elo over bootstrap replicates of the votes, drawn as they go.

    Replicate ``r`` (row ``r`` of ``ratings``) runs over ``n`` votes drawn with
    replacement, in the order drawn. The draws are those of
    ``rng.integers(0, n, size=(replicates, n))``, ``[r, i]`` the ``i``-th vote of
    replicate ``r``, taken in chunks of that array's rows: below ``2**32`` NumPy draws
    each bounded integer from its own 32-bit outputs (Lemire's method), with nothing
    carried between values but the bit generator's state, so chunks draw the same values
    and leave ``rng`` in the same state.

    Parameters
    ----------
    matchups : array_like
        ``(n, 2)`` model indices of the votes resampled; ``n`` at least 1.
    outcomes : array_like
        ``(n,)`` outcome for the first model.
    ratings : ndarray
        ``(replicates, n_models)`` float64 starting ratings, one row a replicate,
        updated in place.
    rng : numpy.random.Generator
        Source of the draws.
    k : float
        The K-factor.
    advance : callable, optional
        Told ``1`` after each replicate.
    """
    a, b, y = _columns(matchups, outcomes)
    n = a.shape[0]
    if n < 1:
        raise ValueError("Argument 'matchups' must hold at least one vote, not 0.")
    if y.shape[0] != n:
        raise ValueError(
            f"Arguments 'matchups' and 'outcomes' must have the same length, not {n} and "
            f"{y.shape[0]}."
        )
    _check_indices("matchups", a, ratings.shape[1])
    _check_indices("matchups", b, ratings.shape[1])
    codes, ta, tb, ty = _vote_table(ratings.shape[1], a, b, y)
    drawn = np.empty(min(_DRAW_CHUNK, n), dtype=np.int32)
    for rating in ratings:
        for start in range(0, n, _DRAW_CHUNK):
            rows = rng.integers(0, n, size=min(_DRAW_CHUNK, n - start))
            _drawn_loop(rows, codes, ta, tb, ty, rating, float(k), drawn)
        if advance is not None:
            advance(1)
