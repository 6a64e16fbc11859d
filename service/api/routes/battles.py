"""``POST /v1/battles``: ingest votes (ingest key)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status

from service.api.deps import EngineDep, IngestDep, MetricsDep, SettingsDep
from service.api.schemas import BattlesIn, IngestPublic, errors
from service.live.results import Ingested

router = APIRouter(prefix="/v1", tags=["battles"])


@router.post(
    "/battles",
    response_model=IngestPublic,
    dependencies=[IngestDep],
    responses=errors(400, 401, 403, 413, 422, 429, 503),
)
def ingest_battles(
    body: BattlesIn, engine: EngineDep, settings: SettingsDep, metrics: MetricsDep
) -> Ingested:
    """Store new votes: the live Elo moves at once and each voter's leaderboard is refitted.

    Each record is checked on its own: bad ones are listed in ``rejected`` (nothing of
    them is stored), repeated ``battle_id`` values are counted in ``duplicates``.
    """
    if len(body.battles) > settings.max_battles:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"battles: {len(body.battles)} records, more than the {settings.max_battles} "
            "allowed in one request",
        )
    result = engine.writes.ingest(body.battles)
    metrics.votes.inc(result.accepted)
    metrics.duplicates.inc(result.duplicates)
    metrics.rejected.inc(len(result.rejected))
    return result
