"""``/v1/admin/...``: the catalogue, the integrity screen, refits and read tokens."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FlaggedVoterPublic",
    "IntegrityPublic",
    "ModelsIn",
    "RefitPublic",
    "RegisteredPublic",
    "TokenPublic",
]


class ModelsIn(BaseModel):
    """Models to add to the catalogue (``POST /v1/admin/models``)."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(
        min_length=1,
        max_length=1000,
        description="model names, as votes will name them",
        examples=[["helios-3", "pico-4b"]],
    )


class RegisteredPublic(BaseModel):
    """What ``POST /v1/admin/models`` did."""

    added: list[str] = Field(description="names new to the catalogue, in the order given")
    known: list[str] = Field(description="names the catalogue already held")
    version: int


class FlaggedVoterPublic(BaseModel):
    """One user the integrity screen left out of the public boards, and the evidence."""

    user_id: str
    test: Literal["random", "brigade", "cohort"] = Field(
        description="'random': votes no better than chance given everyone else's; "
        "'brigade': one model voted up far beyond what the others' votes predict; "
        "'cohort': one of the voters who joined the same day, week or month and, "
        "together, voted one model up far beyond that"
    )
    statistic: float | None = Field(
        description="random: the user's agreement slope (1 typical, 0 coin flipping); "
        "brigade: the model's win share in the user's votes; cohort: in the cohort's"
    )
    expected: float | None = Field(
        description="random: the honest users' typical slope; brigade (cohort): the win "
        "share everyone else's votes predict for that model in this user's (the "
        "cohort's) battles"
    )
    p_value: float | None = Field(
        description="the test's p-value, before the false-discovery control"
    )
    n_votes: int = Field(
        description="the votes tested (brigade: the user's votes with the model; cohort: "
        "the cohort's)"
    )
    model: str | None = Field(description="the model voted up (brigade), else null")


class IntegrityPublic(BaseModel):
    """Who the served version's public boards leave out, and why."""

    screened: bool = Field(
        description="whether this version was published after an integrity screen "
        "(false: a fit served without its battles, or before the first refit)"
    )
    daily_cap: int | None = Field(
        None, description="votes of a user counted per UTC day of the server's clock"
    )
    established_days: int | None = Field(
        None,
        description="earlier days (server time) a voter must have voted on before their "
        "votes count publicly; 0 counts every voter at once",
    )
    flag_voters: bool | None = None
    level: float | None = Field(None, description="false-discovery rate of each test")
    min_votes: int | None = Field(None, description="fewest votes to test a random clicker")
    brigade_share: float | None = None
    cohort_share: float | None = Field(
        None, description="least win share of one model in a cohort's votes to flag it"
    )
    n_votes: int | None = Field(None, description="votes screened")
    n_newcomer: int | None = Field(
        None, description="votes held back: their voter was not yet established"
    )
    n_capped: int | None = Field(None, description="established votes over the daily cap")
    n_flagged_votes: int | None = Field(None, description="votes of flagged users")
    n_counted: int | None = Field(None, description="votes the public boards count")
    honest_slope: list[float] | None = Field(
        None, description="centre and spread of honest users' agreement slopes"
    )
    flagged: list[FlaggedVoterPublic]
    elo_every_vote: dict[str, float] = Field(
        description="the live online Elo of every stored vote, the defence off (since the "
        "fit was published)"
    )
    version: int


class RefitPublic(BaseModel):
    """The version a refit published."""

    version: int


class TokenPublic(BaseModel):
    """A user's read token."""

    user_id: str
    token: str
