"""``GET /v1/leaderboard``: the aggregate leaderboard; ``.csv`` and ``.parquet``: its rows.

A request without a query string (the Bradley-Terry board, the most read answer) is
answered by :func:`published_board` with the version's encoded bytes, before the router
(:class:`~service.api.fast_reads.FastReads`); any other runs the route as declared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from starlette.concurrency import run_in_threadpool

from ranking.io.exports import TableFormat
from ranking.io.frames import parse_where
from service.api.deps import EngineDep
from service.api.fast_reads import FastRead, route_of
from service.api.schemas import PublicBoardPublic, errors
from service.api.tables import TABLE_RESPONSE, FormatQuery, add_file_routes, table_response
from service.api.windows import SinceQuery, UntilQuery, parse_window
from service.live.engine import Engine
from service.pipeline.style import public_style_board

__all__ = ["FAST_READ", "published_board", "router"]


async def published_board(request: Request) -> Response | None:
    """The Bradley-Terry board of the served version for a request with no query, else None."""
    if request.scope["query_string"]:
        return None
    engine: Engine = request.app.state.engine
    return Response(engine.versions.served().bt_json, media_type="application/json")


router = APIRouter(prefix="/v1", tags=["leaderboard"])

#: ``?method=``: Bradley-Terry of the served version, or live Elo.
MethodQuery = Literal["bt", "elo"]
#: ``?where=``: a segment, ``COL=VALUE`` on a label column, repeatable.
WhereQuery = Annotated[
    list[str] | None,
    Query(description="segment: COL=VALUE on a label column, repeatable"),
]
#: ``?style=``: the raw board, or the one with the answers' style held equal.
StyleQuery = Annotated[
    Literal["raw", "control"],
    Query(
        description="control: the Bradley-Terry board of the fit with the answers' style "
        "(length, headers, lists, bold) held equal, its coefficients and the raw board of "
        "the same votes beside it; only when the fit's votes carry answers"
    ),
]


def _style_board(engine: Engine, method: str, *conditions: Any) -> dict[str, Any]:
    """The fit's style-controlled board as public boards show it (422 when the fit has
    none, or with ``method=elo``, ``where``, ``since`` or ``until``)."""
    if method != "bt":
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"style: 'control' is a Bradley-Terry board; method {method!r} has none",
        )
    if any(conditions):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "style: 'control' answers the fit's whole board; it takes no where, since or until",
        )
    document = engine.fit.style_control
    if document is None:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "style: this service's fit has no style-controlled board: its votes carry no "
            "answers (answer_a, answer_b)",
        )
    board = public_style_board(document, engine.settings.min_model_votes)
    return {**board, "version": engine.versions.served().version}


async def _board(
    engine: Engine,
    method: MethodQuery,
    where: list[str] | None,
    since: str | None = None,
    until: str | None = None,
) -> dict[str, Any]:
    """The board of ``method`` on the segment ``where`` and the window ``since``-``until``
    (422 naming a bad condition or instant)."""
    try:
        conditions = [parse_where(w) for w in where or []]
    except ValueError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"where: {error}") from None
    window = parse_window(since, until)
    document: dict[str, Any] = await run_in_threadpool(
        engine.reads.leaderboard, method, conditions, window
    )
    return document


@router.get(
    "/leaderboard",
    response_model=PublicBoardPublic,
    responses={**TABLE_RESPONSE, **errors(422, 429, 503)},
)
async def read_leaderboard(
    engine: EngineDep,
    method: MethodQuery = "bt",
    where: WhereQuery = None,
    table_format: FormatQuery = "json",
    since: SinceQuery = None,
    until: UntilQuery = None,
    style: StyleQuery = "raw",
) -> Any:
    """The aggregate leaderboard: Bradley-Terry of the served version, or live Elo.

    Only models with at least ``PLB_MIN_MODEL_VOTES`` votes are ranked; the others are
    listed under ``provisional`` with their counts. Its rows as a file:
    ``/v1/leaderboard.csv`` and ``/v1/leaderboard.parquet`` (or ``?format=csv|parquet``).
    ``?style=control``: the fit's board with the answers' style held equal, with
    ``style_control`` (its coefficients, the raw board of the same votes).
    """
    if style == "control":  # the fit's board with the answers' style held equal
        document = _style_board(engine, method, where, since, until)
        if table_format == "json":
            return document
        return table_response(document, table_format, "leaderboard-bt-style")
    if method == "bt" and not where and table_format == "json" and since is until is None:
        # The most read answer: encoded once a version, served without a thread hop.
        return Response(engine.versions.served().bt_json, media_type="application/json")
    document = await _board(engine, method, where, since, until)
    if table_format == "json":
        return document
    return table_response(document, table_format, f"leaderboard-{method}")


def _file_route(table_format: TableFormat) -> Callable[..., Awaitable[Response]]:
    """The handler of the route answering the board as a ``table_format`` file."""

    async def read_leaderboard_file(
        engine: EngineDep,
        method: MethodQuery = "bt",
        where: WhereQuery = None,
        since: SinceQuery = None,
        until: UntilQuery = None,
        style: StyleQuery = "raw",
    ) -> Response:
        if style == "control":
            board = _style_board(engine, method, where, since, until)
            return table_response(board, table_format, "leaderboard-bt-style")
        document = await _board(engine, method, where, since, until)
        return table_response(document, table_format, f"leaderboard-{method}")

    return read_leaderboard_file


add_file_routes(
    router,
    "/leaderboard",
    _file_route,
    name="read_leaderboard",
    summary="Leaderboard as {FORMAT}",
    description="The aggregate leaderboard's rows as a {FORMAT} file (docs/SPEC.md section 5, "
    "exports), with the parameters of ``GET /v1/leaderboard``.",
    error_responses=errors(422, 429, 503),
)


#: The common case of this route, answered before the router (:mod:`service.api.fast_reads`).
FAST_READ: FastRead = (route_of(router.routes, read_leaderboard), published_board)
