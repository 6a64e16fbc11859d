"""``GET /v1/users/{user_id}/leaderboard``: one user's leaderboard, for that user only;
``.csv`` and ``.parquet``: its rows.

The common request, valid, authorised and for a board stored for the current version, is
answered by :func:`stored_board` with the stored bytes, before the router
(:class:`~service.api.fast_reads.FastReads`); every other request runs the route as
declared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from ranking.io.exports import TableFormat
from ranking.types import Method
from service.api.deps import (
    BearerDep,
    EngineDep,
    SettingsDep,
    TokenQuery,
    UserId,
    can_read_user,
    may_read_user_async,
    request_bearer,
)
from service.api.fast_reads import FastRead, route_of
from service.api.schemas import UserLeaderboardPublic, errors
from service.api.tables import TABLE_RESPONSE, FormatQuery, add_file_routes, table_response
from service.api.windows import SinceQuery, UntilQuery, parse_window
from service.live.engine import Engine
from service.live.settings import Settings
from service.live.writes import MAX_USER_ID_CHARS

__all__ = ["FAST_READ", "router", "stored_board"]

_METHODS: dict[str, Method] = {"bt": "bt", "elo": "elo"}


async def stored_board(request: Request) -> Response | None:
    """The user's stored board when the request is valid and authorised, else None.

    The parameters are read by the route's own parsers: the query as Starlette parses it
    for FastAPI (``request.query_params``, the last of repeated names winning), the bearer
    credential by the route's :data:`~service.api.deps.BearerDep`
    (:func:`~service.api.deps.request_bearer`); the token is checked by the route's rule
    (:func:`~service.api.deps.may_read_user_async`) and the board read as the route reads
    it (:func:`_stored`). A request this leaves (None) is answered by the route as
    declared, its errors included.
    """
    user_id: str = request.path_params["user_id"]
    if not 0 < len(user_id) <= MAX_USER_ID_CHARS:
        return None
    query = request.query_params
    method = _METHODS.get(query.get("method", "bt"))
    if method is None or query.get("format", "json") != "json" or {"since", "until"} & set(query):
        return None
    engine: Engine = request.app.state.engine
    settings: Settings = request.app.state.settings
    token, bearer = query.get("token"), await request_bearer(request)
    if not await may_read_user_async(engine, settings, user_id, token, bearer):
        return None
    return await _stored(engine, user_id, method)


async def _stored(engine: Engine, user_id: str, method: Method) -> Response | None:
    """The user's board stored for the current version, its bytes as stored, else None:
    one store read, awaited on the event loop."""
    body = await engine.reads.stored_user_leaderboard_body(user_id, method)
    return None if body is None else Response(body, media_type="application/json")


router = APIRouter(prefix="/v1/users", tags=["users"])


@router.get(
    "/{user_id}/leaderboard",
    response_model=UserLeaderboardPublic,
    responses={**TABLE_RESPONSE, **errors(401, 403, 404, 422, 429, 503)},
)
async def read_user_leaderboard(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
    method: Literal["bt", "elo"] = "bt",
    table_format: FormatQuery = "json",
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> Any:
    """One user's leaderboard and its agreement with the aggregate.

    Needs that user's read token (returned when their first vote was ingested) or the
    admin key. Its rows as a file: ``leaderboard.csv`` and ``leaderboard.parquet`` beside
    it (or ``?format=csv|parquet``). With ``since`` or ``until``, the board of the user's
    votes in that window (``[since, until)``, not widened: they are the user's own).
    """
    can_read_user(engine, settings, user_id, token, bearer)
    if since is not None or until is not None:
        window = parse_window(since, until)
        document = await run_in_threadpool(engine.user_leaderboard, user_id, method, window)
        if table_format == "json":
            return document
        return table_response(document, table_format, f"my-leaderboard-{method}")
    if table_format != "json":
        document = await run_in_threadpool(engine.user_leaderboard, user_id, method)
        return table_response(document, table_format, f"my-leaderboard-{method}")
    # One store read, awaited on the event loop; a refit goes to a thread.
    stored = await _stored(engine, user_id, method)
    if stored is not None:
        return stored
    return await run_in_threadpool(engine.user_leaderboard, user_id, method)


def _file_route(table_format: TableFormat) -> Callable[..., Awaitable[Response]]:
    """The handler of the route answering the board as a ``table_format`` file."""

    async def read_user_leaderboard_file(
        user_id: UserId,
        engine: EngineDep,
        settings: SettingsDep,
        bearer: BearerDep,
        token: TokenQuery = None,
        method: Literal["bt", "elo"] = "bt",
        since: SinceQuery = None,
        until: UntilQuery = None,
    ) -> Response:
        can_read_user(engine, settings, user_id, token, bearer)
        window = parse_window(since, until)
        document = await run_in_threadpool(engine.user_leaderboard, user_id, method, window)
        return table_response(document, table_format, f"my-leaderboard-{method}")

    return read_user_leaderboard_file


add_file_routes(
    router,
    "/{user_id}/leaderboard",
    _file_route,
    name="read_user_leaderboard",
    summary="User Leaderboard as {FORMAT}",
    description="One user's leaderboard's rows as a {FORMAT} file (docs/SPEC.md section 5, "
    "exports); the credentials of ``GET /v1/users/{user_id}/leaderboard``.",
    error_responses=errors(401, 403, 404, 422, 429, 503),
)


#: The common case of this route, answered before the router (:mod:`service.api.fast_reads`).
FAST_READ: FastRead = (route_of(router.routes, read_user_leaderboard), stored_board)
