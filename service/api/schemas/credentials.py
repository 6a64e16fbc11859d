"""Credentials: a rotated read token, a share id, and the board a share id reads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.api.schemas.leaderboard import RankedModelPublic

__all__ = ["RevokedPublic", "SharePublic", "SharedBoardPublic"]


class SharePublic(BaseModel):
    """A new share id of a user's published board, and the addresses that use it."""

    share_id: str = Field(
        description="reads this user's published board, nothing else; replaces any earlier "
        "share id of theirs, and stops working when revoked (DELETE .../share)"
    )
    board_url: str = Field(description="GET it: the board as JSON (a path on this service)")
    widget_url: str = Field(description="the embeddable card (a path on this service)")
    badge_url: str = Field(description="the SVG badge (a path on this service)")


class RevokedPublic(BaseModel):
    """What revoking a share id did."""

    revoked: bool = Field(description="whether the user had a share id (now refused)")


class SharedBoardPublic(BaseModel):
    """A user's published board as a share id shows it: the ranking only, without the
    user id, vote counts, agreement or explanation."""

    method: Literal["bt", "elo"]
    version: int = Field(description="the model version served")
    models: list[RankedModelPublic]
