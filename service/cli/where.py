"""``--where COL=VALUE``, checked before a battle log is read.

A column that is part of the vote or private (``user_id``, ``prompt``, ...) is refused
without looking at any file; a column missing from the header of every log is refused
after reading the headers alone (a CSV's first line, a Parquet file's schema), not the
135,000 rows under them. What only the rows can tell (a value that does not fit the
column's type, a column a JSON log may hold in some rows) is left to
:func:`ranking.io.frames.filter_battles` once they are read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ranking.io.column_map import BATTLE_COLUMNS
from ranking.io.frames import PRIVATE_COLUMNS, parse_where
from service.cli.errors import UsageError

__all__ = ["check_where", "header_columns"]


def check_where(expressions: Sequence[str], paths: Sequence[str]) -> list[tuple[str, str]]:
    """The ``(column, value)`` conditions of ``--where``, refused early where they cannot work.

    Parameters
    ----------
    expressions : sequence of str
        The ``--where`` options as given (``["math=1", "lang=de"]``).
    paths : sequence of str
        The battle logs the command is about to read.

    Returns
    -------
    list of (str, str)
        Each condition's column and value, in the order given.

    Raises
    ------
    UsageError
        Naming the ``--where`` option and its value: for an expression that is not
        ``COLUMN=VALUE``, a column that is part of the vote or private, or a column that
        no log's header holds (when every log's header can be read without its rows);
        with the label columns where the headers tell them.
    """
    where = []
    for expression in expressions:
        try:
            where.append(parse_where(expression))
        except ValueError:
            raise UsageError(
                f"--where {expression!r} must look like COLUMN=VALUE, e.g. math=1"
            ) from None
    if not where:
        return where
    headers = [header_columns(path) for path in paths]
    known = None  # the columns of every log, where each header tells them
    if all(header is not None for header in headers):
        known = {column for header in headers if header is not None for column in header}
    labels = ""
    if known is not None:
        listed = ", ".join(sorted(known - set(BATTLE_COLUMNS) - PRIVATE_COLUMNS)) or "none"
        labels = f" (the label columns of {', '.join(paths)}: {listed})"
    for expression, (column, _) in zip(expressions, where, strict=True):
        if column in BATTLE_COLUMNS or column in PRIVATE_COLUMNS:
            raise UsageError(
                f"--where {expression!r}: {column!r} cannot be filtered on: only label "
                "columns can, never the vote itself or what identifies a person, a text or "
                f"a battle{labels}"
            )
        if known is not None and column not in known:
            raise UsageError(
                f"--where {expression!r}: column {column!r} is not in the battles{labels}"
            )
    return where


def header_columns(path: str) -> list[str] | None:
    """The columns of a battle log, read from its header alone; None where that cannot
    tell them all.

    A CSV file's (optionally gzipped) first line, or a Parquet file's schema, struct
    columns named as reading flattens them (``meta.lang``). JSON and JSON Lines records
    may each hold other keys, so they and a file that cannot be opened or parsed (the
    reader will say why) give None.

    Parameters
    ----------
    path : str
        A battle log, named with one of the suffixes :func:`ranking.io.ingest.read_battles`
        reads.
    """
    name = os.path.basename(path).lower()
    gz = name.endswith(".gz")
    suffix = os.path.splitext(name[:-3] if gz else name)[1]
    try:
        if suffix == ".csv":
            header = pd.read_csv(path, nrows=0, compression="gzip" if gz else None)
            columns = [str(c) for c in header.columns]
        elif suffix == ".parquet" and not gz:
            columns = _flat_names(pq.read_schema(path))
        else:
            return None
    except (OSError, ValueError, EOFError, UnicodeDecodeError):
        return None
    return columns


def _flat_names(schema: pa.Schema) -> list[str]:
    """The column names of ``schema`` with struct fields flattened to dotted names."""
    names: list[str] = []

    def visit(field: pa.Field, prefix: str) -> None:
        if pa.types.is_struct(field.type):
            for child in field.type:
                visit(child, f"{prefix}{field.name}.")
        else:
            names.append(prefix + field.name)

    for field in schema:
        visit(field, "")
    return names
