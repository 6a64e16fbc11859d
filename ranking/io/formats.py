"""The battle-log formats: one :class:`Format` a suffix, its columnar reader and its rows.

Each format (:data:`FORMATS`) is read by :class:`ranking.io.file_reader.FileReader` in one
way: by its columnar reader (:mod:`ranking.io.arrow_tables`, blocks as Arrow tables,
checked by :mod:`ranking.io.columnar`) when it has one, and by its rows
(:mod:`ranking.io.chunks`) only where the columnar one cannot decide: a file it gives up
on (:class:`~ranking.io.arrow_tables.Fallback`, the first invalid record), or a format
it does not read (JSON arrays).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeAlias

import pyarrow as pa

from ranking.io.arrow_tables import Stream, csv_tables, jsonl_tables, parquet_tables
from ranking.io.chunks import (
    BattleLogError,
    Chunk,
    PathArg,
    csv_chunks,
    json_chunks,
    jsonl_chunks,
    parquet_chunks,
)

__all__ = ["FORMATS", "SUFFIXES", "ChunkReader", "Format", "TableReader", "format_of"]

#: ``(stream, chunksize) -> tables``: a file's blocks as Arrow tables.
TableReader: TypeAlias = Callable[[Stream, int], Iterator[pa.Table]]
#: ``(file, stream, chunksize, text) -> chunks``: a file's raw records, numbered.
ChunkReader: TypeAlias = Callable[[PathArg, IO[bytes], int, Collection[str]], Iterator[Chunk]]


@dataclass(frozen=True)
class Format:
    """One battle-log format.

    Attributes
    ----------
    suffix : str
        Its file suffix (``".csv"``), before any ``.gz``.
    tables : callable or None
        Its columnar reader (:data:`TableReader`); None where it has none (JSON arrays).
    chunks : callable
        Its reader by rows (:data:`ChunkReader`): where the columnar one cannot decide.
    """

    suffix: str
    tables: TableReader | None
    chunks: ChunkReader


#: The formats by suffix.
FORMATS: dict[str, Format] = {
    ".csv": Format(".csv", csv_tables, csv_chunks),
    ".json": Format(".json", None, json_chunks),
    ".jsonl": Format(".jsonl", jsonl_tables, jsonl_chunks),
    ".parquet": Format(".parquet", parquet_tables, parquet_chunks),
}
#: Accepted file suffixes (case-insensitive): each format, plain or gzip-compressed.
SUFFIXES: tuple[str, ...] = tuple(FORMATS) + tuple(f"{s}.gz" for s in FORMATS)


def format_of(file: PathArg) -> tuple[Format, bool]:
    """The format of ``file`` by its suffix, and whether it is gzip-compressed.

    Raises
    ------
    BattleLogError
        For a suffix not in :data:`SUFFIXES`.
    """
    name = os.path.basename(os.fspath(file)).lower()
    gz = name.endswith(".gz")
    suffix = Path(name[:-3] if gz else name).suffix
    if suffix not in FORMATS:
        accepted = ", ".join(SUFFIXES)
        raise BattleLogError(file, f"unknown file type; accepted suffixes are {accepted}")
    return FORMATS[suffix], gz
