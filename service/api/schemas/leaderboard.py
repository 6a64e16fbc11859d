"""Leaderboard bodies: a ranked row with its odds, the aggregate and public boards."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

__all__ = [
    "LeaderboardPublic",
    "ModelRatingPublic",
    "ProvisionalModelPublic",
    "PublicBoardPublic",
    "RankedModelPublic",
    "RawRowPublic",
    "StyleCoefficientPublic",
    "StyleControlPublic",
    "WindowPublic",
]


class RankedModelPublic(BaseModel):
    """One model's rating, interval and rank (docs/SPEC.md section 2 ranks)."""

    model: str
    rating: float
    lower: float
    upper: float
    rank: int


#: The odds a leaderboard row may carry (docs/SPEC.md section 2).
_ODDS = ("p_best", "rank_lower", "rank_upper")


class ModelRatingPublic(RankedModelPublic):
    """A leaderboard row: the rating, the battles behind it, and its odds when it has an
    interval to draw them from."""

    battles: int
    wins: int
    losses: int
    ties: int
    p_best: float | None = Field(
        default=None,
        description="probability that this model is the best of those listed, from the "
        "same draws as its interval (docs/SPEC.md section 2); absent without them",
    )
    rank_lower: int | None = Field(
        default=None, description="best rank of the range of its rank (1 is best)"
    )
    rank_upper: int | None = Field(default=None, description="worst rank of that range")

    # No return annotation: one would replace this row's response schema by its type.
    @model_serializer(mode="wrap")
    def _absent_odds_left_out(self, handler: SerializerFunctionWrapHandler):
        """A row without odds is answered without the keys, as the stored boards are."""
        row = handler(self)
        for key in _ODDS:
            if row.get(key) is None:
                row.pop(key, None)
        return row


class ProvisionalModelPublic(BaseModel):
    """A model with too few votes to be ranked yet: its counts only."""

    model: str
    battles: int
    wins: int
    losses: int
    ties: int


class LeaderboardPublic(BaseModel):
    """The leaderboard JSON of docs/SPEC.md section 3, best model first."""

    method: Literal["bt", "elo"]
    n_battles: int
    interval: str | None = None
    confidence: float | None = None
    version: int = Field(description="the model version served")
    models: list[ModelRatingPublic]


class WindowPublic(BaseModel):
    """The time window a board was fitted on, in ISO time, UTC: on a public board
    ``?since=&until=`` widened to whole periods (each holding the segment minimums), on a
    user's own board the ends asked (an end not asked is open, and absent)."""

    since: str | None = Field(default=None, description="the window's first instant")
    until: str | None = Field(
        default=None, description="the instant after its last (not in the window)"
    )


class StyleCoefficientPublic(BaseModel):
    """What a unit of one style covariate is worth, in Elo points, with its interval."""

    feature: str = Field(description="length, headers, lists or bold")
    coefficient: float = Field(
        description="Elo points model_a gains per unit of the covariate: per doubling of "
        "the length; for headers, lists or bold, per unit of (a - b) / (a + b + 1) (one "
        "answer with them, the other without)"
    )
    lower: float
    upper: float


class RawRowPublic(BaseModel):
    """A model's rating and rank on the raw board of the same votes."""

    model: str
    rating: float
    rank: int


class StyleControlPublic(BaseModel):
    """How the board held the answers' style equal, and the raw board beside it."""

    scaling: str = Field(description="how answers' measures became covariates ('mixed')")
    coefficients: list[StyleCoefficientPublic]
    raw: list[RawRowPublic] = Field(
        description="each ranked model's rating and rank on the plain Bradley-Terry board "
        "of the same votes"
    )


class PublicBoardPublic(LeaderboardPublic):
    """The aggregate leaderboard as public boards show it: only models with ``min_votes``
    votes ranked, the others listed apart."""

    min_votes: int = Field(description="the fewest votes a ranked model has")
    provisional: list[ProvisionalModelPublic] = Field(
        description="models with fewer than min_votes votes, most votes first: listed with "
        "their counts, not ranked"
    )
    window: WindowPublic | None = Field(
        default=None,
        description="with ?since= or ?until=: the window the board was fitted on; absent otherwise",
    )
    style_control: StyleControlPublic | None = Field(
        default=None,
        description="with ?style=control: the style coefficients and the raw board of the "
        "same votes; absent otherwise",
    )

    # No return annotation: one would replace this board's response schema by its type.
    @model_serializer(mode="wrap")
    def _absent_window_left_out(self, handler: SerializerFunctionWrapHandler):
        """A board of every vote is answered without the key, as the stored board is."""
        board = handler(self)
        for key in ("window", "style_control"):
            if board.get(key) is None:
                board.pop(key, None)
        return board
