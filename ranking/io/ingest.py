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
text; repeated ids are dropped at the end, in one hash pass over all the files. A log in
its own shape is read through a :class:`ranking.io.column_map.ColumnMap` (both paths
rename its columns by :meth:`~ranking.io.column_map.ColumnMap.plan`), its prompt ids
joined to :class:`ranking.io.prompt_texts.PromptTexts`. An id column whose repeats carry
different votes is not a battle id: the read is refused (:class:`NotABattleIdError`)
rather than dropping real votes as repeats; exact repeats are dropped.
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

from ranking.io.arrow_tables import TABLES
from ranking.io.battle_frame import REQUIRED_COLUMNS, to_battle_frame
from ranking.io.chunks import (
    CHUNKERS,
    BattleLogError,
    Chunk,
    ColumnMapError,
    PathArg,
    row_numbers,
)
from ranking.io.column_map import DEFAULT_MAP, ColumnMap, MissingColumn
from ranking.io.columnar import ColumnarFile
from ranking.io.prompt_texts import PromptTexts
from ranking.io.records import normalise_columns
from ranking.io.settle import Origin, settle
from ranking.io.validation import RowError, validate_battles
from ranking.progress import Advance, Progress, start

__all__ = ["SUFFIXES", "IngestResult", "read_battles", "read_frame"]

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
        The typed battle frame (see :func:`ranking.io.battle_frame.to_battle_frame`).
    n_read : int
        Records read from the files, including skipped and duplicate ones.
    n_skipped : int
        Invalid records skipped (only with ``skip_invalid=True``).
    n_duplicates : int
        Valid records dropped because their ``battle_id`` had already been read (with
        the same vote, or in ``seen_ids``).
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
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
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
    columns : ColumnMap, optional
        Which column holds which field and what the winner values mean, for logs in
        their own shape (by default docs/SPEC.md section 1, aliases included).
    prompts : PromptTexts, optional
        Texts of the prompt ids the logs hold in their ``prompt`` field: each id is
        replaced by its text (an id without one is invalid).

    Returns
    -------
    IngestResult

    Raises
    ------
    BattleLogError
        For a file that cannot be read (missing, unknown suffix, malformed, truncated,
        no required column) and, unless ``skip_invalid``, for the first invalid record.
    ColumnMapError
        When ``columns`` names a column a file lacks (a :class:`BattleLogError`).
    NotABattleIdError
        When rows repeating an id carry different votes (a :class:`BattleLogError`): the
        id column is not a battle id; name the right one, or none, in ``columns``.
    """
    files = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not files:
        raise ValueError("Argument 'paths' must name at least one battle log, not none.")
    if chunksize < 1:
        raise ValueError(f"Argument 'chunksize' must be a positive integer, not {chunksize!r}.")
    reader = _Reader(skip_invalid, frozenset() if seen_ids is None else seen_ids, columns, prompts)
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
    frame: pd.DataFrame,
    source: PathArg,
    *,
    skip_invalid: bool = False,
    first_row: int = 1,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
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
    columns : ColumnMap, optional
        Which column holds which field (see :func:`read_battles`).
    prompts : PromptTexts, optional
        Texts of the frame's prompt ids (see :func:`read_battles`).

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
    reader = _Reader(skip_invalid, frozenset(), columns, prompts)
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

    def __init__(
        self,
        skip_invalid: bool,
        known: set[str] | frozenset[str],
        columns: ColumnMap | None = None,
        prompts: PromptTexts | None = None,
    ) -> None:
        self.skip_invalid = skip_invalid
        self.known = known
        self.columns = columns or DEFAULT_MAP
        self.prompts = prompts
        self.frames: list[pd.DataFrame] = []
        self.origins: list[Origin] = []  # each frame's file and id column, for messages
        self.n_read = self.n_self = 0
        self.reasons: Counter[str] = Counter()

    def result(self) -> IngestResult:
        """The battles read so far, in one frame, and the counts of what was left out:
        prompt ids joined, repeated ids judged and dropped (:func:`settle`)."""
        reasons = self.reasons if self.skip_invalid else None
        battles, n_duplicates = settle(
            self.frames, self.origins, known=self.known, prompts=self.prompts, reasons=reasons
        )
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
                self.origins.append(Origin(file, columns.id_column))
                self.n_read += columns.n_read
                self.n_self += columns.n_self
                told.finish(file)
                return
        try:
            with open(file, "rb") as raw, gzip.GzipFile(fileobj=raw) if gz else raw as stream:
                text = self.columns.sources
                chunks = CHUNKERS[suffix](file, cast(IO[bytes], stream), chunksize, text)
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

    def _read_columns(
        self, file: PathArg, suffix: str, gz: bool, chunksize: int, told: _Told
    ) -> ColumnarFile:
        """The fast path: the file's blocks as Arrow tables, checked column by column."""
        csv = suffix == ".csv"
        columns = ColumnarFile(
            infer_labels=csv,
            missing_as_nan=suffix != ".parquet",
            missing_text=csv,
            columns=self.columns,
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
        try:
            frame = normalise_columns(chunk.frame, self.columns)
        except MissingColumn as missing:
            if len(chunk.frame.columns):
                raise ColumnMapError(file, missing) from None
            frame = chunk.frame  # no record, no column: nothing to map
        if check_columns and len(frame.columns) > 0:
            _check_columns(file, frame, chunk.frame.columns)
        row_errors = validate_battles(frame, allow_self_battles=True, columns=self.columns)
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
        if self.columns.winner_values and "winner" in frame.columns:
            winners = self.columns.winners(frame["winner"].tolist())
            frame = frame.assign(winner=pd.Series(winners, index=frame.index, dtype=object))
        typed = to_battle_frame(frame)
        self_battle = (typed["model_a"].astype(str) == typed["model_b"].astype(str)).to_numpy()
        self.n_self += int(self_battle.sum())
        self.frames.append(typed.loc[~self_battle].reset_index(drop=True))
        id_column = next((s for s, f in self._renames(chunk.frame) if f == "battle_id"), None)
        self.origins.append(Origin(file, id_column))

    def _renames(self, raw: pd.DataFrame) -> list[tuple[str, str]]:
        try:
            return list(self.columns.plan(raw.columns).renames.items())
        except MissingColumn:
            return []


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


def _check_columns(file: PathArg, frame: pd.DataFrame, source: pd.Index) -> None:
    """A :class:`BattleLogError` for a required field no column holds (``source``: the
    columns as the file names them)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        found = ", ".join(map(str, source[:12])) + (", ..." if len(source) > 12 else "")
        names = ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing))
        reason = f"missing required column{names} (columns found: {found})"
        raise BattleLogError(file, reason, field=missing[0])
