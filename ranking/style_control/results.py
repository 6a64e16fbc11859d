"""What style control gives: the controlled board beside the raw one
(:class:`StyleControl`) and what a unit of each style covariate is worth
(:class:`StyleCoefficient`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ranking.types import Leaderboard

__all__ = [
    "StyleCoefficient",
    "StyleControl",
]


@dataclass(frozen=True)
class StyleCoefficient:
    """What a unit of one style covariate is worth, on the Elo scale.

    Attributes
    ----------
    feature : str
        The covariate's name (e.g. ``"length"``).
    coefficient : float
        Elo points a vote's ``model_a`` gains per unit of the covariate (for a length
        compared as ``log2`` of the ratio: points per doubling of the length).
    lower, upper : float
        Its interval, at the board's confidence.
    """

    feature: str
    coefficient: float
    lower: float
    upper: float

    def to_dict(self) -> dict[str, Any]:
        """The coefficient as a JSON object."""
        return {
            "feature": self.feature,
            "coefficient": round(self.coefficient, 2),
            "lower": round(self.lower, 2),
            "upper": round(self.upper, 2),
        }


@dataclass(frozen=True)
class StyleControl:
    """A style-controlled leaderboard with its coefficients, and the raw board beside it.

    Attributes
    ----------
    board : Leaderboard
        The ratings with style held equal (method ``"bt"``), intervals, ranks and odds as
        on any Bradley-Terry board.
    raw : Leaderboard
        The plain Bradley-Terry board of the same votes, weights, prior and intervals.
    coefficients : tuple of StyleCoefficient
        One per covariate that varies among the votes, in the order given.
    scaling : str
        How the covariates were made from the answers (recorded with the fit, so that a
        later reading compares like with like), e.g. ``"mixed"``.
    """

    board: Leaderboard
    raw: Leaderboard
    coefficients: tuple[StyleCoefficient, ...]
    scaling: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The controlled board's JSON (docs/SPEC.md section 3) with ``style_control``:
        the scaling, the coefficients, and each model's raw rating and rank."""
        document = self.board.to_dict()
        document["style_control"] = {
            "scaling": self.scaling,
            "coefficients": [c.to_dict() for c in self.coefficients],
            "raw": [
                {"model": m.model, "rating": round(m.rating, 2), "rank": m.rank}
                for m in self.raw.models
            ],
        }
        return document
