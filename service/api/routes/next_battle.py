"""``GET /v1/users/{user_id}/next-battle`` and ``POST /v1/next-battle``: the pair to vote on.

The pair whose vote is expected to tell most about which model is this person's best
(docs/SPEC.md section 5): read off the user's personal board (that user's token, as
their leaderboard), or off the ranking predicted from someone's queries (anyone, the body
of ``POST /v1/recommend``).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from service.api.deps import BearerDep, EngineDep, SettingsDep, TokenQuery, UserId, can_read_user
from service.api.routes.recommend import recommend
from service.api.schemas import NextBattleIn, NextBattlePublic, errors
from service.live.next_battle import last_pair, next_battle_document

router = APIRouter(prefix="/v1", tags=["next-battle"])


@router.get(
    "/users/{user_id}/next-battle",
    response_model=NextBattlePublic,
    response_model_exclude_none=True,
    responses=errors(401, 403, 404, 422, 429, 503),
)
async def read_user_next_battle(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
    target: Literal["best", "ranking"] = "best",
) -> dict[str, Any]:
    """The battle this user should vote on next, from their Bradley-Terry board
    (``target=ranking``: the one that tells most about their whole ranking).

    Needs that user's read token or the admin key, as their leaderboard does.
    """
    can_read_user(engine, settings, user_id, token, bearer)
    board = engine.reads.stored_user_leaderboard(user_id, "bt")
    if board is None:
        board = await run_in_threadpool(engine.user_leaderboard, user_id, "bt")
    last = last_pair(await run_in_threadpool(engine.history.user_battles, user_id))
    return await run_in_threadpool(next_battle_document, board, target, last)


@router.post(
    "/next-battle",
    response_model=NextBattlePublic,
    response_model_exclude_none=True,
    responses=errors(400, 401, 403, 404, 413, 422, 429, 503),
    # anyone may ask; a bearer token is optional (a user's, with their user_id)
    openapi_extra={"security": [{}]},
)
def next_battle(
    body: NextBattleIn,
    engine: EngineDep,
    settings: SettingsDep,
    request: Request,
    bearer: BearerDep = None,
) -> dict[str, Any]:
    """The battle to vote on next for someone known by their queries (and perhaps a few
    votes, or a ``user_id`` with that user's token): read off the ranking ``POST
    /v1/recommend`` gives them."""
    document = recommend(body, engine, settings, request, bearer)
    return next_battle_document(document, body.target, last_pair(body.votes))
