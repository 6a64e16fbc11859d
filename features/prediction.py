"""What the rating predictor answers, and what it is made of: the predictions and members.

:class:`Prediction` holds some users' predicted (or blended) ratings with their intervals;
:class:`StyleMember` is one of the contextual models that
:class:`features.predictor.RatingPredictor` averages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from sklearn.decomposition import PCA

from ranking.contextual import ContextualBT
from ranking.intervals.summary import interval_ranks
from ranking.odds import RankOdds, interval_odds, rank_range, reading_order
from ranking.types import FloatArray

__all__ = ["Prediction", "Source", "StyleMember"]

Source = Literal["predicted", "blended", "aggregate"]


@dataclass(frozen=True)
class Prediction:
    """Ratings of some users on the Elo scale, with intervals.

    Attributes
    ----------
    source : {"predicted", "blended", "aggregate"}
        From queries alone, a prediction sharpened by the users' own votes, or the
        aggregate board itself (where queries were learnt to tell nothing).
    user_ids : ndarray of object
        Row order.
    models : tuple of str
        Column order.
    ratings, lower, upper : ndarray
        ``(n_users, n_models)``.
    """

    source: Source
    user_ids: npt.NDArray[np.object_]
    models: tuple[str, ...]
    ratings: FloatArray
    lower: FloatArray
    upper: FloatArray

    def ranking(self, row: int = 0, confidence: float = 0.95) -> list[dict[str, Any]]:
        """One user's models in the SPEC ``recommend`` shape, with their odds.

        Ranks follow docs/SPEC.md section 2: 1 + the number of models whose lower bound is
        above this model's upper bound, so models whose intervals overlap share a rank;
        the rows are listed by rank, then rating, best first
        (:func:`ranking.odds.reading_order`). ``p_best``, ``rank_lower`` and
        ``rank_upper`` are read off draws of the Gaussian the ``confidence`` intervals
        stand for (:meth:`odds`), the range widened to hold the rank
        (:func:`ranking.odds.rank_range`).
        """
        odds = self.odds(row, confidence)
        ranks = interval_ranks(self.lower[row], self.upper[row])
        low, high = rank_range(ranks, odds.rank_lower, odds.rank_upper)
        return [
            {
                "model": self.models[j],
                "rating": round(float(self.ratings[row, j]), 2),
                "lower": round(float(self.lower[row, j]), 2),
                "upper": round(float(self.upper[row, j]), 2),
                "rank": int(ranks[j]),
                "p_best": round(float(odds.p_best[j]), 4),
                "rank_lower": int(low[j]),
                "rank_upper": int(high[j]),
            }
            for j in reading_order(ranks, self.ratings[row])
        ]

    def odds(self, row: int = 0, confidence: float = 0.95) -> RankOdds:
        """One user's ``p_best`` and rank ranges (as drawn), in the order of :attr:`models`.

        The interval of each model is taken as ``rating +- z * sd`` of a Gaussian, the
        models independent (what a prediction's intervals say):
        :func:`ranking.odds.interval_odds`, the one computation of such odds.
        """
        return interval_odds(self.ratings[row], self.lower[row], self.upper[row], confidence)


@dataclass(frozen=True)
class StyleMember:
    """One of the contextual models a :class:`RatingPredictor` averages.

    Attributes
    ----------
    components : sklearn.decomposition.PCA
        Principal components of the training users' standardised mean styles.
    scale : ndarray
        Their spread over the training users, so each component has unit variance.
    model : ContextualBT
        The contextual model over 1, the topic and these components.
    """

    components: PCA
    scale: FloatArray
    model: ContextualBT

    def summary(self, n_topics: int, query_names: list[str]) -> dict[str, Any]:
        """What ``predictor.json`` says of this member: its size, penalty and context."""
        n_style = int(self.components.n_components_)
        context = ["1", *(f"topic:{k}" for k in range(n_topics)), *query_names]
        return {
            "style_components": n_style,
            "alpha": self.model.alpha,
            "context": context + [f"style_pc:{k}" for k in range(n_style)],
        }
