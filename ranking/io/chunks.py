"""Battle log formats as chunks of raw records: CSV, JSON Lines, JSON arrays, Parquet.

Each reader, ``(file, stream, chunksize, text)`` (``text``: columns a CSV file keeps as
text, beside the fields and their aliases), yields :class:`Chunk` s of at most
``chunksize`` raw records with their 1-based row numbers, and the rows that could not be
parsed; :mod:`ranking.io.ingest` validates
and types each chunk before the next is read.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import IO, Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from ranking.io.arrow_tables import open_parquet
from ranking.io.column_map import ALIASES, BATTLE_COLUMNS, MissingColumn
from ranking.io.records import frame_from_records, loads_record
from ranking.io.validation import RowError

__all__ = [
    "BattleLogError",
    "Chunk",
    "ColumnMapError",
    "NotABattleIdError",
    "PathArg",
    "csv_chunks",
    "json_chunks",
    "jsonl_chunks",
    "parquet_chunks",
    "row_numbers",
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


class ColumnMapError(BattleLogError):
    """A column map (:class:`ranking.io.column_map.ColumnMap`) naming a column that a
    battle log does not have.

    Attributes
    ----------
    field : str
        The field the map takes from that column, e.g. ``"model_a"``.
    column : str
        The column named.
    """

    def __init__(self, file: PathArg, missing: MissingColumn) -> None:
        super().__init__(file, str(missing), field=missing.field)
        self.column = missing.column


class NotABattleIdError(BattleLogError):
    """A battle id column whose repeated ids carry different votes: it names something
    else (a question, a pair of models), and skipping its repeats would drop real votes.

    Attributes
    ----------
    column : str
        The column read as the battle id, as the log names it (``question_id``).
    n_differing : int
        Rows repeating an id with another vote than its first row's.
    n_rows : int
        Rows read as battles (valid ones, before repeats were dropped).
    """

    def __init__(self, file: PathArg, column: str, n_differing: int, n_rows: int) -> None:
        reason = (
            f"column {column!r} is not a battle id: {n_differing:,} of {n_rows:,} rows "
            "repeat an id with a different vote"
        )
        super().__init__(file, reason, field="battle_id")
        self.column = column
        self.n_differing = n_differing
        self.n_rows = n_rows


# Columns read as text from CSV whatever they look like (ids such as "007" stay intact).
_TEXT_COLUMNS = [c for c in BATTLE_COLUMNS if c != "tstamp"] + [
    alias for aliases in ALIASES.values() for alias in aliases
]


class Chunk(NamedTuple):
    """Raw records of one chunk, their 1-based row numbers, and unparsable records."""

    frame: pd.DataFrame
    rows: npt.NDArray[np.int64]
    errors: list[RowError]  # index = row number


def row_numbers(start: int, n: int) -> npt.NDArray[np.int64]:
    """1-based numbers of ``n`` records following the first ``start``."""
    return np.arange(start + 1, start + n + 1, dtype=np.int64)


def csv_chunks(
    file: PathArg, stream: IO[bytes], chunksize: int, text: Collection[str] = ()
) -> Iterator[Chunk]:
    """Chunks of a CSV file read by pandas; ``text``: more columns read as text (those a
    column map names)."""
    reader = pd.read_csv(
        stream,
        chunksize=chunksize,
        dtype=dict.fromkeys([*_TEXT_COLUMNS, *text], str),
        compression=None,
        encoding="utf-8",
    )
    start = 0
    with reader:
        for frame in reader:
            yield Chunk(frame, row_numbers(start, len(frame)), [])
            start += len(frame)


@contextmanager
def _text(stream: IO[bytes]) -> Iterator[io.TextIOWrapper]:
    """Decode ``stream`` as UTF-8 without closing it afterwards."""
    wrapper = io.TextIOWrapper(stream, encoding="utf-8-sig")
    try:
        yield wrapper
    finally:
        wrapper.detach()


def _record_chunk(numbered: list[tuple[int, Any]], errors: list[RowError]) -> Chunk:
    """A chunk from parsed JSON values and their row numbers; non-objects become errors."""
    objects = [(n, r) for n, r in numbered if isinstance(r, dict)]
    errors += [
        RowError(n, None, None, "record is not a JSON object")
        for n, r in numbered
        if not isinstance(r, dict)
    ]
    rows = np.array([n for n, _ in objects], dtype=np.int64)
    return Chunk(frame_from_records([r for _, r in objects]), rows, errors)


def jsonl_chunks(
    file: PathArg, stream: IO[bytes], chunksize: int, text: Collection[str] = ()
) -> Iterator[Chunk]:
    """Chunks of a JSON Lines file, a record a line; a line not JSON a row error."""
    numbered: list[tuple[int, Any]] = []
    errors: list[RowError] = []
    blank = True
    with _text(stream) as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            blank = False
            try:
                numbered.append((number, loads_record(line)))
            except json.JSONDecodeError as exc:
                detail = f"{exc.msg} at column {exc.colno}"
                errors.append(RowError(number, None, None, "malformed JSON", detail))
            except RecursionError:
                errors.append(RowError(number, None, None, "malformed JSON", "nested too deeply"))
            if len(numbered) + len(errors) >= chunksize:
                yield _record_chunk(numbered, errors)
                numbered, errors = [], []
    if blank:
        raise BattleLogError(file, "file is empty")
    if numbered or errors:
        yield _record_chunk(numbered, errors)


def json_chunks(
    file: PathArg, stream: IO[bytes], chunksize: int, text: Collection[str] = ()
) -> Iterator[Chunk]:
    """Chunks of a JSON array of records, parsed whole."""
    with _text(stream) as decoded:
        content = decoded.read()
    if not content.strip():
        raise BattleLogError(file, "file is empty")
    try:
        data = loads_record(content)
    except json.JSONDecodeError as exc:
        detail = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise BattleLogError(file, "malformed JSON", detail=detail) from None
    except RecursionError:
        raise BattleLogError(file, "malformed JSON", detail="nested too deeply") from None
    del content
    if not isinstance(data, list):
        kind = type(data).__name__
        raise BattleLogError(file, f"expected a JSON array of battle records, not a {kind}")
    for first in range(0, max(len(data), 1), chunksize):
        yield _record_chunk(list(enumerate(data[first : first + chunksize], first + 1)), [])


def parquet_chunks(
    file: PathArg, stream: IO[bytes], chunksize: int, text: Collection[str] = ()
) -> Iterator[Chunk]:
    """Chunks of a Parquet file's record batches, struct columns flattened."""
    parquet = open_parquet(stream)
    batches = parquet.iter_batches(batch_size=chunksize)
    start = 0
    # An empty file has no batches, but its columns still count.
    for batch in batches if parquet.metadata.num_rows else [parquet.schema_arrow.empty_table()]:
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        while any(pa.types.is_struct(f.type) for f in table.schema):
            table = table.flatten()  # struct columns become dotted names, one level a pass
        frame = table.to_pandas()
        yield Chunk(frame, row_numbers(start, len(frame)), [])
        start += len(frame)
