"""``GET /v1/users/{user_id}/leaderboard``: one user's board, its agreement with the aggregate."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from service.api.schemas.explanation import ExplanationPublic
from service.api.schemas.leaderboard import LeaderboardPublic, WindowPublic

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
    window: WindowPublic | None = Field(
        default=None,
        description="with ?since= or ?until=: the window of the user's votes the board was "
        "fitted on",
    )

    # No return annotation: one would replace this board's response schema by its type.
    @model_serializer(mode="wrap")
    def _absent_window_left_out(self, handler: SerializerFunctionWrapHandler):
        """A board of all the user's votes is answered without the key, as stored."""
        board = handler(self)
        if board.get("window") is None:
            board.pop("window", None)
        elif isinstance(board["window"], dict):
            board["window"] = {k: v for k, v in board["window"].items() if v is not None}
        return board
