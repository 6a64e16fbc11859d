"""Leaderboards answered as tables: the ``.csv`` and ``.parquet`` routes beside each board.

Each board route (``/v1/leaderboard``, ``/v1/users/{user_id}/leaderboard``) has two file
routes, ``PATH.csv`` and ``PATH.parquet``, each declaring the one media type it answers,
so that a client generated from ``/openapi.json`` reads each form as what it is. The board
route itself still answers ``?format=csv`` (or ``parquet``), as docs/SPEC.md section 4
says; the parameter is left out of the schema, where it would make one operation answer
three media types (a generated client parses them all as its first), and the three are
declared on that route's 200 all the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from ranking.io.exports import MEDIA_TYPES, TABLE_FORMATS, TableFormat, leaderboard_bytes

__all__ = [
    "FormatQuery",
    "TABLE_RESPONSE",
    "add_file_routes",
    "file_response",
    "table_response",
]

#: ``?format=``: the JSON document (default), or the board's rows as CSV or Parquet.
FormatQuery = Annotated[
    Literal["json", "csv", "parquet"],
    Query(
        alias="format",
        include_in_schema=False,  # the .csv and .parquet routes are the declared forms
        description="json (default), or the board's rows (one a model, best first, with "
        "the odds where it has them; docs/SPEC.md section 5) as csv or parquet",
    ),
]

#: What the body of each table format is, in the OpenAPI document.
_SCHEMAS: dict[TableFormat, dict[str, str]] = {
    "csv": {"type": "string"},
    "parquet": {"type": "string", "format": "binary"},
}


def _media(table_format: TableFormat) -> str:
    return MEDIA_TYPES[table_format].split(";")[0]


#: The board route's 200: its JSON document (the route's response model), or with
#: ``?format=csv`` or ``parquet`` its rows as that file.
TABLE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the leaderboard; with ?format=csv or parquet, its rows as that file "
        "(the same as the route's .csv and .parquet forms)",
        "content": {_media(f): {"schema": _SCHEMAS[f]} for f in TABLE_FORMATS},
    }
}


def file_response(table_format: TableFormat) -> dict[int | str, dict[str, Any]]:
    """The 200 of a ``.csv`` or ``.parquet`` route: that media type, and nothing else.

    Parameters
    ----------
    table_format : {"csv", "parquet"}
        The route's format.

    Returns
    -------
    dict
        A ``responses=`` entry for status 200.
    """
    return {
        200: {
            "description": f"the leaderboard's rows as a {table_format.upper()} file: one "
            "row a model, best first (docs/SPEC.md section 5, exports)",
            "content": {_media(table_format): {"schema": _SCHEMAS[table_format]}},
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


def add_file_routes(
    router: APIRouter,
    path: str,
    handler: Callable[[TableFormat], Callable[..., Awaitable[Response]]],
    *,
    name: str,
    summary: str,
    description: str,
    error_responses: dict[int | str, dict[str, Any]],
) -> None:
    """Add ``PATH.csv`` and ``PATH.parquet`` to ``router``, each declaring its one type.

    Parameters
    ----------
    router : APIRouter
        The board route's router.
    path : str
        The board route's path (``/leaderboard``, ``/{user_id}/leaderboard``).
    handler : callable
        The handler of the route answering the board as a given format.
    name, summary, description : str
        The operation's name (the format is appended), summary and description; ``{FORMAT}``
        in ``summary`` and ``description`` stands for ``CSV`` or ``PARQUET``.
    error_responses : dict
        The error statuses the route answers (:func:`service.api.schemas.errors.errors`).
    """
    for table_format in TABLE_FORMATS:
        upper = table_format.upper()
        router.add_api_route(
            f"{path}.{table_format}",
            handler(table_format),
            methods=["GET"],
            name=f"{name}_{table_format}",
            summary=summary.replace("{FORMAT}", upper),
            description=description.replace("{FORMAT}", upper),
            response_class=Response,
            responses={**file_response(table_format), **error_responses},
        )
