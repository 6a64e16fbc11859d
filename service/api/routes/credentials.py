"""A user's credentials: rotate the read token; make, revoke and read a share id.

* ``POST /v1/users/{user_id}/token``: a new read token, the old one refused at once.
* ``POST /v1/users/{user_id}/share``: a new share id of the user's published board.
* ``DELETE /v1/users/{user_id}/share``: revoke it.
* ``GET /v1/shared/{share_id}``: the board a share id reads, to anyone holding it.

The first three need the user's current read token (``?token=`` or ``Authorization:
Bearer``) or the admin key (the header only), as every route of one user does.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, status
from starlette.concurrency import run_in_threadpool

from service.api.deps import BearerDep, EngineDep, SettingsDep, TokenQuery, UserId, can_read_user
from service.api.schemas import (
    RevokedPublic,
    SharedBoardPublic,
    SharePublic,
    TokenPublic,
    errors,
)
from service.live.credentials import MAX_SHARE_ID_CHARS
from service.live.errors import NotAvailable
from service.live.results import SharedBoard

__all__ = ["ShareId", "router", "share_paths"]

router = APIRouter(prefix="/v1", tags=["credentials"])

ShareId = Annotated[
    str,
    Path(min_length=1, max_length=MAX_SHARE_ID_CHARS, description="a share id (POST .../share)"),
]


def share_paths(share_id: str) -> dict[str, str]:
    """The addresses that use ``share_id``, as paths on this service."""
    quoted = quote(share_id, safe="")
    return {
        "board_url": f"/v1/shared/{quoted}",
        "widget_url": f"/widget/shared/{quoted}",
        "badge_url": f"/widget/badge.svg?share={quoted}",
    }


@router.post(
    "/users/{user_id}/token",
    response_model=TokenPublic,
    responses=errors(401, 403, 422, 429, 503),
)
def rotate_token(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
) -> TokenPublic:
    """A new read token for this user: the token presented (and every earlier one) is
    refused from now on, by every replica. Their share id, if any, keeps working."""
    can_read_user(engine, settings, user_id, token, bearer)
    return TokenPublic(user_id=user_id, token=engine.credentials.rotate(user_id))


@router.post(
    "/users/{user_id}/share",
    response_model=SharePublic,
    status_code=status.HTTP_201_CREATED,
    responses=errors(401, 403, 404, 422, 429, 503),
)
def create_share(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
) -> SharePublic:
    """A new share id of this user's published board, for embeds and links: it reads the
    board's ranking (``GET /v1/shared/{share_id}``, the widget, the badge) and nothing else.
    Any earlier share id of the user stops working. Only its digest is stored: keep it."""
    can_read_user(engine, settings, user_id, token, bearer)
    try:
        share_id = engine.share(user_id)
    except NotAvailable as error:
        raise HTTPException(404, str(error)) from None
    return SharePublic(share_id=share_id, **share_paths(share_id))


@router.delete(
    "/users/{user_id}/share",
    response_model=RevokedPublic,
    responses=errors(401, 403, 404, 422, 429, 503),
)
def revoke_share(
    user_id: UserId,
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    token: TokenQuery = None,
) -> RevokedPublic:
    """Revoke this user's share id: its board, widget and badge answer 404 from now on."""
    can_read_user(engine, settings, user_id, token, bearer)
    try:
        return RevokedPublic(revoked=engine.revoke_share(user_id))
    except NotAvailable as error:
        raise HTTPException(404, str(error)) from None


@router.get(
    "/shared/{share_id}",
    response_model=SharedBoardPublic,
    responses=errors(404, 422, 429, 503),
)
async def read_shared(
    share_id: ShareId, engine: EngineDep, method: Literal["bt", "elo"] = "bt"
) -> SharedBoard:
    """The published board a share id reads: ranks, models, ratings and intervals; not the
    user id, their votes or anything else of theirs. 404 once the share id is revoked."""
    return await run_in_threadpool(engine.shared_leaderboard, share_id, method)
