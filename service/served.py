"""One published model version as the readers use it, and its live Elo leaderboard.

Public boards rank a model only from ``min_votes`` votes on
(:func:`ranking.leaderboard.split_provisional`); the others are listed apart as
``provisional``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranking.leaderboard import build_leaderboard, split_provisional
from ranking.pairwise import ModelCounts
from ranking.types import SCALE, Leaderboard, Method

__all__ = ["METHODS", "Served", "live_elo_leaderboard", "public_board", "served_version"]

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
        The public Bradley-Terry leaderboard document of this version, encoded once: the
        most read answer of the service.
    boards : dict
        Method to the public leaderboard document of this version: ranked models with at
        least ``min_votes`` votes, the others under ``provisional``.
    min_votes : int
        The fewest votes a model on a public board has.
    """

    version: int
    snapshot: dict[str, Any]
    models: tuple[str, ...]
    aggregate: dict[str, np.ndarray]
    predictor: Any | None
    bt_json: bytes = b""
    boards: dict[str, dict[str, Any]] | None = None
    min_votes: int = 0

    def ratings(self, method: str) -> dict[str, float]:
        """Model to aggregate rating of ``method``."""
        return dict(zip(self.models, self.aggregate[method].tolist(), strict=True))


def _aggregate_arrays(snapshot: dict[str, Any], models: tuple[str, ...]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for method in METHODS:
        ratings = {m["model"]: m["rating"] for m in snapshot["leaderboards"][method]["models"]}
        arrays[method] = np.array([ratings.get(m, np.nan) for m in models], dtype=np.float64)
    return arrays


def public_board(document: dict[str, Any], min_votes: int) -> dict[str, Any]:
    """A leaderboard document as public boards show it: only models with ``min_votes``
    votes ranked, the others under ``provisional``; other fields kept."""
    board = split_provisional(Leaderboard.from_dict(document), min_votes).to_dict()
    return {**document, **board}


def served_version(
    version: int, snapshot: dict[str, Any], predictor: Any | None, min_votes: int = 0
) -> Served:
    """The :class:`Served` of a published ``snapshot`` (:mod:`service.snapshot`)."""
    models = tuple(snapshot["models"])
    boards: dict[str, dict[str, Any]] = {
        m: public_board(snapshot["leaderboards"][m], min_votes) for m in METHODS
    }
    refitted = (snapshot.get("public") or {}).get("bt")
    if refitted is not None and refitted.get("min_votes") == min_votes:
        boards["bt"] = refitted  # fitted without the provisional models' votes
    bt = {**boards["bt"], "version": version}
    return Served(
        version,
        snapshot,
        models,
        _aggregate_arrays(snapshot, models),
        predictor,
        json.dumps(bt, separators=(",", ":")).encode("utf-8"),
        boards,
        min_votes,
    )


def live_elo_leaderboard(
    served: Served,
    live: dict[str, float],
    n_stored: int,
    since: dict[str, tuple[int, int, int, int]] | None = None,
) -> dict[str, Any]:
    """The Elo leaderboard moved by every vote since ``served`` was published.

    Parameters
    ----------
    served : Served
        The version whose interval widths and counts are kept.
    live : dict
        Model to its current online Elo rating (the store's state).
    n_stored : int
        Battles in the store now.
    since : dict, optional
        Model to its ``(battles, wins, losses, ties)`` among the votes stored since
        ``served`` was published, added to the version's counts.

    Returns
    -------
    dict
        The public leaderboard document (:func:`public_board` with ``served.min_votes``).
        A model the version has no interval for (registered or voted on since) gets the
        span of the version's intervals around its rating, at least ``SCALE`` Elo points
        either side: wide, never zero-width.
    """
    published = served.snapshot["leaderboards"]["elo"]
    rows = {m["model"]: m for m in published["models"]}
    models = tuple(sorted(set(rows) | set(live)))
    point = np.array([live.get(m, rows.get(m, {}).get("rating", 1000.0)) for m in models])
    lowest = min((r["lower"] for r in rows.values()), default=np.inf)
    highest = max((r["upper"] for r in rows.values()), default=-np.inf)
    lower = np.array(
        [
            point[j] - rows[m]["rating"] + rows[m]["lower"]
            if m in rows
            else min(lowest, point[j] - SCALE)
            for j, m in enumerate(models)
        ]
    )
    upper = np.array(
        [
            point[j] - rows[m]["rating"] + rows[m]["upper"]
            if m in rows
            else max(highest, point[j] + SCALE)
            for j, m in enumerate(models)
        ]
    )
    since = since or {}

    def column(i: int, name: str) -> np.ndarray:
        return np.array(
            [(rows[m][name] if m in rows else 0) + since.get(m, (0, 0, 0, 0))[i] for m in models],
            dtype=np.int64,
        )

    counts = ModelCounts(
        column(0, "battles"), column(1, "wins"), column(2, "losses"), column(3, "ties")
    )
    new_votes = n_stored - int(served.snapshot.get("store_battles", 0))
    board = build_leaderboard(
        "elo",
        models,
        point,
        lower,
        upper,
        counts,
        n_battles=int(published["n_battles"]) + max(new_votes, 0),
        interval=published.get("interval", "bootstrap"),
        confidence=published.get("confidence", 0.95),
    )
    return split_provisional(board, served.min_votes).to_dict()
