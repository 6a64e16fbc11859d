"""Why a personal ranking is what it is: topics, style traits, what moved each top model.

Shared by the personal leaderboard (:mod:`.users`) and the recommendation (:mod:`.recommend`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "AnswerTastePublic",
    "ExplainedModelPublic",
    "ExplanationPublic",
    "StyleTraitPublic",
    "TastePublic",
    "TopicSharePublic",
]


class TopicSharePublic(BaseModel):
    """A topic of the user's queries."""

    topic: int = Field(description="the topic's id (GET /v1/topics)")
    label: str = Field(description="the topic in words: its first top words")
    share: float = Field(description="share of the user's queries in this topic")
    population: float = Field(description="share of all training queries in this topic")
    name: str = Field(
        default="",
        description="what a person would call the topic ('cooking', 'money and taxes'), "
        "or 'about' its first two words where no curated name fits",
    )
    fits: bool = Field(
        default=True,
        description="whether most of the user's queries in this topic are close enough "
        "to it to name it (a query far from every topic is still given the nearest)",
    )


class StyleTraitPublic(BaseModel):
    """A style feature where the user's queries stand out from the training users'."""

    feature: str = Field(description="the style feature (features.style.STYLE_FEATURES)")
    label: str = Field(description="the trait in words, e.g. 'long queries'")
    z: float = Field(description="the user's mean, in training users' standard deviations")
    sentence: str = Field(
        default="", description="the trait said of the user, e.g. 'you write long sentences'"
    )


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
        "embedding components (for one prompt: what the prompt is about, its topic and "
        "embedding in place of the queries'); null where the ranking does not start from "
        "the prediction"
    )
    style: float | None = Field(
        description="how the user writes moved it: their style components; null where the "
        "ranking does not start from the prediction"
    )
    votes: float = Field(description="what the user's own votes moved it")


class AnswerTastePublic(BaseModel):
    """A person's taste for one style feature of answers, in Elo points per ``unit``."""

    feature: str = Field(
        description="the answer style feature (features.answer_style.ANSWER_STYLE_FEATURES)"
    )
    unit: str = Field(
        description="what the points are per, e.g. 'per doubling of length', 'for an "
        "answer with 3 headers against one with none'"
    )
    points: float = Field(description="what the unit adds to an answer's odds with the person")
    lower: float = Field(description="the interval's lower bound of points")
    upper: float = Field(description="the interval's upper bound of points")
    everyone: float = Field(description="what the unit adds with everyone (the aggregate)")
    distinct: bool = Field(
        description="whether the person's departure from everyone's is told apart (its "
        "interval excludes zero)"
    )
    sentence: str = Field(
        default="",
        description="the taste in words where it is told apart, e.g. 'You prefer shorter "
        "answers than most: -12 points per doubling of length with you (95% interval -30 "
        "to -2), +4 with everyone.'; empty otherwise",
    )


class TastePublic(BaseModel):
    """What a person's votes say of their taste in answers (docs/SPEC.md section 5)."""

    source: Literal["person", "everyone"] = Field(
        description="'person': the person's own coefficients, shrunk toward everyone's; "
        "'everyone': per-person taste does not predict votes better than everyone's on "
        "this service's votes, so everyone's is used"
    )
    features: list[AnswerTastePublic] = Field(description="one entry per answer style feature")
    n_votes: int = Field(description="the votes with both answers it was read from")
    confidence: float = Field(description="the intervals' coverage")


class ExplanationPublic(BaseModel):
    """Why this ranking (docs/SPEC.md section 5)."""

    topics: list[TopicSharePublic] = Field(description="the user's largest topics, largest first")
    style: list[StyleTraitPublic] = Field(
        description="the style traits that stand out most (at least 1 sd), strongest first"
    )
    models: list[ExplainedModelPublic] = Field(description="the top models, best first")
    n_queries: int = Field(description="the queries the topics and style are read from")
    note: str | None = Field(description="why a part is missing, when one is")
    scope: Literal["person", "prompt"] = Field(
        default="person",
        description="what is explained: the person's ranking on all their prompts, or "
        "the ranking for the one prompt of the request ('for this prompt')",
    )
    sentences: list[str] = Field(
        default_factory=list,
        description="the explanation in plain words, in reading order: what the queries "
        "(or the prompt) are about, how the person writes, their taste in answers (where "
        "known), what moved each top model in rating points, the note",
    )
    taste: TastePublic | None = Field(
        default=None,
        description="the person's taste in answers (how an answer's length and formatting "
        "move their votes), where their votes carry the two answers; null otherwise",
    )
