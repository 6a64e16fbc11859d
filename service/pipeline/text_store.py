"""Per-text rows kept by text in a fit directory: what a refit need not compute again.

A fit embeds each distinct prompt and measures its writing style; both are functions of
the prompt's text and of what computed them (the embedding backend and its settings, a
fitted TF-IDF's vocabulary; the style code). So they are kept content-addressed: each row
under the hash of its text, in a folder named by the hash of what produced it. A refit
looks its prompts up and computes only the rows it lacks.

Layout, under a fit directory's ``texts/``::

    texts/KIND/PRODUCER/producer.json     what made the rows ({"kind": ..., "identity": ...})
    texts/KIND/PRODUCER/DIGEST.parquet    parts: ``key`` (the 16-byte BLAKE2b of the text's
                                          UTF-8) and ``row`` (a fixed-size list of floats)

``PRODUCER`` is the first 16 hex digits of the BLAKE2b of the identity's JSON, ``DIGEST``
of the part's keys. A refit's directory links the parts it read (hard links where the
file system allows, else copies) and adds one part of the rows it computed; beyond
:data:`MAX_PARTS` parts they are merged into one. Parts are written to a temporary file
and renamed, never left half-written. Nothing here computes a row: :mod:`service.pipeline.reuse`
says what to compute.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from features.text_rows import TextRows

__all__ = [
    "MAX_PARTS",
    "Keys",
    "TEXTS_DIR",
    "Shelf",
    "open_shelf",
    "text_keys",
    "write_shelves",
]

log = logging.getLogger(__name__)

#: The folder of a fit directory that holds the rows kept by text.
TEXTS_DIR = "texts"
#: Parts a shelf may hold before a write merges them into one.
MAX_PARTS = 8
_PRODUCER_FILE = "producer.json"
_KEY_BYTES = 16

Rows = npt.NDArray[np.floating[Any]]


Keys = npt.NDArray[np.uint64]


def text_keys(texts: Sequence[str]) -> Keys:
    """The key of each text: the 16-byte BLAKE2b digest of its UTF-8, as ``(n, 2)``
    little-endian unsigned 64-bit halves (its bytes, in order)."""
    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(t.encode("utf-8"), digest_size=_KEY_BYTES).digest() for t in texts])
    return np.frombuffer(digests, dtype="<u8").reshape(len(texts), 2)


def producer_id(kind: str, identity: Mapping[str, Any]) -> str:
    """The folder name of the rows of ``kind`` made by ``identity`` (16 hex digits)."""
    document = json.dumps({"kind": kind, "identity": identity}, sort_keys=True)
    return hashlib.blake2b(document.encode("utf-8"), digest_size=8).hexdigest()


@dataclass(frozen=True)
class Shelf:
    """The rows of one kind by one producer: parts on disk, and rows added since.

    Attributes
    ----------
    kind : str
        What the rows are (``"embeddings"``, ``"style"``).
    identity : dict
        What produced them (JSON-ready); rows of another identity are another shelf.
    parts : tuple of Path
        Part files of an earlier fit's shelf.
    added : tuple of (keys, rows)
        Rows computed since, not yet written (keys as :func:`text_keys` makes them).
    """

    kind: str
    identity: dict[str, Any]
    parts: tuple[Path, ...] = ()
    added: tuple[tuple[Keys, Rows], ...] = field(default=(), repr=False)

    @property
    def producer(self) -> str:
        """The shelf's folder name: the hash of its kind and identity."""
        return producer_id(self.kind, self.identity)

    def lookup(
        self, texts: Sequence[str], wanted: Keys | None = None
    ) -> tuple[TextRows, list[str]]:
        """The kept rows of ``texts`` (distinct), and the texts not kept, in their order."""
        values, found = self.aligned(texts, wanted)
        kept = [t for t, f in zip(texts, found, strict=True) if f]
        missing = [t for t, f in zip(texts, found, strict=True) if not f]
        return TextRows(kept, values[found]), missing

    def aligned(
        self, texts: Sequence[str], wanted: Keys | None = None
    ) -> tuple[Rows, npt.NDArray[np.bool_]]:
        """The kept row of each of ``texts`` (distinct), in their order, and which are
        kept: ``(len(texts), width)`` rows, zero where not kept (``width`` 0 when the
        shelf keeps none).

        ``wanted``, when given, is :func:`text_keys` of ``texts`` computed already (a fit
        looks the same texts up on two shelves). A part that cannot be read (removed
        since, damaged) is skipped with a warning: its rows are computed again.
        """
        keys, values = self._read()
        if not len(keys):
            return np.zeros((len(texts), 0)), np.zeros(len(texts), dtype=bool)
        if wanted is None:
            wanted = text_keys(texts)
        index = pd.Index(keys[:, 0])  # the first half finds a row, both must match
        if not index.is_unique:  # the same text added twice: its first row
            first = ~index.duplicated()
            index, keys, values = index[first], keys[first], values[first]
        positions = index.get_indexer(pd.Index(wanted[:, 0]))
        found = positions >= 0
        found[found] = keys[positions[found], 1] == wanted[found, 1]
        if found.all():
            return values[positions], found
        rows = np.zeros((len(texts), values.shape[1]), dtype=values.dtype)
        rows[found] = values[positions[found]]
        return rows, found

    def add(self, texts: Sequence[str], rows: Rows) -> Shelf:
        """This shelf with the rows of ``texts`` added (kept in memory until written)."""
        if len(texts) != len(rows):
            raise ValueError(f"{len(texts)} texts but {len(rows)} rows")
        if not len(texts):
            return self
        added = (*self.added, (text_keys(texts), np.asarray(rows)))
        return Shelf(self.kind, self.identity, self.parts, added)

    def _read(self) -> tuple[Keys, Rows]:
        """Every kept key and row: the parts', then those added."""
        blocks = [block for part in self.parts if (block := _read_part(part)) is not None]
        blocks.extend(self.added)
        blocks = [b for b in blocks if len(b[0])]
        if not blocks:
            return np.zeros((0, 2), dtype=np.uint64), np.zeros((0, 0))
        widths = {b[1].shape[1] for b in blocks}
        if len(widths) > 1:  # one producer, one width: a mismatch is a damaged part
            where = f"{TEXTS_DIR}/{self.kind}/{self.producer}"
            log.warning("%s: rows of widths %s; they are computed again", where, widths)
            return np.zeros((0, 2), dtype=np.uint64), np.zeros((0, 0))
        return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])

    def write(self, texts_dir: Path) -> Path:
        """Write the shelf under ``texts_dir`` (a fit directory's ``texts/``, being made).

        The earlier parts are linked (or copied), the rows added since written as one
        part; beyond :data:`MAX_PARTS` every row is merged into one part.
        """
        folder = texts_dir / self.kind / self.producer
        folder.mkdir(parents=True, exist_ok=True)
        document = {"kind": self.kind, "identity": self.identity}
        (folder / _PRODUCER_FILE).write_text(json.dumps(document, indent=2) + "\n", "utf-8")
        readable = tuple(p for p in self.parts if p.is_file())
        if len(readable) + bool(self.added) > MAX_PARTS:
            _write_part(folder, *self._read())
            return folder
        for part in readable:
            _link(part, folder / part.name)
        if self.added:
            keys = np.concatenate([k for k, _ in self.added])
            _write_part(folder, keys, np.concatenate([r for _, r in self.added]))
        return folder


def open_shelf(texts_dir: Path | None, kind: str, identity: dict[str, Any]) -> Shelf:
    """The shelf of ``kind`` by ``identity`` in ``texts_dir`` (an earlier fit's
    ``texts/``): its parts where it holds them, else an empty shelf."""
    shelf = Shelf(kind, identity)
    if texts_dir is None:
        return shelf
    folder = texts_dir / kind / shelf.producer
    parts = tuple(sorted(folder.glob("*.parquet"))) if folder.is_dir() else ()
    return Shelf(kind, identity, parts)


def write_shelves(out: Path, shelves: Sequence[Shelf]) -> None:
    """Write ``shelves`` into the fit directory being made at ``out``, under ``texts/``."""
    for shelf in shelves:
        shelf.write(out / TEXTS_DIR)


def _read_part(path: Path) -> tuple[Keys, Rows] | None:
    """The keys and rows of one part; None (with a warning) when it cannot be read."""
    try:
        table = pq.read_table(path)
        column = table.column("key").combine_chunks()
        if column.type != pa.binary(_KEY_BYTES) or column.null_count:
            raise ValueError(f"keys of type {column.type}")
        start = column.offset * _KEY_BYTES
        data = column.buffers()[1][start : start + len(column) * _KEY_BYTES]
        keys = np.frombuffer(data, dtype="<u8").reshape(len(column), 2)
        rows = table.column("row").combine_chunks()
        width = rows.type.list_size
        values = rows.flatten().to_numpy(zero_copy_only=False).reshape(-1, width)
    except (OSError, KeyError, ValueError, pa.ArrowException) as error:
        log.warning("%s: cannot read kept rows (%s); they are computed again", path, error)
        return None
    return keys, values


def _write_part(folder: Path, keys: Keys, rows: Rows) -> Path:
    """Write one part atomically (a temporary file, then renamed), named by its keys."""
    data = np.ascontiguousarray(keys, dtype="<u8").tobytes()
    digest = hashlib.blake2b(data, digest_size=8).hexdigest()
    path = folder / f"{digest}.parquet"
    values = np.ascontiguousarray(rows)
    column = pa.FixedSizeListArray.from_arrays(pa.array(values.ravel()), values.shape[1])
    key = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(_KEY_BYTES), len(keys), [None, pa.py_buffer(data)]
    )
    table = pa.table({"key": key, "row": column})
    handle, temporary = tempfile.mkstemp(prefix=f".{digest}.", suffix=".tmp", dir=folder)
    os.close(handle)
    try:
        # floats neither repeat nor compress: no dictionary, no compression
        pq.write_table(table, temporary, use_dictionary=False, compression="none")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _link(source: Path, target: Path) -> None:
    """``target`` as a hard link of ``source``, or across file systems a copy (made
    under a temporary name, then renamed)."""
    if target.exists():
        return
    try:
        os.link(source, target)
    except OSError:
        temporary = target.with_name(f".{target.name}.tmp")
        try:
            shutil.copy2(source, temporary)
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
