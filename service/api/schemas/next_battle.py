"""``POST /v1/next-battle``: the person to ask, and the battle to vote on next."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.api.schemas.recommend import RecommendIn

__all__ = ["NextBattleIn", "NextBattlePublic", "PairPublic"]


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
    informative: bool = Field(
        description="whether the vote is expected to tell at least 0.1 bits "
        "(service.live.next_battle.INFORMATIVE_BITS): only then does it tell the models "
        "apart; below, it is still the most useful vote but would hardly move the odds"
    )
    skipped: PairPublic | None = Field(
        default=None,
        description="the pair of the person's latest vote, where it was still the most "
        "informative and the best other pair is suggested instead (never the same "
        "question twice in a row); absent otherwise",
    )
    source: Literal["fitted", "blended", "predicted", "aggregate"] = Field(
        description="the board read: the personal leaderboard (fitted or blended) or the "
        "ranking predicted from queries (predicted, or blended with votes)"
    )
    user_id: str | None = Field(default=None, description="the user, for a personal board")
    n_battles: int | None = Field(default=None, description="the user's votes on the board")
    n_votes: int | None = Field(default=None, description="the votes sent with the queries")
    version: int = Field(description="the model version served")
