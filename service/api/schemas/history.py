"""Rating history bodies: each period's board and the drift tests between periods."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.api.schemas.leaderboard import ModelRatingPublic, ProvisionalModelPublic

__all__ = ["DriftTestPublic", "HistoryPublic", "PeriodBoardPublic", "PeriodPublic"]


class PeriodBoardPublic(BaseModel):
    """A period's Bradley-Terry board, as the aggregate one (docs/SPEC.md section 3)."""

    method: Literal["bt"]
    n_battles: int
    interval: str
    confidence: float
    models: list[ModelRatingPublic]
    min_votes: int = Field(description="the fewest votes a model ranked in the period has")
    provisional: list[ProvisionalModelPublic] = Field(
        description="models with fewer votes in the period: their counts, not ranked"
    )


class PeriodPublic(BaseModel):
    """One period: calendar periods merged until each holds the segment minimums."""

    label: str = Field(description="2024-05, 2024-W19, 2024-05-06, or first/last when merged")
    start: float = Field(description="its first instant, unix seconds")
    end: float = Field(description="the instant after its last, unix seconds")
    start_time: str = Field(description="start in ISO time, UTC")
    end_time: str = Field(description="end in ISO time, UTC")
    board: PeriodBoardPublic


class DriftTestPublic(BaseModel):
    """A model's change of rating between two consecutive periods, and its test."""

    model: str
    before: str = Field(description="the earlier period's label")
    after: str = Field(description="the later period's label")
    change: float = Field(
        description="the rating's change less the median change of the models ranked in both"
    )
    sd: float = Field(description="the change's standard deviation, from both intervals")
    z: float
    p_value: float = Field(description="two-sided")
    p_adjusted: float = Field(description="corrected by Holm's method over every test")
    flagged: bool = Field(description="p_adjusted at most level: the model drifted")


class HistoryPublic(BaseModel):
    """The rating history of the served version's votes (docs/SPEC.md section 5)."""

    unit: str = Field(description="month, week, day or equal: the periods before merging")
    level: float = Field(description="the family-wise rate of false drift alarms")
    n_battles: int = Field(description="votes with a tstamp, in some period")
    n_undated: int = Field(description="votes without one")
    periods: list[PeriodPublic]
    drift: list[DriftTestPublic]
    drifting: list[str] = Field(description="the models with a flagged change")
    version: int = Field(description="the model version served")
