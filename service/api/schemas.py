"""Request and response bodies, split by direction: ``...In`` arrive, ``...Public`` leave."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

__all__ = [
    "ERRORS",
    "AboutPublic",
    "BattlesIn",
    "CorrelationsPublic",
    "ErrorPublic",
    "ExplainedModelPublic",
    "ExplanationPublic",
    "HealthPublic",
    "IngestPublic",
    "LeaderboardPublic",
    "ModelRatingPublic",
    "ModelsIn",
    "ModelsPublic",
    "NextBattleIn",
    "NextBattlePublic",
    "PairPublic",
    "PromptTopicPublic",
    "ProvisionalModelPublic",
    "PublicBoardPublic",
    "RegisteredPublic",
    "RecommendIn",
    "RankedModelPublic",
    "RecommendPublic",
    "RefitPublic",
    "StyleTraitPublic",
    "TokenPublic",
    "TopicSharePublic",
    "TopicsPublic",
    "UserLeaderboardPublic",
    "errors",
]

_BATTLE_EXAMPLE = {
    "battle_id": "b-0001",
    "user_id": "u-42",
    "model_a": "helios-2-ultra",
    "model_b": "pico-3b",
    "winner": "model_a",
    "prompt": "Write a haiku about sorting algorithms",
    "tstamp": 1767225600,
}


class RecommendIn(BaseModel):
    """A user known by a few queries, and perhaps a few of their own votes."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(
        min_length=1,
        description="the user's queries, one string each",
        examples=[["How do I reverse a linked list in Rust?", "Explain p-values simply"]],
    )
    votes: list[dict[str, Any]] | None = Field(
        default=None,
        description="the user's own votes: battle records (docs/SPEC.md section 1)",
        examples=[[_BATTLE_EXAMPLE]],
    )
    prompt: str | None = Field(
        default=None,
        description="rank the models for this one prompt and this person: the prompt's "
        "topic and embedding, the person's style and votes (docs/SPEC.md section 5)",
        examples=["Why does my Rust borrow checker reject this closure?"],
    )
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="a user whose stored votes join the votes given; needs that user's "
        "read token (token, or Authorization: Bearer TOKEN) or the admin key",
    )
    token: str | None = Field(default=None, description="the read token of user_id")


class BattlesIn(BaseModel):
    """Battle records to ingest (docs/SPEC.md section 1); each is checked on its own."""

    model_config = ConfigDict(extra="forbid")

    battles: list[Any] = Field(
        description="battle records: model_a, model_b, winner required; user_id, prompt, "
        "battle_id, tstamp and labels optional",
        examples=[[_BATTLE_EXAMPLE]],
    )


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
    test: Literal["random", "brigade"] = Field(
        description="'random': votes no better than chance given everyone else's; "
        "'brigade': one model voted up far beyond what the others' votes predict"
    )
    statistic: float | None = Field(
        description="random: the user's agreement slope (1 typical, 0 coin flipping); "
        "brigade: the model's win share in the user's votes"
    )
    expected: float | None = Field(
        description="random: the honest users' typical slope; brigade: the win share "
        "everyone else's votes predict for that model in this user's battles"
    )
    p_value: float | None = Field(
        description="the test's p-value, before the false-discovery control"
    )
    n_votes: int = Field(description="the votes tested (brigade: the user's votes with the model)")
    model: str | None = Field(description="the model voted up (brigade), else null")


class IntegrityPublic(BaseModel):
    """Who the served version's public boards leave out, and why."""

    screened: bool = Field(
        description="whether this version was published after an integrity screen "
        "(false: a fit served without its battles, or before the first refit)"
    )
    daily_cap: int | None = Field(None, description="votes of a user counted per UTC day")
    flag_voters: bool | None = None
    level: float | None = Field(None, description="false-discovery rate of each test")
    min_votes: int | None = Field(None, description="fewest votes to test a random clicker")
    brigade_share: float | None = None
    n_votes: int | None = Field(None, description="votes screened")
    n_capped: int | None = Field(None, description="votes over the daily cap")
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


class PublicBoardPublic(LeaderboardPublic):
    """The aggregate leaderboard as public boards show it: only models with ``min_votes``
    votes ranked, the others listed apart."""

    min_votes: int = Field(description="the fewest votes a ranked model has")
    provisional: list[ProvisionalModelPublic] = Field(
        description="models with fewer than min_votes votes, most votes first: listed with "
        "their counts, not ranked"
    )


class TopicSharePublic(BaseModel):
    """A topic of the user's queries."""

    topic: int = Field(description="the topic's id (GET /v1/topics)")
    label: str = Field(description="the topic in words: its first top words")
    share: float = Field(description="share of the user's queries in this topic")
    population: float = Field(description="share of all training queries in this topic")


class StyleTraitPublic(BaseModel):
    """A style feature where the user's queries stand out from the training users'."""

    feature: str = Field(description="the style feature (features.style.STYLE_FEATURES)")
    label: str = Field(description="the trait in words, e.g. 'long queries'")
    z: float = Field(description="the user's mean, in training users' standard deviations")


class ExplainedModelPublic(BaseModel):
    """What moved one top model from the aggregate, in Elo points: ``rating = aggregate +
    baseline + topic + style + votes``, the null parts left out (up to rounding)."""

    model: str
    rating: float = Field(description="the rating shown")
    aggregate: float | None = Field(
        description="the aggregate Bradley-Terry (or, on an Elo board, Elo) rating; null "
        "where the aggregate does not rate the model"
    )
    baseline: float | None = Field(
        description="the rating predictor's rating of anyone (someone whose queries say "
        "nothing) less the aggregate: the predictor's own fit, nothing of the user; null "
        "where the ranking does not start from the prediction"
    )
    topic: float | None = Field(
        description="what the user's queries are about moved it: their topic shares and "
        "embedding components; null where the ranking does not start from the prediction"
    )
    style: float | None = Field(
        description="how the user writes moved it: their style components; null where the "
        "ranking does not start from the prediction"
    )
    votes: float = Field(description="what the user's own votes moved it")


class ExplanationPublic(BaseModel):
    """Why this ranking (docs/SPEC.md section 5)."""

    topics: list[TopicSharePublic] = Field(description="the user's largest topics, largest first")
    style: list[StyleTraitPublic] = Field(
        description="the style traits that stand out most (at least 1 sd), strongest first"
    )
    models: list[ExplainedModelPublic] = Field(description="the top models, best first")
    n_queries: int = Field(description="the queries the topics and style are read from")
    note: str | None = Field(description="why a part is missing, when one is")


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


class PredictedModelPublic(RankedModelPublic):
    """A row of a predicted (or blended) ranking, with its odds."""

    p_best: float = Field(
        description="probability that this model is the person's best of those listed, "
        "from the Gaussian its interval stands for (docs/SPEC.md section 2)"
    )
    rank_lower: int = Field(description="best rank of the range of its rank (1 is best)")
    rank_upper: int = Field(description="worst rank of that range")


class PromptTopicPublic(BaseModel):
    """The topic a recommend request's prompt was read as (``GET /v1/topics`` ids)."""

    topic: int
    label: str


class RecommendPublic(BaseModel):
    """The recommend JSON of docs/SPEC.md section 3."""

    source: Literal["predicted", "blended"]
    models: list[PredictedModelPublic]
    n_queries: int
    n_votes: int
    prior_sd: float
    spearman: float | None = Field(default=None, description="agreement with the aggregate")
    explanation: ExplanationPublic | None = Field(
        default=None, description="why this ranking: topics, style, what moved the top models"
    )
    version: int
    scope: Literal["person", "prompt"] = Field(
        default="person",
        description="what the ranking is for: the person on all their prompts, or the "
        "one prompt of the request for this person",
    )
    prompt_topic: PromptTopicPublic | None = Field(
        default=None, description="with a prompt: the topic it was read as"
    )


class NextBattleIn(RecommendIn):
    """Someone known by a few queries (and perhaps a few votes), as ``POST /v1/recommend``
    takes them: the next battle is read off the ranking predicted for them."""

    target: Literal["best", "ranking"] = Field(
        default="best",
        description="what the vote is to tell most about: which model is best (the "
        "entropy of p_best), or the order of every pair of models",
    )


class PairPublic(BaseModel):
    """A pair of models and the information its vote is expected to give."""

    model_a: str
    model_b: str
    information: float = Field(
        description="expected drop in the entropy of p_best from the vote, in bits"
    )


class NextBattlePublic(PairPublic):
    """The battle to vote on next: the pair whose outcome is expected to tell most about
    which model is this person's best (docs/SPEC.md section 5)."""

    target: Literal["best", "ranking"] = Field(
        description="what the information is about: the best model, or the whole ranking"
    )
    p_a: float = Field(description="probability that model_a wins, under the board")
    p_best_a: float = Field(description="probability that model_a is the best")
    p_best_b: float = Field(description="probability that model_b is the best")
    entropy: float = Field(
        description="entropy of p_best now, in bits: 0 when the best is known, log2 of "
        "the number of models when nothing is"
    )
    alternatives: list[PairPublic] = Field(
        description="the next most informative pairs, most informative first"
    )
    source: Literal["fitted", "blended", "predicted"] = Field(
        description="the board read: the personal leaderboard (fitted or blended) or the "
        "ranking predicted from queries (predicted, or blended with votes)"
    )
    user_id: str | None = Field(default=None, description="the user, for a personal board")
    n_battles: int | None = Field(default=None, description="the user's votes on the board")
    n_votes: int | None = Field(default=None, description="the votes sent with the queries")
    version: int = Field(description="the model version served")


class RejectedPublic(BaseModel):
    """A record that was not ingested, and why."""

    index: int
    error: str


class IngestPublic(BaseModel):
    """What ``POST /v1/battles`` did."""

    accepted: int
    duplicates: int
    rejected: list[RejectedPublic]
    tokens: dict[str, str] = Field(
        description="read tokens of the users whose first vote this was (keep them: they "
        "are not shown again)"
    )
    version: int


class HistogramPublic(BaseModel):
    """Counts of users per Spearman bin."""

    edges: list[float]
    counts: list[int]


class CorrelationsPublic(BaseModel):
    """How per-user rankings agree with the aggregate."""

    method: Literal["bt", "elo"]
    shrinkage: Literal["cv", "evidence", "none"]
    min_battles: int
    summary: dict[str, float | int | None]
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
    votes_counted: int
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
    version: int


class HealthPublic(BaseModel):
    """Liveness, and the version served."""

    status: Literal["ok"]
    version: int


class RefitPublic(BaseModel):
    """The version a refit published."""

    version: int


class TokenPublic(BaseModel):
    """A user's read token."""

    user_id: str
    token: str


class FieldErrorPublic(BaseModel):
    """One problem FastAPI found while parsing a request (a 422 of the framework)."""

    model_config = ConfigDict(extra="allow")

    loc: list[str | int]
    msg: str
    type: str


class ErrorPublic(BaseModel):
    """Every 4xx and 5xx answer: ``{"detail": ...}`` (docs/SPEC.md section 4)."""

    detail: str | list[FieldErrorPublic] = Field(
        description="what is wrong, naming the field and the value; for a request the "
        "framework could not parse, one entry a problem"
    )


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorPublic, "description": description}


#: The error answers of the service, by status; routes document theirs with :func:`errors`.
ERRORS: dict[int, dict[str, Any]] = {
    400: _error("the request body is not UTF-8 JSON, or its Content-Length is not a number"),
    401: _error("no credential was sent (Authorization: Bearer ...)"),
    403: _error("the credential is wrong, or this part of the service is off"),
    404: _error("what was asked for does not exist in the served fit"),
    413: _error("the request body is larger than PLB_MAX_BODY_BYTES"),
    422: _error("the request is malformed: the detail names the field and the value"),
    429: _error("too many requests: retry after Retry-After seconds"),
    503: _error("the store is unreachable; the service recovers by itself"),
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route that can answer ``statuses``."""
    return {status: ERRORS[status] for status in statuses}
