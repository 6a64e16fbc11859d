"""``POST /v1/recommend``: a person known by queries (and votes), and their predicted ranking."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.api.schemas.explanation import ExplanationPublic
from service.api.schemas.ingest import BATTLE_EXAMPLE
from service.api.schemas.leaderboard import RankedModelPublic

__all__ = ["PredictedModelPublic", "PromptTopicPublic", "RecommendIn", "RecommendPublic"]


class RecommendIn(BaseModel):
    """A user known by a few queries, and perhaps a few of their own votes."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(
        description="the user's queries, one string each: at least one, unless user_id "
        "is given (that user's stored prompts then stand for them)",
        examples=[["How do I reverse a linked list in Rust?", "Explain p-values simply"]],
    )
    votes: list[dict[str, Any]] | None = Field(
        default=None,
        description="the user's own votes: battle records (docs/SPEC.md section 1)",
        examples=[[BATTLE_EXAMPLE]],
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


class RecommendWeightsPublic(BaseModel):
    """How much of the queries' move from the aggregate a recommendation keeps."""

    queries: float = Field(
        ge=0.0, le=1.0, description="of the person's predicted move from the aggregate"
    )
    prompt: float = Field(
        ge=0.0, le=1.0, description="of one prompt's move from the person's ranking"
    )


class RecommendPublic(BaseModel):
    """The recommend JSON of docs/SPEC.md section 3."""

    source: Literal["predicted", "blended", "aggregate"] = Field(
        description="predicted from the queries, blended with the person's votes, or the "
        "aggregate board itself where queries were learnt to tell nothing yet"
    )
    models: list[PredictedModelPublic]
    n_queries: int
    n_votes: int
    prior_sd: float
    weights: RecommendWeightsPublic | None = Field(
        default=None,
        description="how much of what the queries say is kept, each learnt on people's "
        "later votes (0: the public ranking)",
    )
    spearman: float | None = Field(default=None, description="agreement with the aggregate")
    explanation: ExplanationPublic | None = Field(
        default=None,
        description="why this ranking: topics, style, what moved the top models, and the "
        "same in plain sentences; with a prompt, for this prompt (scope 'prompt')",
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
