"""``POST /v1/battles``: the battle records that arrive and what their ingestion did."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BATTLE_EXAMPLE", "BattlesIn", "IngestPublic", "RejectedPublic"]

#: A battle record as the OpenAPI examples show one (docs/SPEC.md section 1).
BATTLE_EXAMPLE = {
    "battle_id": "b-0001",
    "user_id": "u-42",
    "model_a": "helios-2-ultra",
    "model_b": "pico-3b",
    "winner": "model_a",
    "prompt": "Write a haiku about sorting algorithms",
    "tstamp": 1767225600,
}


class BattlesIn(BaseModel):
    """Battle records to ingest (docs/SPEC.md section 1); each is checked on its own."""

    model_config = ConfigDict(extra="forbid")

    battles: list[Any] = Field(
        description="battle records: model_a, model_b, winner required; user_id, prompt, "
        "battle_id, tstamp and labels optional",
        examples=[[BATTLE_EXAMPLE]],
    )


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
