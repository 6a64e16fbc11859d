"""The models a board ranks, and the few-vote models it lists apart as provisional."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import Any

import numpy as np

from ranking.intervals.summary import interval_ranks
from ranking.odds import reading_order
from ranking.types import Leaderboard

__all__ = ["check_min_votes", "split_provisional"]


def check_min_votes(min_votes: Any) -> None:
    """Raise ``ValueError`` unless ``min_votes`` is a non-negative integer."""
    if isinstance(min_votes, bool) or not isinstance(min_votes, int | np.integer):
        raise ValueError(f"Argument 'min_votes' must be an integer, not {min_votes!r}.")
    if min_votes < 0:
        raise ValueError(f"Argument 'min_votes' must be at least 0, not {min_votes}.")


def split_provisional(
    board: Leaderboard, min_votes: int, rankable: Collection[str] | None = None
) -> Leaderboard:
    """Rank only the models with at least ``min_votes`` votes; list the others apart.

    A model with a handful of votes has an interval too wide to say anything, yet its
    rating can be the highest (one win, and nothing to pull it back): public boards rank
    a model only from ``min_votes`` votes on. The ranks (docs/SPEC.md section 2) are
    recomputed among the ranked models, and the ratings are kept as fitted; where the
    votes can be fitted again, ``ranking.leaderboard.fit_leaderboard(..., min_votes=)``
    also keeps the few-vote models out of the others' ratings and intervals. The odds of
    a row (``p_best``, the rank range) speak of the models they were drawn among: when a
    model is set apart, the rows lose them (the draws are not at hand to redo them).

    Parameters
    ----------
    board : Leaderboard
        A leaderboard, best model first.
    min_votes : int
        The fewest battles a ranked model has; 0 ranks every model.
    rankable : collection of str, optional
        The only models that may be ranked (those a published version ranks, for a
        board moved by the votes since): any other is provisional, whatever its votes.

    Returns
    -------
    Leaderboard
        The ranked models, by rank then rating, best first, with ``provisional`` (the
        others, most votes first, then by name) and ``min_votes`` set.

    Raises
    ------
    ValueError
        When ``min_votes`` is negative or not an integer.
    """
    check_min_votes(min_votes)

    def is_ranked(m: Any) -> bool:
        return bool(m.battles >= min_votes and (rankable is None or m.model in rankable))

    ranked = [m for m in board.models if is_ranked(m)]
    provisional = sorted(
        (m for m in board.models if not is_ranked(m)), key=lambda m: (-m.battles, m.model)
    )
    if provisional:
        ranked = [m.plain() for m in ranked]
    if ranked:
        ranks = interval_ranks(
            np.array([m.lower for m in ranked]), np.array([m.upper for m in ranked])
        )
        ranked = [replace(m, rank=int(r)) for m, r in zip(ranked, ranks, strict=True)]
        ranked = [ranked[j] for j in reading_order(ranks, [m.rating for m in ranked])]
    return replace(
        board, models=tuple(ranked), provisional=tuple(provisional), min_votes=int(min_votes)
    )
