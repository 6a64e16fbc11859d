"""``GET /v1/leaderboard``: the aggregate leaderboard.

A request without a query string (the Bradley-Terry board, the most read answer) is
answered by :func:`published_board` with the version's encoded bytes, before the router
(:class:`~service.api.fast_reads.FastReads`); any other runs the route as declared.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from starlette.concurrency import run_in_threadpool

from ranking.io.frames import parse_where
from service.api.deps import EngineDep
from service.api.fast_reads import FastRead, route_of
from service.api.schemas import PublicBoardPublic, errors
from service.api.tables import TABLE_RESPONSE, FormatQuery, table_response
from service.engine import Engine

__all__ = ["FAST_READ", "published_board", "router"]


async def published_board(request: Request) -> Response | None:
    """The Bradley-Terry board of the served version for a request with no query, else None."""
    if request.scope["query_string"]:
        return None
    engine: Engine = request.app.state.engine
    return Response(engine.served().bt_json, media_type="application/json")


router = APIRouter(prefix="/v1", tags=["leaderboard"])


@router.get(
    "/leaderboard",
    response_model=PublicBoardPublic,
    responses={**TABLE_RESPONSE, **errors(422, 429, 503)},
)
async def read_leaderboard(
    engine: EngineDep,
    method: Literal["bt", "elo"] = "bt",
    where: Annotated[
        list[str] | None,
        Query(description="segment: COL=VALUE on a label column, repeatable"),
    ] = None,
    table_format: FormatQuery = "json",
) -> Any:
    """The aggregate leaderboard: Bradley-Terry of the served version, or live Elo.

    Only models with at least ``PLB_MIN_MODEL_VOTES`` votes are ranked; the others are
    listed under ``provisional`` with their counts. ``?format=csv`` (or ``parquet``)
    answers its rows as a file.
    """
    if method == "bt" and not where and table_format == "json":
        # The most read answer: encoded once a version, served without a thread hop.
        return Response(engine.served().bt_json, media_type="application/json")
    try:
        conditions = [parse_where(w) for w in where or []]
    except ValueError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"where: {error}") from None
    document = await run_in_threadpool(engine.leaderboard, method, conditions)
    if table_format == "json":
        return document
    return table_response(document, table_format, f"leaderboard-{method}")


#: The common case of this route, answered before the router (:mod:`service.api.fast_reads`).
FAST_READ: FastRead = (route_of(router.routes, read_leaderboard), published_board)
