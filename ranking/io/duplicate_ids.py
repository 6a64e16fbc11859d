"""Battle ids met before: one hash pass over all the files of an ingest; and the repeats
that carry another vote than the first, which say that a column is not a battle id."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["VOTE_COLUMNS", "differing_repeats", "repeated_ids"]

#: What a vote is, beside its id: two battles with one id and all of these equal are one.
VOTE_COLUMNS = ("model_a", "model_b", "winner", "user_id", "prompt", "tstamp")


_ROWS_HASHED = 1 << 16  # rows hashed at a time: bounds the per-word arrays (in cache)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(31)


def repeated_ids(ids: pd.Series, known: Set[str] = frozenset()) -> npt.NDArray[np.bool_]:
    """True where an id is in ``known`` or was met in an earlier row; missing ids never are.

    One hash pass. Ids all of one length (the usual case: hex digests, zero-padded
    numbers) are hashed to 64 bits from their bytes, a slice of rows at a time; sorted,
    the hashes show those met more than once, and only the ids of those go through
    pandas' integer hash table; ids of equal hashes are then compared as text, so that a
    collision of hashes cannot drop a battle. Other ids go through Arrow's string hash
    table. Either way ids are numbered in order of first appearance, so that an id was
    met before exactly where its number is not above every earlier one.
    """
    repeated = np.zeros(len(ids), dtype=bool)
    present = np.flatnonzero(ids.notna().to_numpy())
    if not present.size:
        return repeated
    values = pa.array(ids.array, type=pa.large_string())
    if not isinstance(values, pa.ChunkedArray):
        values = pa.chunked_array([values])
    if present.size < len(ids):
        values = pa.chunked_array([values.combine_chunks().take(pa.array(present))])
    later = _later_by_hash(values)
    if later is None:
        later = _later(pc.dictionary_encode(values.combine_chunks()).indices.to_numpy())
    repeated[present[later]] = True
    if known:
        seen = pc.is_in(values, value_set=pa.array(list(known), type=pa.large_string()))
        repeated[present] |= seen.to_numpy(zero_copy_only=False)
    return repeated


def _later(codes: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.intp]:
    """Positions of codes met before, for codes numbered in order of first appearance."""
    before = np.maximum.accumulate(np.concatenate([[-1], codes[:-1]]))
    return np.flatnonzero(codes <= before)


def _later_by_hash(values: pa.ChunkedArray) -> npt.NDArray[np.intp] | None:
    """Positions of strings met before; ``None`` unless all have one length (no nulls)."""
    hashes = _hashes(values)
    if hashes is None:
        return None
    ordered = np.sort(hashes)
    twice = ordered[1:][ordered[1:] == ordered[:-1]]  # hashes met more than once
    if not twice.size:
        return np.empty(0, dtype=np.intp)
    shared = np.flatnonzero(pd.Index(np.unique(twice)).get_indexer(hashes) >= 0)
    codes, _ = pd.factorize(hashes[shared])  # in order: numbered by first appearance
    later = _later(codes)
    first = np.empty(len(codes) and codes.max() + 1, dtype=np.intp)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    later, earliest = shared[later], shared[first[codes[later]]]
    same = pc.equal(values.take(pa.array(later)), values.take(pa.array(earliest)))
    return later if pc.all(same).as_py() is not False else None


def _hashes(values: pa.ChunkedArray) -> npt.NDArray[np.uint64] | None:
    """64-bit hashes of the bytes of strings all of one length; ``None`` otherwise."""
    hashes = np.empty(len(values), dtype=np.uint64)
    width, done = -1, 0
    for chunk in values.chunks:
        if not len(chunk):
            continue
        _, offsets_buffer, data_buffer = chunk.buffers()
        offsets = np.frombuffer(offsets_buffer, np.int64)[
            chunk.offset : chunk.offset + len(chunk) + 1
        ]
        width = int(offsets[1] - offsets[0]) if width < 0 else width
        if data_buffer is None or width == 0 or offsets[-1] - offsets[0] != width * len(chunk):
            return None
        if (np.diff(offsets) != width).any():
            return None
        data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]].reshape(-1, width)
        for start in range(0, len(data), _ROWS_HASHED):
            rows = data[start : start + _ROWS_HASHED]
            _hash(rows, hashes[done + start : done + start + len(rows)])
        done += len(data)
    return hashes


def _hash(rows: npt.NDArray[np.uint8], out: npt.NDArray[np.uint64]) -> None:
    """The hashes of ``rows`` of bytes, all of one width, into ``out``."""
    if rows.shape[1] % 8:
        padded = np.zeros((len(rows), -(-rows.shape[1] // 8) * 8), dtype=np.uint8)
        padded[:, : rows.shape[1]] = rows
        rows = padded
    out[:] = 0
    with np.errstate(over="ignore"):
        for word in np.ascontiguousarray(rows).view(np.uint64).T:
            out ^= word
            out *= _MIX
            out ^= out >> _SHIFT


def differing_repeats(
    battles: pd.DataFrame, repeated: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    """True where a repeated id carries another vote than the first row with that id.

    Parameters
    ----------
    battles : pandas.DataFrame
        A battle frame (:func:`ranking.io.battle_frame.to_battle_frame`).
    repeated : numpy.ndarray of bool
        The rows whose ``battle_id`` was met in an earlier row of ``battles``
        (:func:`repeated_ids` without ``known``).

    Returns
    -------
    numpy.ndarray of bool
        True where the row differs from the first row of its id in any of
        :data:`VOTE_COLUMNS` (missing values equal each other): the id names something
        else than one battle (a question, a pair of models). Exact repeats are False.
    """
    differ = np.zeros(len(battles), dtype=bool)
    later = np.flatnonzero(repeated)
    if not later.size:
        return differ
    ids = battles["battle_id"]
    rows = np.flatnonzero(ids.isin(ids.iloc[later].unique()).to_numpy())
    codes, _ = pd.factorize(ids.iloc[rows])  # numbered in order of first appearance
    first = np.empty(codes.max() + 1, dtype=np.intp)
    first[codes[::-1]] = rows[::-1]  # the earliest row of each id
    earliest = first[codes]
    changed = np.zeros(len(rows), dtype=bool)
    for name in VOTE_COLUMNS:
        if name in battles.columns:
            values = _comparable(battles[name])
            a, b = values[rows], values[earliest]
            changed |= ~((a == b) | (pd.isna(a) & pd.isna(b)))
    differ[rows[changed]] = True
    return differ


def _comparable(column: pd.Series) -> npt.NDArray[Any]:
    """A column's values as an array that ``==`` compares row by row."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy()  # (-1 where missing: equal to each other)
    return column.astype(object).where(column.notna(), None).to_numpy()
