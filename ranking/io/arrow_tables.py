"""Battle-log files as Arrow tables, a block at a time: the columnar reader's formats.

CSV is cut into blocks of whole lines, each parsed by Arrow with every column as text
(``tstamp`` as a number), so that ids such as ``"007"`` stay intact; text that pandas reads
as missing (``""``, ``"NA"``, ...) is kept as text, for :func:`missing` to find, in the
columns where the battle frame needs it (Arrow would look up every value); JSON Lines likewise,
its ISO dates read back as text, and a block nested deeper than :data:`MAX_JSON_DEPTH`
never handed to Arrow; Parquet in record batches. What Arrow cannot read as the
row path would raises :class:`Fallback`, and the file is read again by rows.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterator
from typing import IO, Any, TypeAlias

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

__all__ = [
    "BLOCK_BYTES",
    "MAX_JSON_DEPTH",
    "NA_TEXT",
    "Fallback",
    "Stream",
    "csv_tables",
    "jsonl_tables",
    "missing",
    "open_parquet",
    "parquet_tables",
]

#: Bytes of text parsed at a time (CSV and JSON Lines).
BLOCK_BYTES = 16 << 20
#: Bytes of a block that Arrow parses at a time, in parallel.
_PARSE_BYTES = 4 << 20
#: What ``pandas.read_csv`` reads as missing by default, for the same answer on both paths.
_NA_VALUES = [
    *("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"),
    *("1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"),
]
#: The same, as a set of Python strings and as Arrow's.
NA_TEXT = frozenset(_NA_VALUES)
_NA_ARRAY = pa.array(_NA_VALUES, pa.string())
#: Bytes of the longest of them, and the first bytes of those not empty.
_NA_LONGEST = max(len(v.encode()) for v in _NA_VALUES)
_NA_FIRST = np.zeros(256, dtype=bool)
_NA_FIRST[[v.encode()[0] for v in _NA_VALUES if v]] = True
#: Columns Arrow converts as it reads a CSV block (text that is not a number in
#: ``tstamp`` fails the block, which then goes by rows); every other one is text, the
#: battle frame's text columns as it keeps them (large strings).
_CSV_TYPES = {
    "tstamp": pa.float64(),
    **dict.fromkeys(("battle_id", "user_id", "prompt"), pa.large_string()),
}
#: A file as read: Arrow's own (plain files), or Python's gzip stream.
Stream: TypeAlias = pa.NativeFile | gzip.GzipFile


class Fallback(Exception):
    """The fast path cannot decide this file: it is to be read again by rows."""


# -- formats to Arrow tables ----------------------------------------------------------------


def _csv_header(prefix: bytes) -> list[str]:
    """The column names of a CSV file from its first bytes (checked against Arrow's)."""
    if b"\n" not in prefix:
        raise Fallback("no header line in the first bytes")
    text = prefix.decode("utf-8-sig", errors="replace")
    names = next(csv.reader(io.StringIO(text, newline="")), [])
    if not names or len(set(names)) < len(names) or not all(names):
        raise Fallback("empty or repeated column names")
    return names


def csv_tables(stream: Stream, chunksize: int) -> Iterator[pa.Table]:
    """Blocks of whole lines, each parsed by Arrow on all cores, every column as text.

    Cutting at a line end inside a quoted value leaves a block that Arrow refuses (an
    unterminated quote, or a row of the wrong width), so such a file goes by rows. Each
    block is checked to be UTF-8 as a whole (quicker than value by value). Text is never
    missing here: :func:`missing` finds pandas' missing values in it.
    """
    convert = pacsv.ConvertOptions(
        column_types=None, null_values=_NA_VALUES, strings_can_be_null=False, check_utf8=False
    )
    names: list[str] = []
    for number, block in enumerate(_line_blocks(stream)):
        _check_utf8(block)
        if number == 0:
            names = _csv_header(block.slice(0, min(block.size, 1 << 16)).to_pybytes())
            convert.column_types = {n: _CSV_TYPES.get(n, pa.string()) for n in names}
        read = pacsv.ReadOptions(
            column_names=names, skip_rows=int(number == 0), block_size=_PARSE_BYTES
        )
        table = pacsv.read_csv(block, read_options=read, convert_options=convert)
        if table.column_names != names:
            raise Fallback("header read differently")
        yield table


def missing(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A text column of a CSV block with what pandas reads as missing (``""``, ``"NA"``,
    ``"null"``, ...) as nulls, as ``pandas.read_csv`` reads it.

    Only the values short enough, and that begin as one of those does, are looked up.
    """
    offset: type[np.signedinteger[Any]]
    if pa.types.is_string(column.type):
        offset = np.int32
    elif pa.types.is_large_string(column.type):
        offset = np.int64
    else:
        return column
    chunks = [_missing(chunk, offset) for chunk in column.chunks]
    return pa.chunked_array(chunks, column.type)


def _missing(array: pa.Array, offset: type[np.signedinteger[Any]]) -> pa.Array:
    if not len(array):
        return array
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, offset)[array.offset : array.offset + len(array) + 1]
    lengths = np.diff(offsets)
    rows = np.flatnonzero(lengths <= _NA_LONGEST)
    filled = lengths[rows] > 0
    if filled.any():
        first = np.frombuffer(data_buffer, np.uint8)[offsets[rows[filled]]]
        keep = ~filled
        keep[filled] = _NA_FIRST[first]
        rows = rows[keep]
    if rows.size:
        found = pc.is_in(array.take(pa.array(rows)), value_set=_NA_ARRAY)
        rows = rows[pc.fill_null(found, False).to_numpy(zero_copy_only=False)]
    if not rows.size:
        return array
    null = np.zeros(len(array), dtype=bool)
    null[rows] = True
    return pc.if_else(pa.array(null), pa.scalar(None, array.type), array)


def _check_utf8(block: pa.Buffer) -> None:
    """:class:`Fallback` unless ``block`` is UTF-8 text (then so is each value in it: the
    delimiters, quotes and line ends that cut it into values are ASCII)."""
    offsets = pa.array([0, block.size], pa.int64()).buffers()[1]
    text = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, block])
    try:
        text.cast(pa.large_string())
    except pa.ArrowInvalid:
        raise Fallback("not UTF-8 text") from None


def _line_blocks(stream: Stream) -> Iterator[pa.Buffer]:
    """The stream in blocks of whole lines (Arrow's files without copying them)."""
    if not isinstance(stream, pa.NativeFile):
        rest = b""
        while data := stream.read(BLOCK_BYTES):
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut:
                yield pa.py_buffer(data[:cut])
            rest = data[cut:]
        if rest.strip():
            yield pa.py_buffer(rest)
        return
    eof = False
    while not eof:
        block = stream.read_buffer(BLOCK_BYTES)
        eof = block.size < BLOCK_BYTES
        cut = _after_last_line(block)
        while cut == 0 and not eof:  # a line longer than a block
            more = stream.read_buffer(BLOCK_BYTES)
            eof = more.size < BLOCK_BYTES
            block = pa.py_buffer(block.to_pybytes() + more.to_pybytes())
            cut = _after_last_line(block)
        if eof:
            cut = block.size
        elif cut < block.size:
            stream.seek(cut - block.size, 1)  # the rest of the last line: read with the next
        part = block.slice(0, cut)
        if part.size > 4096 or part.to_pybytes().strip():
            yield part


def _after_last_line(block: pa.Buffer) -> int:
    """Bytes of ``block`` up to and including its last newline (0 if none)."""
    data = np.frombuffer(block, np.uint8)
    for tail in (1 << 16, data.size):
        ends = np.flatnonzero(data[-tail:] == 10)
        if ends.size:
            return int(data.size - min(tail, data.size) + ends[-1] + 1)
    return 0


#: Deepest nesting of arrays and objects handed to Arrow's JSON reader, whose parser
#: recurses without a bound (30,000 nested ``[`` in a label crash the process): a block
#: nested deeper goes by rows, where Python's ``json`` names the row ("nested too deeply").
MAX_JSON_DEPTH = 64


def _json_depth(block: pa.Buffer) -> int:
    """An upper bound on how deep Arrow's parser nests in ``block`` (JSON Lines).

    Brackets (``[``, ``{`` in, ``]``, ``}`` out) count outside strings, a string being
    what lies between two quotes not escaped (a backslash escapes the byte after it, but
    a line end) on one line: a line end ends any string, as the parser refuses one there, and Arrow
    parses pieces of a block in parallel from line starts. Nesting counts across lines
    (Arrow reads an object over several lines), from the lowest level met before, so stray
    closers never hide what follows them. Invalid JSON may be overestimated (the block
    then goes by rows, which decide it exactly), never underestimated. One compiled pass
    over the bytes (:func:`_depth_kernel`), a few milliseconds a block.
    """
    return int(_depth_kernel(np.frombuffer(block, np.uint8)))


@numba.njit(cache=True, nogil=True)
def _depth_kernel(data: np.ndarray) -> int:  # pragma: no cover - compiled
    depth = level = low = 0
    in_string = escaped = False
    for byte in data:
        if byte == 0x0A:  # a line end ends any string (and any escape)
            in_string = escaped = False
        elif escaped:
            escaped = False
        elif byte == 0x5C:  # backslash
            escaped = True
        elif byte == 0x22:  # quote
            in_string = not in_string
        elif not in_string:
            folded = byte | 0x20
            if folded == 0x7B:  # [ or {
                level += 1
                if level - low > depth:
                    depth = level - low
            elif folded == 0x7D:  # ] or }
                level -= 1
                if level < low:
                    low = level
    return depth


def _read_json(block: pa.Buffer, schema: pa.Schema | None = None) -> pa.Table:
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    return pajson.read_json(pa.BufferReader(block), parse_options=options)


def jsonl_tables(stream: Stream, chunksize: int) -> Iterator[pa.Table]:
    """Blocks of whole lines, each parsed by Arrow; ISO dates kept as text."""
    for block in _line_blocks(stream):
        if _json_depth(block) > MAX_JSON_DEPTH:
            raise Fallback(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        table = _read_json(block)
        # Arrow reads ISO dates in strings as time stamps: read those columns as text again.
        stamps = [f for f in table.schema if pa.types.is_temporal(f.type)]
        if stamps:
            names = table.column_names
            table = _read_json(block, pa.schema([(f.name, pa.string()) for f in stamps]))
            table = table.select(names)
        yield table


def open_parquet(stream: Stream | IO[bytes]) -> pq.ParquetFile:
    """A Parquet file on ``stream`` (a gzip-compressed one read whole, to seek in it)."""
    source = pa.BufferReader(stream.read()) if isinstance(stream, gzip.GzipFile) else stream
    return pq.ParquetFile(source)


def parquet_tables(stream: Stream, chunksize: int) -> Iterator[pa.Table]:
    """Record batches of at most ``chunksize`` rows."""
    for batch in open_parquet(stream).iter_batches(batch_size=chunksize):
        yield pa.Table.from_batches([batch])
