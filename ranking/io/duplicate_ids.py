"""Battle ids met before: one hash pass over all the files of an ingest.

The columnar reader hashes each block's ids as it keeps them (:func:`id_hashes`), while
the next block is parsed, and sorts a file's hashes while it makes the file's frame, so
that the pass at the end has little left to do.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["IdHashes", "id_hashes", "joined_hashes", "repeated_ids"]


_ROWS_HASHED = 1 << 16  # rows hashed at a time: bounds the per-word arrays (in cache)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(31)


@dataclass(frozen=True)
class IdHashes:
    """The 64-bit hashes of ids, none missing, all ``width`` bytes long; ``ordered``, the
    same sorted, where they were sorted already."""

    hashes: npt.NDArray[np.uint64]
    width: int
    ordered: npt.NDArray[np.uint64] | None = None


def id_hashes(values: pa.ChunkedArray) -> IdHashes | None:
    """The hashes of a block of ids as :func:`repeated_ids` makes them, for it to be given.

    Parameters
    ----------
    values : pyarrow.ChunkedArray
        Ids as Arrow strings or large strings.

    Returns
    -------
    IdHashes or None
        ``None`` unless the ids are text, none missing, all of one length in bytes.
    """
    text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    return _hashes(values) if text and not values.null_count else None


def joined_hashes(parts: Sequence[IdHashes | None]) -> IdHashes | None:
    """The hashes of blocks of ids in turn, as of one column; ``None`` unless every block
    was hashed and their ids are all of one length (empty blocks aside).

    Parameters
    ----------
    parts : sequence of IdHashes or None
        Each block's hashes (:func:`id_hashes`), in order.

    Returns
    -------
    IdHashes or None
    """
    if not parts or any(p is None for p in parts):
        return None
    hashed = [p for p in parts if p is not None and len(p.hashes)]
    if len({p.width for p in hashed}) > 1:
        return None
    if not hashed:
        return IdHashes(np.empty(0, dtype=np.uint64), 0)
    if len(hashed) == 1:
        return hashed[0]  # (sorted, if it was)
    return IdHashes(np.concatenate([p.hashes for p in hashed]), hashed[0].width)


def repeated_ids(
    ids: pd.Series,
    known: Set[str] = frozenset(),
    hashed: IdHashes | None = None,
) -> npt.NDArray[np.bool_]:
    """True where an id is in ``known`` or was met in an earlier row; missing ids never are.

    One hash pass. Ids all of one length (the usual case: hex digests, zero-padded
    numbers) are hashed to 64 bits from their bytes, a slice of rows at a time (or were,
    as they were read: ``hashed``); sorted, the hashes show those met more than once, and
    only the ids of those go through pandas' integer hash table; ids of equal hashes are
    then compared as text, so that a collision of hashes cannot drop a battle. Other ids
    go through Arrow's string hash table. Either way ids are numbered in order of first
    appearance, so that an id was met before exactly where its number is not above every
    earlier one.

    Parameters
    ----------
    ids : pandas.Series
        The ids, as text; missing ones are never repeated.
    known : set of str, optional
        Ids met elsewhere before.
    hashed : IdHashes, optional
        The hashes of all of ``ids`` as :func:`joined_hashes` joins them, when none is
        missing (ignored otherwise): made here when not given.

    Returns
    -------
    numpy.ndarray of bool
        One a row of ``ids``.
    """
    valid = ids.notna().to_numpy()
    if valid.all():  # the usual case: no positions of the ids present to make
        fits = hashed is not None and len(hashed.hashes) == len(ids)
        return _repeated(ids, known, hashed if fits else None)
    repeated = np.zeros(len(ids), dtype=bool)
    present = np.flatnonzero(valid)
    if present.size:  # (hashed ids are never missing: the hashes are not those)
        repeated[present] = _repeated(ids.iloc[present], known, None)
    return repeated


def _repeated(ids: pd.Series, known: Set[str], hashed: IdHashes | None) -> npt.NDArray[np.bool_]:
    """:func:`repeated_ids` of ids none missing, ``hashed`` theirs where given."""
    values = pa.array(ids.array, type=pa.large_string())
    if not isinstance(values, pa.ChunkedArray):
        values = pa.chunked_array([values])
    later = _later_by_hash(values, hashed)
    if later is None:
        later = _later(pc.dictionary_encode(values.combine_chunks()).indices.to_numpy())
    repeated = np.zeros(len(ids), dtype=bool)
    repeated[later] = True
    if known:
        seen = pc.is_in(values, value_set=pa.array(list(known), type=pa.large_string()))
        repeated |= seen.to_numpy(zero_copy_only=False)
    return repeated


def _later(codes: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.intp]:
    """Positions of codes met before, for codes numbered in order of first appearance."""
    before = np.maximum.accumulate(np.concatenate([[-1], codes[:-1]]))
    return np.flatnonzero(codes <= before)


def _later_by_hash(
    values: pa.ChunkedArray, hashed: IdHashes | None = None
) -> npt.NDArray[np.intp] | None:
    """Positions of strings met before; ``None`` unless all have one length (no nulls).

    ``hashed``, where given, are those of ``values`` (else they are made here).
    """
    if hashed is None:
        hashed = _hashes(values)
        if hashed is None:
            return None
    hashes = hashed.hashes
    ordered = np.sort(hashes) if hashed.ordered is None else hashed.ordered
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


def _hashes(values: pa.ChunkedArray) -> IdHashes | None:
    """64-bit hashes of the bytes of strings all of one length; ``None`` otherwise."""
    hashes = np.empty(len(values), dtype=np.uint64)
    width, done = -1, 0
    for chunk in values.chunks:
        if not len(chunk):
            continue
        _, offsets_buffer, data_buffer = chunk.buffers()
        kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(offsets_buffer, kind)[chunk.offset : chunk.offset + len(chunk) + 1]
        width = int(offsets[1] - offsets[0]) if width < 0 else width
        if data_buffer is None or width == 0 or offsets[-1] - offsets[0] != width * len(chunk):
            return None
        data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]].reshape(-1, width)
        for start in range(0, len(data), _ROWS_HASHED):  # temporaries in cache
            if (np.diff(offsets[start : start + _ROWS_HASHED + 1]) != width).any():
                return None
            rows = data[start : start + _ROWS_HASHED]
            _hash(rows, hashes[done + start : done + start + len(rows)])
        done += len(data)
    return IdHashes(hashes, max(width, 0))


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
