"""``GET /v1/users/{user_id}/leaderboard``: one user's board, its agreement with the aggregate."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from service.api.schemas.explanation import ExplanationPublic
from service.api.schemas.leaderboard import LeaderboardPublic

__all__ = ["UserLeaderboardPublic"]


class UserLeaderboardPublic(LeaderboardPublic):
    """One user's leaderboard and its agreement with the aggregate."""

    user_id: str
    source: Literal["fitted", "blended"] = Field(
        description="fitted: the user's votes shrunk toward the aggregate; blended: toward "
        "the prediction from the user's queries"
    )
    spearman: float | None = Field(description="Spearman against the aggregate ranking")
    explanation: ExplanationPublic | None = Field(
        default=None, description="what moved the top models from the aggregate"
    )
