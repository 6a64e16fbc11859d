"""``GET /v1/users/{user_id}/leaderboard``: one user's leaderboard, for that user only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from service.api.deps import BearerDep, EngineDep, SettingsDep, TokenQuery, can_read_user
from service.api.schemas import UserLeaderboardPublic, errors
from service.engine import MAX_USER_ID_CHARS

router = APIRouter(prefix="/v1/users", tags=["users"])

UserId = Annotated[
    str, Path(min_length=1, max_length=MAX_USER_ID_CHARS, description="the user's id")
]


@router.get(
    "/{user_id}/leaderboard",
    response_model=UserLeaderboardPublic,
    responses=errors(401, 403, 404, 422, 429, 503),
)
async def read_user_leaderboard(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
    method: Literal["bt", "elo"] = "bt",
) -> Any:
    """One user's leaderboard and its agreement with the aggregate.

    Needs that user's read token (returned when their first vote was ingested) or the
    admin key.
    """
    can_read_user(engine, settings, user_id, token, bearer)
    # The fast path, one store read, runs on the event loop; a refit goes to a thread.
    document = engine.stored_user_leaderboard(user_id, method)
    if document is not None:
        return JSONResponse(document)
    return await run_in_threadpool(engine.user_leaderboard, user_id, method)
