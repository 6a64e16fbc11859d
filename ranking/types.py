"""The data shapes every module of ``ranking`` speaks, named once.

Array conventions
-----------------
``Matchups``
    ``(n, 2)`` integer array; row ``i`` holds the indices of ``model_a`` and ``model_b``.
``Outcomes``
    ``(n,)`` float array; ``1.0`` when ``model_a`` won, ``0.0`` when ``model_b`` won and
    ``0.5`` for any tie (``tie``, ``tie (bothbad)``, ``both_bad``).
``Weights``
    ``(n,)`` float array of non-negative counts; a collapsed row stands for that many votes.
``Ratings``
    ``(k,)`` float array, one value per model, on the natural-log (``log strength``) scale
    inside the solvers and on the Elo scale in a :class:`Leaderboard`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "BASE",
    "CENTER",
    "SCALE",
    "TIE_WINNERS",
    "WINNER_OUTCOME",
    "BoolArray",
    "FloatArray",
    "Int64Array",
    "IntArray",
    "Interval",
    "Leaderboard",
    "Matchups",
    "Method",
    "ModelRating",
    "ODDS_FIELDS",
    "Outcomes",
    "PROVISIONAL_FIELDS",
    "PairwiseData",
    "RankedRating",
    "Ratings",
    "Weights",
]

#: Generic arrays, for what has no name of its own (new modules use these, not their own).
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
Int64Array = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

Matchups = npt.NDArray[np.intp]
Outcomes = npt.NDArray[np.float64]
Weights = npt.NDArray[np.float64]
Ratings = npt.NDArray[np.float64]

Method = Literal["bt", "elo"]
#: How a leaderboard's intervals were made: the aggregate's sandwich or bootstrap, the
#: Laplace posterior of a shrunk per-user fit, or none.
Interval = Literal["sandwich", "bootstrap", "laplace", "none"]

#: Elo scale: rating = CENTER + SCALE * log_BASE(strength).
SCALE = 400.0
BASE = 10.0
CENTER = 1000.0

#: The canonical ``winner`` values of a battle log and the outcome each one stands for.
WINNER_OUTCOME: Mapping[str, float] = {
    "model_a": 1.0,
    "model_b": 0.0,
    "tie": 0.5,
    "tie (bothbad)": 0.5,
    "both_bad": 0.5,
}
TIE_WINNERS = frozenset(w for w, y in WINNER_OUTCOME.items() if y == 0.5)


@dataclass(frozen=True)
class PairwiseData:
    """Votes as arrays: the models named once, then one row per (possibly collapsed) vote.

    Attributes
    ----------
    models : tuple of str
        Model names; index ``j`` in ``matchups`` refers to ``models[j]``.
    matchups : Matchups
        ``(n, 2)`` model indices.
    outcomes : Outcomes
        ``(n,)`` outcome for ``model_a``.
    weights : Weights
        ``(n,)`` number of votes each row stands for.
    """

    models: tuple[str, ...]
    matchups: Matchups
    outcomes: Outcomes
    weights: Weights

    @property
    def n_models(self) -> int:
        """Number of models."""
        return len(self.models)

    @property
    def n_votes(self) -> float:
        """Total number of votes (the sum of the weights)."""
        return float(self.weights.sum())

    def select(self, rows: npt.NDArray[np.bool_]) -> PairwiseData:
        """The votes where ``rows`` (a boolean mask) is true, with the same model index."""
        return PairwiseData(
            self.models, self.matchups[rows], self.outcomes[rows], self.weights[rows]
        )


#: The fields a provisional model is listed with: its counts, never a rating or rank.
PROVISIONAL_FIELDS = ("model", "battles", "wins", "losses", "ties")


@dataclass(frozen=True)
class ModelRating:
    """One row of a leaderboard (docs/SPEC.md section 3, ``leaderboard`` JSON)."""

    model: str
    rating: float
    lower: float
    upper: float
    rank: int
    battles: int
    wins: int
    losses: int
    ties: int

    def plain(self) -> ModelRating:
        """The row without anything a subclass adds (such as its odds)."""
        return ModelRating(**{f.name: getattr(self, f.name) for f in fields(ModelRating)})

    def to_dict(self) -> dict[str, Any]:
        """The row as the JSON object of docs/SPEC.md section 3."""
        return {
            "model": self.model,
            "rating": round(self.rating, 2),
            "lower": round(self.lower, 2),
            "upper": round(self.upper, 2),
            "rank": self.rank,
            "battles": self.battles,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
        }


#: The fields a row gains from the draws behind its interval (docs/SPEC.md section 2).
ODDS_FIELDS = ("p_best", "rank_lower", "rank_upper")


@dataclass(frozen=True)
class RankedRating(ModelRating):
    """A leaderboard row with its odds, read off the draws behind its interval.

    Attributes
    ----------
    p_best : float
        Probability that the model is the best of the models listed (the column sums
        to 1).
    rank_lower, rank_upper : int
        The range of its rank at the board's confidence (1 is best), widened to hold
        ``rank`` (:func:`ranking.odds.rank_range`).
    """

    p_best: float = float("nan")
    rank_lower: int = 0
    rank_upper: int = 0

    @classmethod
    def of(cls, row: ModelRating, p_best: float, rank_lower: int, rank_upper: int) -> RankedRating:
        """``row`` with these odds."""
        return cls(
            **{f.name: getattr(row, f.name) for f in fields(ModelRating)},
            p_best=float(p_best),
            rank_lower=int(rank_lower),
            rank_upper=int(rank_upper),
        )

    def to_dict(self) -> dict[str, Any]:
        """The row of docs/SPEC.md section 3 with ``p_best``, ``rank_lower``, ``rank_upper``."""
        return {
            **super().to_dict(),
            "p_best": round(self.p_best, 4),
            "rank_lower": self.rank_lower,
            "rank_upper": self.rank_upper,
        }


_ROW_FIELDS = ("model", "rating", "lower", "upper", "rank", "battles", "wins", "losses", "ties")


@dataclass(frozen=True)
class Leaderboard:
    """An aggregate leaderboard on the Elo scale, best model first.

    Attributes
    ----------
    method : {"bt", "elo"}
        How the ratings were fitted.
    n_battles : int
        Number of votes behind it.
    models : tuple of ModelRating
        By rank, then rating, best first (:func:`ranking.odds.reading_order`).
    interval : {"sandwich", "bootstrap", "laplace", "none"}
        How ``lower`` and ``upper`` were computed (with ``"none"`` they equal the rating).
    confidence : float
        Coverage of the intervals.
    provisional : tuple of ModelRating, optional
        Models left off the ranks for having too few votes
        (:func:`ranking.provisional.split_provisional`), most votes first; ``None`` when
        no minimum was applied. Their rows are kept for the counts only.
    min_votes : int, optional
        The fewest votes a ranked model has, when a minimum was applied.
    """

    method: Method
    n_battles: int
    models: tuple[ModelRating, ...]
    interval: Interval = "none"
    confidence: float = 0.95
    provisional: tuple[ModelRating, ...] | None = None
    min_votes: int | None = None
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {m.model: i for i, m in enumerate(self.models)})

    def __getitem__(self, model: str) -> ModelRating:
        try:
            return self.models[self._index[model]]
        except KeyError:
            raise KeyError(f"Model {model!r} is not on this leaderboard.") from None

    @property
    def ratings(self) -> dict[str, float]:
        """Model name to rating."""
        return {m.model: m.rating for m in self.models}

    def win_probability(self, model_a: str, model_b: str) -> float:
        """Predicted probability that ``model_a`` beats ``model_b`` (a tie counting half).

        Parameters
        ----------
        model_a, model_b : str
            Names of two models on this leaderboard.

        Returns
        -------
        float
            ``1 / (1 + BASE ** ((r_b - r_a) / SCALE))``.
        """
        diff = self[model_b].rating - self[model_a].rating
        return 1.0 / (1.0 + math.pow(BASE, diff / SCALE))

    def win_matrix(self) -> npt.NDArray[np.float64]:
        """Predicted win probabilities of every row model against every column model."""
        r = np.array([m.rating for m in self.models])
        return 1.0 / (1.0 + np.power(BASE, (r[None, :] - r[:, None]) / SCALE))

    def to_dict(self) -> dict[str, Any]:
        """The leaderboard as the JSON document of docs/SPEC.md section 3.

        With a minimum of votes applied it also holds ``min_votes`` and ``provisional``:
        each provisional model's ``model``, ``battles``, ``wins``, ``losses`` and ``ties``
        (no rating, interval or rank: too few votes to say).
        """
        document: dict[str, Any] = {
            "method": self.method,
            "n_battles": self.n_battles,
            "interval": self.interval,
            "confidence": self.confidence,
            "models": [m.to_dict() for m in self.models],
        }
        if self.provisional is not None:
            document["min_votes"] = self.min_votes
            document["provisional"] = [
                {k: v for k, v in m.to_dict().items() if k in PROVISIONAL_FIELDS}
                for m in self.provisional
            ]
        return document

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Leaderboard:
        """The leaderboard of a :meth:`to_dict` document (its ranked ``models`` only).

        Raises
        ------
        ValueError
            When a row lacks a field of :class:`ModelRating`, naming the row and the field.
        """
        rows = []
        for i, row in enumerate(document["models"]):
            try:
                rows.append(ModelRating(**{f: row[f] for f in _ROW_FIELDS}))
            except KeyError as error:
                raise ValueError(f"models[{i}] has no field {error.args[0]!r}") from None
        return cls(
            method=document["method"],
            n_battles=int(document["n_battles"]),
            models=tuple(rows),
            interval=document.get("interval", "none"),
            confidence=float(document.get("confidence", 0.95)),
        )
