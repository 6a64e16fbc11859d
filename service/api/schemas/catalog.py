"""What the served version holds: its models, topics, agreement histogram, about and health."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AboutIntegrityPublic",
    "AboutPublic",
    "AgreementSummaryPublic",
    "BootstrapPublic",
    "CorrelationsPublic",
    "HealthPublic",
    "HistogramPublic",
    "ModelCountPublic",
    "NoisePublic",
    "ModelsPublic",
    "TopicPublic",
    "TopicsPublic",
]


class HistogramPublic(BaseModel):
    """Counts of users per Spearman bin."""

    edges: list[float]
    counts: list[int]


#: ``[lower, upper]`` of a figure; None where undefined.
Bounds = list[float | None] | None


class BootstrapPublic(BaseModel):
    """How the summary's intervals were drawn: resampling users."""

    over: str
    resamples: int
    seed: int


class NoisePublic(BaseModel):
    """The same users' agreement when their votes are re-drawn from the aggregate
    (``ranking.noise``), beside their own; docs/SPEC.md section 5."""

    users: int
    replicates: int
    observed_mean_spearman: float | None
    observed_mean_spearman_interval: Bounds = None
    mean_spearman: float | None
    mean_spearman_interval: Bounds = None
    median_spearman: float | None
    median_spearman_interval: Bounds = None
    share_near_zero_or_negative: float | None
    share_near_zero_or_negative_interval: Bounds = None
    excess: float | None
    excess_interval: Bounds = None
    noise_share: float | None
    noise_share_interval: Bounds = None
    confidence: float


class AgreementSummaryPublic(BaseModel):
    """The users summary of docs/SPEC.md section 3, with its intervals (section 5); a
    field the served fit lacks is left out, never answered as null."""

    users: int
    mean_spearman: float | None
    median_spearman: float | None
    share_near_zero_or_negative: float | None
    mean_kendall: float | None = None
    mean_spearman_interval: Bounds = None
    median_spearman_interval: Bounds = None
    share_near_zero_or_negative_interval: Bounds = None
    confidence: float | None = None
    bootstrap: BootstrapPublic | None = None
    noise: NoisePublic | None = None


class CorrelationsPublic(BaseModel):
    """How per-user rankings agree with the aggregate."""

    method: Literal["bt", "elo"]
    shrinkage: Literal["cv", "evidence", "none"]
    min_battles: int
    summary: AgreementSummaryPublic
    histogram: HistogramPublic
    version: int


class ModelCountPublic(BaseModel):
    """A model and how many battles it was in."""

    model: str
    battles: int


class ModelsPublic(BaseModel):
    """The models of the served version, most battles first."""

    models: list[ModelCountPublic]
    version: int


class TopicPublic(BaseModel):
    """A topic of the users' queries."""

    model_config = ConfigDict(extra="allow")

    topic: int
    size: int
    words: list[str]


class TopicsPublic(BaseModel):
    """The topics of the users' queries."""

    topics: list[TopicPublic]
    version: int


class AboutIntegrityPublic(BaseModel):
    """What the public boards count, in numbers (who is left out: admins only)."""

    daily_cap: int = Field(description="votes of a user counted per UTC day; 0 for no cap")
    established_days: int = Field(
        0,
        description="a voter's votes count from their first vote on a day with this many "
        "earlier days of voting (server time); 0 for at once",
    )
    votes_counted: int
    votes_newcomer: int = Field(0, description="votes of voters not yet established")
    votes_over_cap: int
    voters_flagged: int = Field(description="users whose votes the public boards leave out")


class AboutPublic(BaseModel):
    """What the service serves."""

    simulated: bool = Field(
        description="true when the served fit is of a simulated arena (fitted with the "
        "truth of 'plb simulate', as 'plb serve --demo' does): its models and users are "
        "made up; false for a fit of a real battle log"
    )
    fit_created: str | None = Field(description="when the served fit was made (ISO 8601)")
    integrity: AboutIntegrityPublic | None = Field(
        description="how many votes and voters the public boards leave out; null when "
        "the served version was not screened"
    )
    style_control: bool = Field(
        default=False,
        description="true when the fit has a style-controlled board "
        "(GET /v1/leaderboard?style=control): its votes carry answers",
    )
    version: int


class HealthPublic(BaseModel):
    """Liveness, and the version served."""

    status: Literal["ok"]
    version: int
