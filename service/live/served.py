"""One published model version as the readers use it, and its live Elo leaderboard.

Public boards rank a model only from ``min_votes`` votes on
(:func:`ranking.leaderboard.split_provisional`); the others are listed apart as
``provisional``. They count only the votes the version's integrity screen kept
(:mod:`service.pipeline.integrity`); its flagged users are :attr:`Served.flagged`.

The live Elo board is the version's Elo continued over the votes counted since it was
published (:func:`live_window`), so every replica computes the same board from the store,
and the votes a refit leaves out also leave the live board.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ranking.io.frames import pairwise_from_battles
from ranking.leaderboard import build_leaderboard, read_leaderboard, with_interval_odds
from ranking.pairwise import ModelCounts, model_counts
from ranking.provisional import split_provisional
from ranking.types import SCALE, Method
from service.live.votes import battle_frame, elo_update
from service.pipeline.snapshot import Snapshot

__all__ = [
    "METHODS",
    "LiveWindow",
    "Served",
    "live_elo_leaderboard",
    "live_window",
    "public_board",
    "served_version",
]

METHODS: tuple[Method, ...] = ("bt", "elo")


@dataclass(frozen=True)
class Served:
    """One published model version, as the readers use it.

    Attributes
    ----------
    version : int
        The store's snapshot version.
    snapshot : Snapshot
        The published document (:mod:`service.pipeline.snapshot`).
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
    flagged : frozenset of str
        The users whose votes this version's public boards leave out.
    """

    version: int
    snapshot: Snapshot
    models: tuple[str, ...]
    aggregate: dict[str, np.ndarray]
    predictor: Any | None
    bt_json: bytes = b""
    boards: dict[str, dict[str, Any]] | None = None
    min_votes: int = 0
    flagged: frozenset[str] = frozenset()

    def public_rows(self, method: str) -> list[dict[str, Any]]:
        """The ranked rows of the public board of ``method`` (provisional models apart)."""
        board = (self.boards or {}).get(method) or self.snapshot.leaderboards[method]
        return list(board["models"])

    @property
    def provisional(self) -> frozenset[str]:
        """The models the public Bradley-Terry board lists apart, with too few votes to
        rank: kept out of every personal board but those of the users who voted on them."""
        board = (self.boards or {}).get("bt") or {}
        return frozenset(str(row["model"]) for row in board.get("provisional", ()))

    def ratings(self, method: str) -> dict[str, float]:
        """Model to aggregate rating of ``method``."""
        return dict(zip(self.models, self.aggregate[method].tolist(), strict=True))


def _aggregate_arrays(snapshot: Snapshot, models: tuple[str, ...]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for method in METHODS:
        ratings = {m["model"]: m["rating"] for m in snapshot.leaderboards[method]["models"]}
        arrays[method] = np.array([ratings.get(m, np.nan) for m in models], dtype=np.float64)
    return arrays


def public_board(document: dict[str, Any], min_votes: int) -> dict[str, Any]:
    """A leaderboard document as public boards show it: only models with ``min_votes``
    votes ranked, the others under ``provisional``; other fields kept."""
    board = split_provisional(read_leaderboard(document), min_votes).to_dict()
    return {**document, **board}


def served_version(
    version: int, snapshot: Snapshot, predictor: Any | None, min_votes: int = 0
) -> Served:
    """The :class:`Served` of a published ``snapshot`` (:mod:`service.pipeline.snapshot`)."""
    models = snapshot.models
    boards: dict[str, dict[str, Any]] = {
        m: public_board(snapshot.leaderboards[m], min_votes) for m in METHODS
    }
    refitted = (snapshot.public or {}).get("bt")
    if refitted is not None and refitted.get("min_votes") == min_votes:
        boards["bt"] = refitted  # fitted without the provisional models' votes
    bt = {**boards["bt"], "version": version}
    integrity = snapshot.integrity or {}
    return Served(
        version,
        snapshot,
        models,
        _aggregate_arrays(snapshot, models),
        predictor,
        json.dumps(bt, separators=(",", ":")).encode("utf-8"),
        boards,
        min_votes,
        frozenset(str(f["user_id"]) for f in integrity.get("flagged", ())),
    )


@dataclass(frozen=True)
class LiveWindow:
    """The votes counted into the aggregate since a version was published.

    Attributes
    ----------
    ratings : dict
        Model to its online Elo rating: the version's, continued over these votes.
    counts : dict
        Model to its ``(battles, wins, losses, ties)`` among these votes.
    n_votes : int
        How many votes.
    """

    ratings: dict[str, float]
    counts: dict[str, tuple[int, int, int, int]]
    n_votes: int


def live_window(
    served: Served, battles: list[dict[str, Any]], catalogue: Iterable[str] = ()
) -> LiveWindow:
    """The :class:`LiveWindow` of ``battles``, the counted votes stored since ``served``
    was published, in arrival order; a ``catalogue`` model the version has no rating for
    starts at 1000, as in a fresh run."""
    published = served.snapshot.leaderboards["elo"]["models"]
    start = dict.fromkeys(catalogue, 1000.0) | {m["model"]: float(m["rating"]) for m in published}
    if not battles:
        return LiveWindow(start, {}, 0)
    data = pairwise_from_battles(battle_frame(battles))
    c = model_counts(data)
    counts = {
        m: (int(c.battles[j]), int(c.wins[j]), int(c.losses[j]), int(c.ties[j]))
        for j, m in enumerate(data.models)
    }
    return LiveWindow(elo_update(start, battles), counts, len(battles))


def live_elo_leaderboard(
    served: Served, window: LiveWindow, *, within_intervals: bool = True
) -> dict[str, Any]:
    """The Elo leaderboard moved by every vote counted since ``served`` was published.

    Parameters
    ----------
    served : Served
        The version whose interval widths and counts are kept.
    window : LiveWindow
        The votes counted since: their ratings replace the version's, their counts are
        added to the version's, as is their number to ``n_battles``.
    within_intervals : bool
        Keep the live board within the version's intervals and ranks (below); false
        (each interval moving with its point, as before issue 31) only to measure what
        that defends against (``bench/ranking/price_to_crown.py``).

    Returns
    -------
    dict
        The public leaderboard document (:func:`public_board` with ``served.min_votes``).
        A model's live rating moves only within the version's interval of it, which it
        keeps, and only the models the version ranks are ranked: the ranks are the
        version's (its intervals decide them), and a rank they do not allow waits for
        the next refit, whose integrity screen sees the votes
        that would give it (issue 31: one made-up voter's 300 votes took the weakest
        model from 8th to 1st). A model the version has no interval for (registered or
        voted on since) is provisional (unless ``min_votes`` is 0), with the span of the
        version's intervals around its rating, at least ``SCALE`` Elo points either side:
        wide, never zero-width. Every ranked row carries ``p_best`` and its rank range,
        read off the independent Gaussians its interval stands for, among the ranked
        models (:func:`ranking.leaderboard.with_interval_odds`; the version's bootstrap
        replicates are not kept), the range holding the row's rank. ``n_battles`` is the
        version's count plus the votes counted since: the votes its next refit counts.
    """
    published = served.snapshot.leaderboards["elo"]
    rows = {m["model"]: m for m in published["models"]}
    live = window.ratings
    models = tuple(sorted(set(rows) | set(live)))

    def bounded(m: str) -> float:
        rating = live.get(m, rows.get(m, {}).get("rating", 1000.0))
        if m in rows and within_intervals:
            return float(np.clip(rating, rows[m]["lower"], rows[m]["upper"]))
        return float(rating)

    point = np.array([bounded(m) for m in models])
    lowest = min((r["lower"] for r in rows.values()), default=np.inf)
    highest = max((r["upper"] for r in rows.values()), default=-np.inf)
    # within the intervals, each keeps the version's; else it moves with its point
    shift = 0.0 if within_intervals else 1.0
    lower = np.array(
        [
            rows[m]["lower"] + shift * (point[j] - rows[m]["rating"])
            if m in rows
            else min(lowest, point[j] - SCALE)
            for j, m in enumerate(models)
        ]
    )
    upper = np.array(
        [
            rows[m]["upper"] + shift * (point[j] - rows[m]["rating"])
            if m in rows
            else max(highest, point[j] + SCALE)
            for j, m in enumerate(models)
        ]
    )
    since = window.counts

    def column(i: int, name: str) -> np.ndarray:
        return np.array(
            [(rows[m][name] if m in rows else 0) + since.get(m, (0, 0, 0, 0))[i] for m in models],
            dtype=np.int64,
        )

    counts = ModelCounts(
        column(0, "battles"), column(1, "wins"), column(2, "losses"), column(3, "ties")
    )
    board = build_leaderboard(
        "elo",
        models,
        point,
        lower,
        upper,
        counts,
        n_battles=int(published["n_battles"]) + window.n_votes,
        interval=published.get("interval", "bootstrap"),
        confidence=published.get("confidence", 0.95),
    )
    ranked = {m for m, row in rows.items() if row["battles"] >= served.min_votes}
    rankable = ranked if within_intervals and served.min_votes > 0 else None
    public = split_provisional(board, served.min_votes, rankable=rankable)
    return with_interval_odds(public).to_dict()
