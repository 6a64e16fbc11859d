"""Battle ids met before: one hash pass over all the files of an ingest."""

from __future__ import annotations

from collections.abc import Set
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["repeated_ids"]


_ROWS_HASHED = 1 << 18  # rows hashed at a time: bounds the per-byte arrays
_PRIME = np.uint64(0x100000001B3)


def repeated_ids(ids: pd.Series, known: Set[str] = frozenset()) -> npt.NDArray[np.bool_]:
    """True where an id is in ``known`` or was met in an earlier row; missing ids never are.

    One hash pass. Ids all of one length (the usual case: hex digests, zero-padded
    numbers) are hashed to 64 bits from their bytes, and only the ids that share a bucket
    of a table of about 4n buckets with another go through pandas' integer hash table;
    ids of equal hashes are then compared as text, so that a collision of hashes cannot
    drop a battle. Other ids go through Arrow's string hash table. Either way ids are
    numbered in order of first appearance, so that an id was met before exactly where its
    number is not above every earlier one.
    """
    repeated = np.zeros(len(ids), dtype=bool)
    present = np.flatnonzero(ids.notna().to_numpy())
    if not present.size:
        return repeated
    values = pa.array(ids.array, type=pa.large_string())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    values = values.take(pa.array(present)) if present.size < len(ids) else values
    later = _later_by_hash(values)
    if later is None:
        later = _later(pc.dictionary_encode(values).indices.to_numpy())
    repeated[present[later]] = True
    if known:
        seen = pc.is_in(values, value_set=pa.array(list(known), type=pa.large_string()))
        repeated[present] |= seen.to_numpy(zero_copy_only=False)
    return repeated


def _later(codes: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.intp]:
    """Positions of codes met before, for codes numbered in order of first appearance."""
    before = np.maximum.accumulate(np.concatenate([[-1], codes[:-1]]))
    return np.flatnonzero(codes <= before)


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _later_by_hash(values: pa.Array) -> npt.NDArray[np.intp] | None:
    """Positions of strings met before; ``None`` unless all have one length (no nulls)."""
    _, offsets_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64)[
        values.offset : values.offset + len(values) + 1
    ]
    width = int(offsets[1] - offsets[0]) if len(values) else 0
    if data_buffer is None or width == 0 or offsets[-1] - offsets[0] != width * len(values):
        return None
    if (np.diff(offsets) != width).any():
        return None
    data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]].reshape(-1, width)
    padded = np.zeros((len(values), -(-width // 8) * 8), dtype=np.uint8)
    padded[:, :width] = data
    hashes = np.zeros(len(values), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for word in padded.view(np.uint64).T:
            hashes = (hashes ^ word) * _MIX
            hashes ^= hashes >> np.uint64(31)
    bits = int(np.ceil(np.log2(len(values)))) + 2
    buckets = (hashes >> np.uint64(64 - bits)).astype(np.intp)
    crowded = np.flatnonzero(np.bincount(buckets, minlength=1 << bits)[buckets] > 1)
    codes, _ = pd.factorize(hashes[crowded])  # in order: numbered by first appearance
    later = _later(codes)
    first = np.empty(len(codes) and codes.max() + 1, dtype=np.intp)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    later, earliest = crowded[later], crowded[first[codes[later]]]
    same = pc.equal(values.take(pa.array(later)), values.take(pa.array(earliest)))
    return later if pc.all(same).as_py() is not False else None
