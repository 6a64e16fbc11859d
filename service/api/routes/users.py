"""``GET /v1/users/{user_id}/leaderboard``: one user's leaderboard, for that user only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path

from service.api.deps import BearerDep, EngineDep, SettingsDep, TokenQuery, can_read_user
from service.api.schemas import UserLeaderboardPublic

router = APIRouter(prefix="/v1/users", tags=["users"])

UserId = Annotated[str, Path(min_length=1, max_length=256, description="the user's id")]


@router.get("/{user_id}/leaderboard", response_model=UserLeaderboardPublic)
def read_user_leaderboard(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
    method: Literal["bt", "elo"] = "bt",
) -> dict[str, Any]:
    """One user's leaderboard and its agreement with the aggregate.

    Needs that user's read token (returned when their first vote was ingested) or the
    admin key.
    """
    can_read_user(engine, settings, user_id, token, bearer)
    return engine.user_leaderboard(user_id, method)
