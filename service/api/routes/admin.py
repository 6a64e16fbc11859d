"""Admin routes (admin key): refit now, and a user's read token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from service.api.deps import AdminDep, EngineDep, MetricsDep
from service.api.routes.users import UserId
from service.api.schemas import RefitPublic, TokenPublic, errors

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[AdminDep])


@router.post("/refit", response_model=RefitPublic, responses=errors(401, 403, 429, 503))
async def refit(engine: EngineDep, metrics: MetricsDep) -> dict[str, Any]:
    """Refit the aggregate and per-user agreement on all battles and publish a version.

    Returns when the new version is published; reads go on meanwhile.
    """
    version = await run_in_threadpool(engine.refit)
    metrics.version.set(version)
    return {"version": version}


@router.get(
    "/users/{user_id}/token", response_model=TokenPublic, responses=errors(401, 403, 422, 429)
)
def read_token(user_id: UserId, engine: EngineDep) -> dict[str, Any]:
    """The read token of any user (for users of the fitted log, who never got one)."""
    return {"user_id": user_id, "token": engine.token(user_id)}
