"""Boards over time of a battle frame: the rating history of a fit, and time windows.

The one place a battle frame's ``tstamp`` becomes periods: ``plb fit`` writes the history
into the fit directory (``history.json``), the report plots it, and the live service
answers ``GET /v1/leaderboard/history`` and ``?since=&until=`` from the same functions.
Periods are merged until each holds ``min_votes`` votes from ``min_users`` people, and a
window is widened to whole periods, so that no answer narrows to fewer people than a
segment may (docs/SPEC.md section 5, segments), and no two windows differ by fewer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.history import DEFAULT_LEVEL, RatingHistory, fit_history
from ranking.io.frames import pairwise_from_battles, vote_order
from ranking.windows import DEFAULT_UNIT, coarsen_grid, period_grid, snap_window

__all__ = [
    "HISTORY_FILE",
    "MIN_USERS",
    "MIN_VOTES",
    "MODEL_MIN_VOTES",
    "NotDated",
    "Window",
    "battle_history",
    "dated",
    "window_battles",
]

#: The fit directory's rating history.
HISTORY_FILE = "history.json"
#: The fewest votes, and people, a period of a fit's history holds (a segment's minimums).
MIN_VOTES = 100
MIN_USERS = 20
#: The fewest votes a model needs in a period of a fit's history to be ranked there.
MODEL_MIN_VOTES = 20


class NotDated(ValueError):
    """The battles carry no ``tstamp``: they cannot be cut by time."""


@dataclass(frozen=True)
class Window:
    """A window widened to whole periods: its first instant and the one after its last."""

    since: float
    until: float


def dated(battles: pd.DataFrame) -> tuple[pd.DataFrame, npt.NDArray[np.float64]]:
    """``battles`` in the order the votes happened, and their unix seconds (NaN unknown).

    Raises
    ------
    NotDated
        When no vote has a ``tstamp``.
    """
    if "tstamp" not in battles.columns or battles["tstamp"].isna().all():
        raise NotDated("the votes carry no tstamp, so they cannot be cut by time")
    ordered = battles.iloc[vote_order(battles)]
    stamps = ordered["tstamp"].to_numpy(dtype=np.float64, na_value=np.nan)
    return ordered, stamps


def _users(battles: pd.DataFrame) -> npt.NDArray[np.intp]:
    """Each vote's user code, ``-1`` without one."""
    if "user_id" not in battles.columns:
        return np.full(len(battles), -1, dtype=np.intp)
    codes, _ = pd.factorize(battles["user_id"].astype("string"))
    return np.asarray(codes, dtype=np.intp)


def battle_history(
    battles: pd.DataFrame,
    *,
    unit: str | int = DEFAULT_UNIT,
    min_votes: int = MIN_VOTES,
    min_users: int = MIN_USERS,
    model_min_votes: int = MODEL_MIN_VOTES,
    level: float = DEFAULT_LEVEL,
) -> RatingHistory | None:
    """The rating history of ``battles`` (:func:`ranking.history.fit_history`), its
    periods merged until each holds ``min_votes`` votes from ``min_users`` people.

    Returns
    -------
    RatingHistory or None
        None when all the votes together hold fewer than the minimums.

    Raises
    ------
    NotDated
        When no vote has a ``tstamp``.
    """
    ordered, stamps = dated(battles)
    cells = coarsen_grid(
        period_grid(stamps, unit), _users(ordered), min_votes=min_votes, min_users=min_users
    )
    if cells is None:
        return None
    return fit_history(
        pairwise_from_battles(ordered), stamps, unit=cells, min_votes=model_min_votes, level=level
    )


def window_battles(
    battles: pd.DataFrame,
    since: float | None,
    until: float | None,
    *,
    min_votes: int,
    min_users: int,
) -> tuple[pd.DataFrame, Window] | None:
    """The votes of ``[since, until)`` widened to whole days, merged until each holds the
    minimums; None when no such period overlaps the window, or the votes are too few.

    Raises
    ------
    NotDated
        When no vote has a ``tstamp``.
    """
    ordered, stamps = dated(battles)
    cells = coarsen_grid(
        period_grid(stamps, "day"), _users(ordered), min_votes=min_votes, min_users=min_users
    )
    if cells is None:
        return None
    snapped = snap_window(cells, since, until)
    if snapped is None:
        return None
    low, high = snapped
    kept = ordered.loc[(stamps >= low) & (stamps < high)]
    return kept, Window(low, high)
