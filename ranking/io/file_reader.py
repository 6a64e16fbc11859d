"""Reading one battle-log file: its format's columnar reader, and its rows only where
that one cannot decide.

:class:`FileReader` reads each file of :func:`ranking.io.ingest.read_battles` by the
reader its format has (:mod:`ranking.io.formats`): CSV, JSON Lines and Parquet first by
the columnar fast path (:mod:`ranking.io.columnar`): pyarrow reads the file in blocks,
each checked with vectorised masks and kept in compact columns. A file it cannot decide
(the first invalid record, a parse error, a value of an unexpected type) is read again
by rows, as JSON arrays always are: in chunks, each normalised, validated and typed
before the next one is read, naming the row, field and value of each error.
"""

from __future__ import annotations

import gzip
import logging
import os
import zlib
from collections import Counter
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, nullcontext
from typing import IO, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from ranking.io.battle_frame import REQUIRED_COLUMNS, to_battle_frame
from ranking.io.chunks import BattleLogError, Chunk, ColumnMapError, PathArg
from ranking.io.column_map import DEFAULT_MAP, ColumnMap, MissingColumn
from ranking.io.columnar import ColumnarFile
from ranking.io.formats import TableReader, format_of
from ranking.io.prompt_texts import PromptTexts
from ranking.io.records import normalise_columns
from ranking.io.settle import Origin, settle
from ranking.io.validation import RowError, validate_battles
from ranking.progress import Advance

__all__ = ["FileReader", "size"]

logger = logging.getLogger(__name__)

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


class FileReader:
    """Reads battle logs into typed frames, applying the error policy.

    Each file by its format's columnar reader when it has one, and by rows only where
    that one cannot decide (:mod:`ranking.io.formats`); frames already read by someone
    else chunk by chunk (:meth:`add`). :meth:`settled` joins what was read.

    Parameters
    ----------
    skip_invalid : bool
        Skip invalid records and count them (``reasons``) instead of raising.
    known : set of str
        Battle ids read before: records repeating one are dropped.
    columns : ColumnMap, optional
        Which column holds which field (:data:`~ranking.io.column_map.DEFAULT_MAP`).
    prompts : PromptTexts, optional
        Texts of the logs' prompt ids.

    Attributes
    ----------
    n_read, n_self : int
        Records read, and valid ones of a model against itself (dropped).
    reasons : collections.Counter
        Records skipped, by reason.
    """

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

    def settled(self) -> tuple[pd.DataFrame, int]:
        """The battles read so far, in one frame, and the number of repeated ids dropped:
        prompt ids joined, repeated ids judged and dropped (:func:`settle`)."""
        reasons = self.reasons if self.skip_invalid else None
        return settle(
            self.frames, self.origins, known=self.known, prompts=self.prompts, reasons=reasons
        )

    def read_file(self, file: PathArg, chunksize: int, advance: Advance) -> None:
        """Read ``file`` (its format by suffix), ``chunksize`` records at a time, telling
        ``advance`` of its bytes; by rows where the columnar reader cannot decide.

        Raises
        ------
        BattleLogError
            For a file that cannot be read and, unless ``skip_invalid``, for the first
            invalid record.
        """
        fmt, gz = format_of(file)
        told = _Told(advance)
        if fmt.tables is not None:
            try:
                columns = self._read_columns(file, fmt.suffix, fmt.tables, gz, chunksize, told)
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
                chunks = fmt.chunks(file, cast(IO[bytes], stream), chunksize, text)
                for number, chunk in enumerate(chunks):
                    self.add(file, chunk, check_columns=number == 0)
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
        self,
        file: PathArg,
        suffix: str,
        tables: TableReader,
        gz: bool,
        chunksize: int,
        told: _Told,
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
                blocks = ((t, raw.tell()) for t in tables(stream, chunksize))
                # read (decompress, parse) the next block in a thread while this one is
                # checked: Arrow parses on all cores, zlib and Arrow release the interpreter
                with closing(_ahead(blocks)) as ahead:  # before the file
                    for table, position in ahead:
                        columns.add(table)
                        told(position)
        return columns

    def add(self, file: PathArg, chunk: Chunk, *, check_columns: bool) -> None:
        """Normalise, validate and type the raw records of ``chunk`` (read from ``file``);
        ``check_columns``: its columns are checked to hold every required field."""
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
        self(size(file))


def _check_columns(file: PathArg, frame: pd.DataFrame, source: pd.Index) -> None:
    """A :class:`BattleLogError` for a required field no column holds (``source``: the
    columns as the file names them)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        found = ", ".join(map(str, source[:12])) + (", ..." if len(source) > 12 else "")
        names = ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing))
        reason = f"missing required column{names} (columns found: {found})"
        raise BattleLogError(file, reason, field=missing[0])


def size(file: PathArg) -> int:
    """Bytes of ``file`` as stored; 0 for what is not a file."""
    return os.path.getsize(file) if os.path.isfile(file) else 0
