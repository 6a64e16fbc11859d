"""Battles as the store keeps them, and the online Elo update applied with them."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pandas as pd

from ranking.elo import online_elo
from ranking.io.battle_frame import empty_battle_frame, to_battle_frame
from ranking.io.frames import pairwise_from_battles

__all__ = ["battle_documents", "battle_frame", "elo_update"]


def battle_documents(battles: pd.DataFrame) -> list[dict[str, Any]]:
    """Canonical battles as JSON-able dicts, each with a ``battle_id`` (made when absent)."""
    frame = battles.astype(object).where(battles.notna(), None)
    documents: list[dict[str, Any]] = frame.to_dict("records")  # type: ignore[assignment]
    for document in documents:
        if document["battle_id"] is None:
            document["battle_id"] = uuid.uuid4().hex
    return documents


def battle_frame(documents: list[dict[str, Any]]) -> pd.DataFrame:
    return to_battle_frame(pd.DataFrame(documents)) if documents else empty_battle_frame()


def elo_update(state: dict[str, float], battles: list[dict[str, Any]]) -> dict[str, float]:
    """Online Elo (FastChat's constants) continued from ``state`` over ``battles`` in order.

    A model not in ``state`` starts at 1000, as in a fresh run.
    """
    if not battles:
        return state
    frame = battle_frame(battles)
    models = tuple(sorted(set(state) | set(frame["model_a"].astype(str)) | set(frame["model_b"])))
    data = pairwise_from_battles(frame.assign(tstamp=np.nan), models=models)  # arrival order
    start = np.array([state.get(m, 1000.0) for m in models])
    ratings = online_elo(len(models), data.matchups, data.outcomes, initial=start)
    return dict(zip(models, ratings.tolist(), strict=True))
