"""Reading battle logs from files (docs/SPEC.md section 1).

Formats are chosen by suffix (:data:`SUFFIXES`): JSON Lines, JSON arrays (FastChat
``clean_battle_*.json`` included), CSV and Parquet, each optionally gzip-compressed.
CSV, JSON Lines and Parquet are read first by the columnar fast path
(:mod:`ranking.io.columnar`): pyarrow reads the file in blocks, each checked with
vectorised masks and kept in compact columns. A file it cannot decide (the first invalid
record, a parse error, a value of an unexpected type) is read again by rows, as JSON
arrays always are: in chunks, each normalised, validated and typed by
:mod:`ranking.io.validation` before the next one is read, naming the row, field and value
of each error. Either way memory follows the compact typed frame rather than the raw
text; repeated ids are dropped at the end, in one hash pass over all the files.
"""

from __future__ import annotations

import gzip
import logging
import os
import zlib
from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from ranking.io.battle_frame import concat_battle_frames
from ranking.io.chunks import CHUNKERS, BattleLogError, Chunk, PathArg, row_numbers
from ranking.io.columnar import TABLES, ColumnarFile, repeated_ids
from ranking.io.validation import (
    REQUIRED_COLUMNS,
    RowError,
    normalise_columns,
    to_battle_frame,
    validate_battles,
)
from ranking.progress import Advance, Progress, start

__all__ = ["SUFFIXES", "BattleLogError", "IngestResult", "read_battles", "read_frame"]

logger = logging.getLogger(__name__)

_FORMATS = (".csv", ".json", ".jsonl", ".parquet")
#: Accepted file suffixes (case-insensitive): each format, plain or gzip-compressed.
SUFFIXES: tuple[str, ...] = _FORMATS + tuple(f"{s}.gz" for s in _FORMATS)


# Exceptions raised while reading a file, and what they mean for the user.
_READ_ERRORS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (FileNotFoundError, "file not found"),
    (IsADirectoryError, "is a directory, not a battle log"),
    ((EOFError, zlib.error, gzip.BadGzipFile), "corrupt or truncated gzip file"),
    (UnicodeDecodeError, "not UTF-8 text"),
    (pd.errors.EmptyDataError, "file is empty (no header)"),
    (pd.errors.ParserError, "malformed CSV"),
    (pa.ArrowException, "not a valid Parquet file"),
    (OSError, "cannot read file"),
)


@dataclass(frozen=True)
class IngestResult:
    """The battles read by :func:`read_battles` and what was left out.

    Attributes
    ----------
    battles : pandas.DataFrame
        The typed battle frame (see :func:`ranking.io.validation.to_battle_frame`).
    n_read : int
        Records read from the files, including skipped and duplicate ones.
    n_skipped : int
        Invalid records skipped (only with ``skip_invalid=True``).
    n_duplicates : int
        Valid records dropped because their ``battle_id`` had already been read.
    skipped_reasons : dict of str to int
        Number of skipped records per reason, e.g.
        ``{"field 'winner': value is not one of model_a, ...": 3}``.
    n_self_battles : int
        Valid records of a model against itself, dropped: they say nothing about
        which model is better (the real Arena log holds ten).
    """

    battles: pd.DataFrame
    n_read: int
    n_skipped: int
    n_duplicates: int
    skipped_reasons: dict[str, int]
    n_self_battles: int = 0


def read_battles(
    paths: PathArg | Sequence[PathArg],
    *,
    skip_invalid: bool = False,
    seen_ids: set[str] | None = None,
    chunksize: int = 100_000,
    progress: Progress | None = None,
) -> IngestResult:
    """Read, validate and de-duplicate one or more battle logs into one frame.

    Parameters
    ----------
    paths : path or sequence of paths
        Battle logs with a suffix from :data:`SUFFIXES`; read in the order given.
    skip_invalid : bool, default False
        Skip invalid records and count them instead of rejecting the whole read.
    seen_ids : set of str, optional
        Battle ids already ingested elsewhere: records repeating one are dropped as
        duplicates. On success the ids of the battles returned are added to it; a
        failed read leaves it unchanged.
    chunksize : int, default 100_000
        Records converted at a time.
    progress : Progress, optional
        Told of one stage a file, ``"reading FILE"``, in bytes of the file as stored.

    Returns
    -------
    IngestResult

    Raises
    ------
    BattleLogError
        For a file that cannot be read (missing, unknown suffix, malformed, truncated,
        no required column) and, unless ``skip_invalid``, for the first invalid record.
    """
    files = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not files:
        raise ValueError("Argument 'paths' must name at least one battle log, not none.")
    if chunksize < 1:
        raise ValueError(f"Argument 'chunksize' must be a positive integer, not {chunksize!r}.")
    reader = _Reader(skip_invalid, frozenset() if seen_ids is None else seen_ids)
    for file in files:
        advance = start(progress, _reading(file), _size(file), "B")
        reader.read_file(file, chunksize, advance)
    result = reader.result()
    if seen_ids is not None:
        seen_ids.update(result.battles["battle_id"].dropna().tolist())
    logger.info(
        "read %d battles, skipped %d, %d duplicates",
        len(result.battles),
        result.n_skipped,
        result.n_duplicates,
    )
    return result


def read_frame(
    frame: pd.DataFrame, source: PathArg, *, skip_invalid: bool = False, first_row: int = 1
) -> IngestResult:
    """Validate, de-duplicate and type battle records already read into a frame.

    What :func:`read_battles` does to each chunk of a file, for records read by someone
    else: a partition of a Parquet dataset read by ``dask.dataframe``, for instance.

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw records, one a row, with the fields of docs/SPEC.md section 1 (aliases allowed).
    source : path or str
        What errors name as the file.
    skip_invalid : bool, default False
        Skip invalid records and count them instead of rejecting the frame.
    first_row : int, default 1
        Record number of the first row, for error messages.

    Returns
    -------
    IngestResult
        The frame's battles and what was left out, counted as by :func:`read_battles`.

    Raises
    ------
    BattleLogError
        For a missing required column and, unless ``skip_invalid``, the first invalid
        record.
    """
    reader = _Reader(skip_invalid, frozenset())
    rows = row_numbers(first_row - 1, len(frame))
    reader._add(source, Chunk(frame.reset_index(drop=True), rows, []), check_columns=True)
    return reader.result()


def _reading(file: PathArg) -> str:
    """The progress stage of reading ``file``."""
    return f"reading {os.path.basename(os.fspath(file))}"


def _size(file: PathArg) -> int:
    return os.path.getsize(file) if os.path.isfile(file) else 0


def _format(file: PathArg) -> tuple[str, bool]:
    """The format suffix of a file and whether it is gzip-compressed."""
    name = os.path.basename(os.fspath(file)).lower()
    gz = name.endswith(".gz")
    suffix = Path(name[:-3] if gz else name).suffix
    if suffix not in _FORMATS:
        accepted = ", ".join(SUFFIXES)
        raise BattleLogError(file, f"unknown file type; accepted suffixes are {accepted}")
    return suffix, gz


class _Reader:
    """Reads files chunk by chunk into typed frames, applying the error policy."""

    def __init__(self, skip_invalid: bool, known: set[str] | frozenset[str]) -> None:
        self.skip_invalid = skip_invalid
        self.known = known
        self.frames: list[pd.DataFrame] = []
        self.n_read = self.n_self = 0
        self.reasons: Counter[str] = Counter()

    def result(self) -> IngestResult:
        """The battles read so far, in one frame, and the counts of what was left out.

        Repeated ids are dropped here, in one hash pass over all the files: a record
        whose ``battle_id`` is known, or met in an earlier valid record, is a duplicate.
        """
        battles = concat_battle_frames(self.frames)
        repeated = repeated_ids(battles["battle_id"], self.known)
        n_duplicates = int(repeated.sum())
        if n_duplicates:
            battles = battles.loc[~repeated].reset_index(drop=True)
        return IngestResult(
            battles,
            self.n_read,
            sum(self.reasons.values()),
            n_duplicates,
            dict(self.reasons),
            self.n_self,
        )

    def read_file(self, file: PathArg, chunksize: int, advance: Advance) -> None:
        suffix, gz = _format(file)
        told = _Told(advance)
        if suffix in TABLES:
            try:
                columns = self._read_columns(file, suffix, gz, chunksize, told)
                frame = columns.frame()
            except Exception as exc:  # Fallback, or anything else the fast path leaves
                logger.debug("%s: read again by rows (%s: %s)", file, type(exc).__name__, exc)
            else:
                self.frames.append(frame)
                self.n_read += columns.n_read
                self.n_self += columns.n_self
                told.finish(file)
                return
        try:
            with open(file, "rb") as raw, gzip.GzipFile(fileobj=raw) if gz else raw as stream:
                chunks = CHUNKERS[suffix](file, cast(IO[bytes], stream), chunksize)
                for number, chunk in enumerate(chunks):
                    self._add(file, chunk, check_columns=number == 0)
                    told(raw.tell())
        except BattleLogError:
            raise
        except Exception as exc:
            reason = next((r for kind, r in _READ_ERRORS if isinstance(exc, kind)), None)
            if reason is None:
                raise
            plain = isinstance(exc, FileNotFoundError | IsADirectoryError)
            detail = "" if plain else " ".join(str(exc).split())
            raise BattleLogError(file, reason, detail=detail) from None
        told.finish(file)

    @staticmethod
    def _read_columns(
        file: PathArg, suffix: str, gz: bool, chunksize: int, told: _Told
    ) -> ColumnarFile:
        """The fast path: the file's blocks as Arrow tables, checked column by column."""
        csv = suffix == ".csv"
        columns = ColumnarFile(
            infer_labels=csv, missing_as_nan=suffix != ".parquet", missing_text=csv
        )
        # text: its blocks without copying them (Parquet's arrays are kept off the file)
        opener = pa.OSFile if suffix == ".parquet" else pa.memory_map
        with opener(os.fspath(file)) as raw:
            with gzip.GzipFile(fileobj=raw) if gz else nullcontext(raw) as stream:
                tables = ((t, raw.tell()) for t in TABLES[suffix](stream, chunksize))
                # read (decompress, parse) the next block in a thread while this one is
                # checked: Arrow parses on all cores, zlib and Arrow release the interpreter
                with closing(_ahead(tables)) as blocks:  # before the file
                    for table, position in blocks:
                        columns.add(table)
                        told(position)
        return columns

    def _add(self, file: PathArg, chunk: Chunk, *, check_columns: bool) -> None:
        frame = normalise_columns(chunk.frame)
        if check_columns and len(frame.columns) > 0:
            _check_columns(file, frame)
        row_errors = validate_battles(frame, allow_self_battles=True)
        errors = chunk.errors + [
            RowError(int(chunk.rows[e.index]), e.field, e.value, e.reason, e.detail)
            for e in row_errors
        ]
        self.n_read += len(frame) + len(chunk.errors)
        if errors:
            if not self.skip_invalid:
                e = min(errors, key=lambda e: e.index)
                where = {"row": e.index, "field": e.field, "value": e.value, "detail": e.detail}
                raise BattleLogError(file, e.reason, **where)
            self.reasons.update(e.summary for e in errors)
            keep = np.ones(len(frame), dtype=bool)
            keep[[e.index for e in row_errors]] = False
            frame = frame.loc[keep]
        typed = to_battle_frame(frame)
        self_battle = (typed["model_a"].astype(str) == typed["model_b"].astype(str)).to_numpy()
        self.n_self += int(self_battle.sum())
        self.frames.append(typed.loc[~self_battle].reset_index(drop=True))


_T = TypeVar("_T")
_END = object()


def _ahead(items: Iterator[_T]) -> Generator[_T, None, None]:
    """The items of ``items``, each next one made in a thread while this one is used
    (decompressing and parsing the next block while this one is checked: zlib and Arrow
    leave the interpreter free meanwhile)."""
    with ThreadPoolExecutor(1, thread_name_prefix="plb-read") as pool:
        future = pool.submit(next, items, _END)
        while (item := future.result()) is not _END:
            future = pool.submit(next, items, _END)
            yield cast(_T, item)


class _Told:
    """Tells ``advance`` of the bytes of a file read, each byte once (over both paths)."""

    def __init__(self, advance: Advance) -> None:
        self.advance = advance
        self.done = 0

    def __call__(self, position: int) -> None:
        if position > self.done:
            self.advance(position - self.done)
            self.done = position

    def finish(self, file: PathArg) -> None:
        self(_size(file))


def _check_columns(file: PathArg, frame: pd.DataFrame) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        found = ", ".join(map(str, frame.columns[:12])) + (", ..." if frame.shape[1] > 12 else "")
        names = ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing))
        reason = f"missing required column{names} (columns found: {found})"
        raise BattleLogError(file, reason, field=missing[0])
