"""Reading battle logs from files (SPEC section 1).

Formats are chosen by suffix (:data:`SUFFIXES`): JSON Lines, JSON arrays (FastChat
``clean_battle_*.json`` included), CSV and Parquet, each optionally gzip-compressed.
Files are read in chunks; every chunk is normalised, validated and typed by
:mod:`ranking.validation` before the next one is read, so that memory follows the
compact typed frame rather than the raw text.

>>> result = read_battles("battles.csv.gz")                      # doctest: +SKIP
>>> result.battles.columns[:7].tolist()                          # doctest: +SKIP
['battle_id', 'model_a', 'model_b', 'winner', 'user_id', 'prompt', 'tstamp']
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import sys
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from ranking.validation import (
    ALIASES,
    BATTLE_COLUMNS,
    REQUIRED_COLUMNS,
    RowError,
    drop_duplicate_ids,
    empty_battle_frame,
    frame_from_records,
    normalise_columns,
    to_battle_frame,
    validate_battles,
)

__all__ = ["SUFFIXES", "BattleLogError", "IngestResult", "read_battles"]

logger = logging.getLogger(__name__)

_FORMATS = (".csv", ".json", ".jsonl", ".parquet")
#: Accepted file suffixes (case-insensitive): each format, plain or gzip-compressed.
SUFFIXES: tuple[str, ...] = _FORMATS + tuple(f"{s}.gz" for s in _FORMATS)

# Columns read as text from CSV whatever they look like (ids such as "007" stay intact).
_TEXT_COLUMNS = [c for c in BATTLE_COLUMNS if c != "tstamp"] + [
    alias for aliases in ALIASES.values() for alias in aliases
]

PathArg = str | os.PathLike[str]


class BattleLogError(ValueError):
    """A battle log that cannot be read as given.

    Attributes
    ----------
    file : str
        The file, as it was named by the caller.
    row : int or None
        1-based record number within the file (the line number for JSON Lines);
        ``None`` when the file as a whole is unusable.
    field : str or None
        The offending field, when one is to blame.
    value : object
        The offending value; ``None`` when missing or not applicable.
    reason : str
        What is wrong, without file, row or value.
    """

    def __init__(
        self,
        file: PathArg,
        reason: str,
        *,
        row: int | None = None,
        field: str | None = None,
        value: Any = None,
        detail: str = "",
    ) -> None:
        self.file = os.fspath(file)
        self.row = row
        self.field = field
        self.value = value
        self.reason = reason
        if row is None:
            text = f"{reason} ({detail})" if detail else reason
        else:
            text = f"row {row}: " + RowError(row, field, value, reason, detail).message
        super().__init__(f"{self.file}: {text}")


@dataclass(frozen=True)
class IngestResult:
    """The battles read by :func:`read_battles` and what was left out.

    Attributes
    ----------
    battles : pandas.DataFrame
        The typed battle frame (see :func:`ranking.validation.to_battle_frame`).
    n_read : int
        Records read from the files, including skipped and duplicate ones.
    n_skipped : int
        Invalid records skipped (only with ``skip_invalid=True``).
    n_duplicates : int
        Valid records dropped because their ``battle_id`` had already been read.
    skipped_reasons : dict of str to int
        Number of skipped records per reason, e.g.
        ``{"field 'winner': value is not one of model_a, ...": 3}``.
    """

    battles: pd.DataFrame
    n_read: int
    n_skipped: int
    n_duplicates: int
    skipped_reasons: dict[str, int] = field(default_factory=dict)


def read_battles(
    paths: PathArg | Sequence[PathArg],
    *,
    skip_invalid: bool = False,
    seen_ids: set[str] | None = None,
    chunksize: int = 100_000,
    progress: bool = False,
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
    progress : bool, default False
        Show a progress bar (bytes read) on stderr.

    Returns
    -------
    IngestResult

    Raises
    ------
    BattleLogError
        For a file that cannot be read (missing, unknown suffix, malformed, truncated,
        lacking a required column) and, unless ``skip_invalid``, for the first invalid
        record, naming its row, field and value.
    """
    files = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not files:
        raise ValueError("Argument 'paths' must name at least one battle log, not none.")
    if chunksize < 1:
        raise ValueError(f"Argument 'chunksize' must be a positive integer, not {chunksize!r}.")
    reader = _Reader(skip_invalid, frozenset() if seen_ids is None else seen_ids)
    total = sum(_size(f) for f in files)
    with tqdm(
        total=total, unit="B", unit_scale=True, disable=not progress, file=sys.stderr
    ) as bar:
        for file in files:
            bar.set_description(os.path.basename(os.fspath(file)))
            reader.read_file(file, chunksize, bar)
    result = reader.result()
    if seen_ids is not None:
        seen_ids.update(reader.seen)
    logger.info(
        "read %d battles from %d file(s): %d skipped, %d duplicates",
        len(result.battles),
        len(files),
        result.n_skipped,
        result.n_duplicates,
    )
    return result


class _Chunk(NamedTuple):
    """Raw records of one chunk, their 1-based row numbers, and unparsable records."""

    frame: pd.DataFrame
    rows: npt.NDArray[np.int64]
    errors: list[RowError]  # index = row number


def _size(file: PathArg) -> int:
    try:
        return os.path.getsize(file)
    except OSError:
        return 0


def _format(file: PathArg) -> tuple[str, bool]:
    """The format suffix of a file and whether it is gzip-compressed."""
    name = os.path.basename(os.fspath(file)).lower()
    gz = name.endswith(".gz")
    suffix = Path(name[:-3] if gz else name).suffix
    if suffix not in _FORMATS:
        raise BattleLogError(
            file, f"unknown file type; accepted suffixes are {', '.join(SUFFIXES)}"
        )
    return suffix, gz


class _Reader:
    """Reads files chunk by chunk into typed frames, applying the error policy."""

    def __init__(self, skip_invalid: bool, known: set[str] | frozenset[str]) -> None:
        self.skip_invalid = skip_invalid
        self.known = known
        self.seen: set[str] = set()
        self.frames: list[pd.DataFrame] = []
        self.template: pd.DataFrame | None = None
        self.n_read = self.n_duplicates = 0
        self.reasons: Counter[str] = Counter()

    def read_file(self, file: PathArg, chunksize: int, bar: tqdm[Any]) -> None:
        suffix, gz = _format(file)
        with ExitStack() as stack:
            try:
                raw = stack.enter_context(open(file, "rb"))
            except FileNotFoundError:
                raise BattleLogError(file, "file not found") from None
            except IsADirectoryError:
                raise BattleLogError(file, "is a directory, not a battle log") from None
            except OSError as exc:
                raise BattleLogError(file, "cannot open file", detail=exc.strerror or "") from None
            stream: IO[bytes] = stack.enter_context(gzip.GzipFile(fileobj=raw)) if gz else raw
            chunks = _CHUNKERS[suffix](file, stream, chunksize)
            try:
                for number, chunk in enumerate(chunks):
                    self._add(file, chunk, check_columns=number == 0)
                    bar.update(max(0, raw.tell() - bar.n))
            except BattleLogError:
                raise
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise BattleLogError(file, "corrupt or truncated gzip file", detail=str(exc)) from None
            except UnicodeDecodeError as exc:
                raise BattleLogError(file, "not UTF-8 text", detail=str(exc)) from None
            except pd.errors.EmptyDataError:
                raise BattleLogError(file, "file is empty (no header)") from None
            except pd.errors.ParserError as exc:
                raise BattleLogError(file, "malformed CSV", detail=_one_line(exc)) from None
            except pa.ArrowException as exc:
                raise BattleLogError(file, "not a valid Parquet file", detail=_one_line(exc)) from None
            except OSError as exc:
                raise BattleLogError(file, "cannot read file", detail=_one_line(exc)) from None
        bar.update(max(0, _size(file) - bar.n))

    def _add(self, file: PathArg, chunk: _Chunk, *, check_columns: bool) -> None:
        frame = normalise_columns(chunk.frame)
        if check_columns and len(frame.columns) > 0:
            _check_columns(file, frame)
        row_errors = validate_battles(frame)
        errors = chunk.errors + [
            RowError(int(chunk.rows[e.index]), e.field, e.value, e.reason, e.detail)
            for e in row_errors
        ]
        self.n_read += len(frame) + len(chunk.errors)
        if errors:
            if not self.skip_invalid:
                first = min(errors, key=lambda e: e.index)
                raise BattleLogError(
                    file,
                    first.reason,
                    row=first.index,
                    field=first.field,
                    value=first.value,
                    detail=first.detail,
                )
            self.reasons.update(e.summary for e in errors)
            keep = np.ones(len(frame), dtype=bool)
            keep[[e.index for e in row_errors]] = False
            frame = frame.loc[keep]
        typed, n_duplicates = drop_duplicate_ids(to_battle_frame(frame), self.seen, self.known)
        self.n_duplicates += n_duplicates
        if len(typed):
            self.frames.append(typed)
        elif self.template is None:
            self.template = typed

    def result(self) -> IngestResult:
        return IngestResult(
            battles=_concat(self.frames, self.template),
            n_read=self.n_read,
            n_skipped=sum(self.reasons.values()),
            n_duplicates=self.n_duplicates,
            skipped_reasons=dict(self.reasons),
        )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _check_columns(file: PathArg, frame: pd.DataFrame) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        found = [str(c) for c in frame.columns]
        shown = ", ".join(found[:12]) + (", ..." if len(found) > 12 else "")
        plural = "s" if len(missing) > 1 else ""
        raise BattleLogError(
            file,
            f"missing required column{plural} {', '.join(map(repr, missing))} "
            f"(columns found: {shown or 'none'})",
            field=missing[0],
        )


def _concat(frames: list[pd.DataFrame], template: pd.DataFrame | None) -> pd.DataFrame:
    """Concatenate typed chunks, giving the model columns the union of their categories."""
    if not frames:
        return template if template is not None else empty_battle_frame()
    if len(frames) == 1:
        return frames[0]
    names = [f[c].cat.categories for f in frames for c in ("model_a", "model_b")]
    models = names[0].append(names[1:]).unique().sort_values()
    for frame in frames:
        for column in ("model_a", "model_b"):
            frame[column] = frame[column].cat.set_categories(models)
    return pd.concat(frames, ignore_index=True)


def _row_numbers(start: int, n: int) -> npt.NDArray[np.int64]:
    return np.arange(start + 1, start + n + 1, dtype=np.int64)


def _csv_chunks(file: PathArg, stream: IO[bytes], chunksize: int) -> Iterator[_Chunk]:
    reader = pd.read_csv(
        stream,
        chunksize=chunksize,
        dtype=dict.fromkeys(_TEXT_COLUMNS, str),
        compression=None,
        encoding="utf-8",
    )
    start = 0
    with reader:
        for frame in reader:
            yield _Chunk(frame, _row_numbers(start, len(frame)), [])
            start += len(frame)


def _jsonl_chunks(file: PathArg, stream: IO[bytes], chunksize: int) -> Iterator[_Chunk]:
    records: list[dict[str, Any]] = []
    rows: list[int] = []
    errors: list[RowError] = []
    any_line = False
    text = io.TextIOWrapper(stream, encoding="utf-8-sig")
    for number, line in enumerate(text, start=1):
        if not line.strip():
            continue
        any_line = True
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            detail = f"{exc.msg} at column {exc.colno}"
            errors.append(RowError(number, None, None, "malformed JSON", detail))
            continue
        if isinstance(record, dict):
            records.append(record)
            rows.append(number)
        else:
            errors.append(RowError(number, None, None, "record is not a JSON object"))
        if len(records) + len(errors) >= chunksize:
            yield _Chunk(frame_from_records(records), np.array(rows, dtype=np.int64), errors)
            records, rows, errors = [], [], []
    if not any_line:
        raise BattleLogError(file, "file is empty")
    if records or errors:
        yield _Chunk(frame_from_records(records), np.array(rows, dtype=np.int64), errors)


def _json_chunks(file: PathArg, stream: IO[bytes], chunksize: int) -> Iterator[_Chunk]:
    content = io.TextIOWrapper(stream, encoding="utf-8-sig").read()
    if not content.strip():
        raise BattleLogError(file, "file is empty")
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise BattleLogError(file, "malformed JSON", detail=detail) from None
    del content
    if not isinstance(data, list):
        kind = type(data).__name__
        raise BattleLogError(file, f"expected a JSON array of battle records, not a {kind}")
    for start in range(0, max(len(data), 1), chunksize):
        part = data[start : start + chunksize]
        records, rows, errors = [], [], []
        for number, record in enumerate(part, start=start + 1):
            if isinstance(record, dict):
                records.append(record)
                rows.append(number)
            else:
                errors.append(RowError(number, None, None, "record is not a JSON object"))
        yield _Chunk(frame_from_records(records), np.array(rows, dtype=np.int64), errors)


def _parquet_chunks(file: PathArg, stream: IO[bytes], chunksize: int) -> Iterator[_Chunk]:
    source = pa.BufferReader(stream.read()) if isinstance(stream, gzip.GzipFile) else stream
    parquet = pq.ParquetFile(source)
    tables: Iterator[pa.Table] = (
        pa.Table.from_batches([batch]) for batch in parquet.iter_batches(batch_size=chunksize)
    )
    if parquet.metadata.num_rows == 0:  # no batches, but the columns still count
        tables = iter([parquet.schema_arrow.empty_table()])
    start = 0
    for table in tables:
        while any(pa.types.is_struct(f.type) for f in table.schema):
            table = table.flatten()  # struct columns become dotted names, one level a pass
        frame = table.to_pandas()
        yield _Chunk(frame, _row_numbers(start, len(frame)), [])
        start += len(frame)


_CHUNKERS = {
    ".csv": _csv_chunks,
    ".json": _json_chunks,
    ".jsonl": _jsonl_chunks,
    ".parquet": _parquet_chunks,
}
