"""Leaderboards answered as tables: ``?format=csv`` (or ``parquet``) on the board routes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from fastapi import Query, Response

from ranking.io.exports import MEDIA_TYPES, TableFormat, leaderboard_bytes

__all__ = ["FormatQuery", "TABLE_RESPONSE", "table_response"]

#: ``?format=``: the JSON document (default), or the board's rows as CSV or Parquet.
FormatQuery = Annotated[
    Literal["json", "csv", "parquet"],
    Query(
        alias="format",
        description="json (default), or the board's rows (one a model, best first, with "
        "the odds where it has them; docs/SPEC.md section 5) as csv or parquet",
    ),
]

#: The 200 answer's media types, for the OpenAPI document.
TABLE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the leaderboard; with ?format=csv or parquet, its rows as that file",
        "content": {media.split(";")[0]: {} for media in MEDIA_TYPES.values()},
    }
}


def table_response(document: Mapping[str, Any], table_format: TableFormat, name: str) -> Response:
    """``document``'s rows as a CSV or Parquet file, offered as ``name`` plus its suffix.

    ``name`` is fixed text of the route (never a user's id, which may not fit a header).
    """
    return Response(
        leaderboard_bytes(document, table_format),
        media_type=MEDIA_TYPES[table_format],
        headers={"Content-Disposition": f'attachment; filename="{name}.{table_format}"'},
    )
