"""``GET /v1/leaderboard/history``: the board of each period and which models drifted."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status

from ranking.windows import parse_unit
from service.api.deps import EngineDep
from service.api.schemas import errors
from service.api.schemas.history import HistoryPublic

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["leaderboard"])

#: ``?unit=``: the periods, before they are merged to hold the segment minimums.
UnitQuery = Annotated[
    str,
    Query(
        description="auto (the coarsest of month, week, day giving 4 periods), month, week, "
        "day, or a number of equal periods (1-100)"
    ),
]


@router.get("/leaderboard/history", response_model=HistoryPublic, responses=errors(422, 429, 503))
def read_history(engine: EngineDep, unit: UnitQuery = "auto") -> dict[str, Any]:
    """The Bradley-Terry board of each period of the served version's votes (by their
    ``tstamp``), and the drift tests between consecutive periods.

    Periods of ``unit`` are merged until each holds ``PLB_SEGMENT_MIN_VOTES`` votes from
    ``PLB_SEGMENT_MIN_USERS`` people. A model is flagged when its change of rating between
    two periods is beyond what their intervals allow, Holm-corrected over every model and
    period (a stable arena raises a false alarm with probability at most ``level``).
    """
    try:
        periods = parse_unit(unit)
    except ValueError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"unit: {error}") from None
    return engine.reads.rating_history(periods)
