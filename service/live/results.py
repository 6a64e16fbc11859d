"""What the live service answers, typed: the results of :mod:`~service.live.reads` and
:mod:`~service.live.writes` that are not documents of a lower layer.

Each is a small frozen dataclass whose fields are those of its response model in
:mod:`service.api.schemas` (``IngestPublic`` for :class:`Ingested`, ...), which the route
returns as it is: FastAPI reads a response model from a dataclass's attributes, so the
answer's JSON is the model's. The boards, the user boards, the rating history and the
recommend document stay the documents their layers build (:mod:`ranking`,
:mod:`service.live.personal`), which the store keeps and the snapshot publishes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "About",
    "AboutIntegrity",
    "Correlations",
    "Ingested",
    "IntegrityReport",
    "ModelCount",
    "ModelCounts",
    "Registered",
    "Rejected",
    "SCREEN_FIELDS",
    "SharedBoard",
    "SharedRow",
    "Topics",
]


@dataclass(frozen=True, slots=True)
class Rejected:
    """A battle record that was not ingested: its position in the batch, and why."""

    index: int
    error: str


@dataclass(frozen=True, slots=True)
class Ingested:
    """What an ingest did (``POST /v1/battles``).

    Attributes
    ----------
    accepted, duplicates : int
        Records stored, and records whose ``battle_id`` was already stored.
    rejected : list of Rejected
        The bad records, by index; nothing of them was stored.
    tokens : dict
        User id to the current read token, of each user whose first vote this was.
    version : int
        The version served.
    """

    accepted: int
    duplicates: int
    rejected: list[Rejected]
    tokens: dict[str, str]
    version: int


@dataclass(frozen=True, slots=True)
class Registered:
    """What registering models did (``POST /v1/admin/models``): the names new to the
    catalogue (in the order given) and those it already held."""

    added: list[str]
    known: list[str]
    version: int


@dataclass(frozen=True, slots=True)
class ModelCount:
    """A model of the served version and how many battles it was in."""

    model: str
    battles: int


@dataclass(frozen=True, slots=True)
class ModelCounts:
    """The models of the served version, most battles first (``GET /v1/models``)."""

    models: list[ModelCount]
    version: int


@dataclass(frozen=True, slots=True)
class AboutIntegrity:
    """What the public boards count, in numbers: the screen's settings and its counts."""

    daily_cap: int
    established_days: int
    votes_counted: int
    votes_newcomer: int
    votes_over_cap: int
    voters_flagged: int


@dataclass(frozen=True, slots=True)
class About:
    """What the service serves (``GET /v1/about``).

    Attributes
    ----------
    simulated : bool
        Whether the fit is of a simulated arena.
    fit_created : str or None
        When the fit was made (ISO 8601).
    integrity : AboutIntegrity or None
        What the public boards leave out; None when the version was not screened.
    style_control : bool
        Whether the fit has a style-controlled board.
    version : int
    """

    simulated: bool
    fit_created: str | None
    integrity: AboutIntegrity | None
    style_control: bool
    version: int


@dataclass(frozen=True, slots=True)
class IntegrityReport:
    """Who the served version's public boards leave out, and why
    (``GET /v1/admin/integrity``).

    Attributes
    ----------
    screened : bool
        Whether the version was published after an integrity screen; the screen's
        fields are None when it was not.
    flagged : list of dict
        The users left out, each with the test that flagged them and its evidence.
    elo_every_vote : dict
        The live Elo of every stored vote, the defence off.
    version : int
    daily_cap, established_days, flag_voters, level, min_votes, brigade_share, cohort_share
        The screen's settings (:class:`service.pipeline.integrity.IntegrityConfig`).
    n_votes, n_newcomer, n_capped, n_flagged_votes, n_counted, honest_slope
        Its counts, and the centre and spread of honest users' agreement slopes
        (:func:`service.pipeline.integrity.screen_battles`).
    """

    screened: bool
    flagged: list[dict[str, Any]]
    elo_every_vote: dict[str, float]
    version: int
    daily_cap: int | None = None
    established_days: int | None = None
    flag_voters: bool | None = None
    level: float | None = None
    min_votes: int | None = None
    brigade_share: float | None = None
    cohort_share: float | None = None
    n_votes: int | None = None
    n_newcomer: int | None = None
    n_capped: int | None = None
    n_flagged_votes: int | None = None
    n_counted: int | None = None
    honest_slope: list[float] | None = None


#: The fields of :class:`IntegrityReport` that the screen's evidence fills.
SCREEN_FIELDS = (
    "daily_cap",
    "established_days",
    "flag_voters",
    "level",
    "min_votes",
    "brigade_share",
    "cohort_share",
    "n_votes",
    "n_newcomer",
    "n_capped",
    "n_flagged_votes",
    "n_counted",
    "honest_slope",
)


@dataclass(frozen=True, slots=True)
class Correlations:
    """How per-user rankings agree with the aggregate, of one method and shrinkage
    (``GET /v1/analysis/correlations``): the users summary and the histogram of per-user
    Spearman, as the snapshot publishes them
    (:func:`service.pipeline.snapshot.correlations_document`)."""

    method: str
    shrinkage: str
    min_battles: int
    summary: Mapping[str, Any]
    histogram: Mapping[str, Any]
    version: int


@dataclass(frozen=True, slots=True)
class SharedRow:
    """A row of a shared board: the ranking, not the votes behind it."""

    rank: int
    model: str
    rating: float
    lower: float
    upper: float


@dataclass(frozen=True, slots=True)
class SharedBoard:
    """What a share id shows of a personal board (``GET /v1/shared/{share_id}``): its
    method, version and ranked rows; no user id, vote counts, agreement or explanation."""

    method: str
    version: int
    models: list[SharedRow]


@dataclass(frozen=True, slots=True)
class Topics:
    """The topics of the users' queries (``GET /v1/topics``), as the snapshot publishes
    them: ``topic``, ``size``, ``words`` and whatever else the topic model names."""

    topics: list[dict[str, Any]]
    version: int
