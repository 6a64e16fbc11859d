"""Leaderboards as tables: CSV and Parquet, for spreadsheets, dashboards and notebooks.

A leaderboard document (docs/SPEC.md section 3, aggregate or personal) becomes one row a
model, best first, with the columns of its rows: ``model``, ``rating``, ``lower``,
``upper``, ``rank``, ``battles``, ``wins``, ``losses``, ``ties``, then the odds
(``p_best``, ``rank_lower``, ``rank_upper``) where the rows carry them. A board with a
minimum of votes adds its provisional models after the ranked ones, with no rating,
interval or rank, and a ``provisional`` column saying which rows they are (CSV writes it
``true``/``false``, as JSON does; Parquet as booleans). The
document's own fields (``method``, ``interval``, ``confidence``, ``n_battles``,
``user_id`` where there is one) are Parquet metadata; CSV carries the rows only.

CSV is made safe to open in a spreadsheet (OWASP, "CSV injection"): in its text cells
(model names; numbers are never touched, so a negative rating stays a number) control
characters are removed (C0, DEL and C1: ``NUL``, ``ESC``, tab, line breaks, ...) and a
cell that then begins, after any spaces, with ``=``, ``+``, ``-``, ``@`` (or their
full-width forms) gets a leading ``'``, so that no spreadsheet reads it as a formula
(:func:`spreadsheet_text`). Parquet keeps the names exactly.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from typing import Any, Literal

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ranking.types import ODDS_FIELDS, PROVISIONAL_FIELDS

__all__ = [
    "MEDIA_TYPES",
    "TABLE_FORMATS",
    "TableFormat",
    "leaderboard_bytes",
    "leaderboard_frame",
    "spreadsheet_text",
]

TableFormat = Literal["csv", "parquet"]
#: The table formats a leaderboard is exported as.
TABLE_FORMATS: tuple[TableFormat, ...] = ("csv", "parquet")
#: Media types of the formats, for HTTP.
MEDIA_TYPES: dict[TableFormat, str] = {
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}

_ROW_COLUMNS = ("model", "rating", "lower", "upper", "rank", "battles", "wins", "losses", "ties")
_INTEGER_COLUMNS = ("rank", "battles", "wins", "losses", "ties", "rank_lower", "rank_upper")
#: The document's fields kept as Parquet metadata, where present.
_DOCUMENT_FIELDS = ("method", "interval", "confidence", "n_battles", "min_votes", "user_id")
#: Control characters, removed from CSV text cells: C0 (NUL, tab, CR, LF, ESC, ...), DEL, C1.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
#: What makes a spreadsheet read a cell as a formula (OWASP's list, tab and CR included,
#: with the full-width forms some spreadsheets also take).
_FORMULA_START = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")


def spreadsheet_text(text: str) -> str:
    """``text`` as a CSV cell that a spreadsheet shows as text and never evaluates.

    Control characters are removed; then a cell whose first character other than a space
    is one of ``= + - @`` (or a full-width form of them) gets a leading ``'``:
    ``=HYPERLINK(...)`` becomes ``'=HYPERLINK(...)``, ``gpt-4o`` stays as it is.
    """
    text = _CONTROL.sub("", text)
    if text.lstrip(" ")[:1] in _FORMULA_START:
        return "'" + text
    return text


def leaderboard_frame(document: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of a leaderboard document as a frame, best first.

    Parameters
    ----------
    document : mapping
        A leaderboard document: ``models`` (rows of docs/SPEC.md section 3) and, where a
        minimum of votes was applied, ``provisional``.

    Returns
    -------
    pandas.DataFrame
        One row a model. Counts and ranks are nullable integers (a provisional model has
        no rank); ``p_best``, ``rank_lower`` and ``rank_upper`` are there when any row has
        them; ``provisional`` (bool) when the document lists provisional models.
    """
    rows = list(document.get("models", []))
    columns = list(_ROW_COLUMNS)
    if any(all(f in row for f in ODDS_FIELDS) for row in rows):
        columns += ODDS_FIELDS
    provisional = document.get("provisional")
    if provisional is not None:
        rows = [*rows, *({f: row.get(f) for f in PROVISIONAL_FIELDS} for row in provisional)]
    frame = pd.DataFrame.from_records(
        [{column: row.get(column) for column in columns} for row in rows], columns=columns
    )
    frame["model"] = frame["model"].astype("string")
    for column in columns:
        if column in _INTEGER_COLUMNS:
            frame[column] = frame[column].astype("Int64")
        elif column != "model":
            frame[column] = frame[column].astype("Float64")
    if provisional is not None:
        frame["provisional"] = [False] * (len(rows) - len(provisional)) + [True] * len(provisional)
    return frame


def leaderboard_bytes(document: Mapping[str, Any], table_format: TableFormat) -> bytes:
    """A leaderboard document as a CSV (UTF-8, with a header) or Parquet file.

    Raises
    ------
    ValueError
        On a format other than ``"csv"`` or ``"parquet"``.
    """
    frame = leaderboard_frame(document)
    if table_format == "csv":
        for column in frame.columns:
            if frame[column].dtype == "string":  # text cells only: numbers stay numbers
                frame[column] = frame[column].map(spreadsheet_text, na_action="ignore")
        if "provisional" in frame:  # JSON's spelling, not Python's True/False
            frame["provisional"] = frame["provisional"].map({True: "true", False: "false"})
        return frame.to_csv(index=False, lineterminator="\n").encode("utf-8")
    if table_format == "parquet":
        table = pa.Table.from_pandas(frame, preserve_index=False)
        meta = {f: document[f] for f in _DOCUMENT_FIELDS if document.get(f) is not None}
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}), b"leaderboard": json.dumps(meta).encode()}
        )
        sink = io.BytesIO()
        pq.write_table(table, sink)
        return sink.getvalue()
    raise ValueError(f"Argument 'table_format' must be 'csv' or 'parquet', not {table_format!r}.")
