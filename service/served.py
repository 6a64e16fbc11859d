"""One published model version as the readers use it, and its live Elo leaderboard."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranking.leaderboard import build_leaderboard
from ranking.pairwise import ModelCounts
from ranking.types import Method

__all__ = ["METHODS", "Served", "live_elo_leaderboard", "served_version"]

METHODS: tuple[Method, ...] = ("bt", "elo")


@dataclass(frozen=True)
class Served:
    """One published model version, as the readers use it.

    Attributes
    ----------
    version : int
        The store's snapshot version.
    snapshot : dict
        The published document (:mod:`service.snapshot`).
    models : tuple of str
        The models of this version, sorted.
    aggregate : dict
        Method to ``(k,)`` aggregate ratings in the order of ``models``.
    predictor : RatingPredictor or None
        The rating predictor of this version.
    bt_json : bytes
        The Bradley-Terry leaderboard document of this version, encoded once: the most
        read answer of the service.
    """

    version: int
    snapshot: dict[str, Any]
    models: tuple[str, ...]
    aggregate: dict[str, np.ndarray]
    predictor: Any | None
    bt_json: bytes = b""

    def ratings(self, method: str) -> dict[str, float]:
        """Model to aggregate rating of ``method``."""
        return dict(zip(self.models, self.aggregate[method].tolist(), strict=True))


def _aggregate_arrays(snapshot: dict[str, Any], models: tuple[str, ...]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for method in METHODS:
        ratings = {m["model"]: m["rating"] for m in snapshot["leaderboards"][method]["models"]}
        arrays[method] = np.array([ratings.get(m, np.nan) for m in models], dtype=np.float64)
    return arrays


def served_version(version: int, snapshot: dict[str, Any], predictor: Any | None) -> Served:
    """The :class:`Served` of a published ``snapshot`` (:mod:`service.snapshot`)."""
    models = tuple(snapshot["models"])
    bt = {**snapshot["leaderboards"]["bt"], "version": version}
    return Served(
        version,
        snapshot,
        models,
        _aggregate_arrays(snapshot, models),
        predictor,
        json.dumps(bt, separators=(",", ":")).encode("utf-8"),
    )


def live_elo_leaderboard(served: Served, live: dict[str, float], n_stored: int) -> dict[str, Any]:
    """The Elo leaderboard moved by every vote since ``served`` was published.

    Parameters
    ----------
    served : Served
        The version whose interval widths and counts are kept.
    live : dict
        Model to its current online Elo rating (the store's state).
    n_stored : int
        Battles in the store now.
    """
    published = served.snapshot["leaderboards"]["elo"]
    rows = {m["model"]: m for m in published["models"]}
    models = tuple(sorted(set(rows) | set(live)))
    point = np.array([live.get(m, rows.get(m, {}).get("rating", 1000.0)) for m in models])
    below = np.array([rows[m]["rating"] - rows[m]["lower"] if m in rows else 0.0 for m in models])
    above = np.array([rows[m]["upper"] - rows[m]["rating"] if m in rows else 0.0 for m in models])

    def column(name: str) -> np.ndarray:
        return np.array([rows[m][name] if m in rows else 0 for m in models], dtype=np.int64)

    counts = ModelCounts(column("battles"), column("wins"), column("losses"), column("ties"))
    new_votes = n_stored - int(served.snapshot.get("store_battles", 0))
    board = build_leaderboard(
        "elo",
        models,
        point,
        point - below,
        point + above,
        counts,
        n_battles=int(published["n_battles"]) + max(new_votes, 0),
        interval=published.get("interval", "bootstrap"),
        confidence=published.get("confidence", 0.95),
    )
    return board.to_dict()
