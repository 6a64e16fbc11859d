"""Admin routes (admin key): refit now, register models, the voters left out of the
public boards, and a user's read token."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from starlette.concurrency import run_in_threadpool

from service.api.deps import AdminDep, EngineDep, MetricsDep, UserId
from service.api.schemas import (
    IntegrityPublic,
    ModelsIn,
    RefitPublic,
    RegisteredPublic,
    TokenPublic,
    errors,
)
from service.live.errors import InputError
from service.live.results import IntegrityReport, Registered

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[AdminDep])


@router.post("/refit", response_model=RefitPublic, responses=errors(401, 403, 429, 503))
async def refit(engine: EngineDep, metrics: MetricsDep) -> RefitPublic:
    """Refit the aggregate and per-user agreement on all battles and publish a version.

    Returns when the new version is published; reads go on meanwhile.
    """
    version = await run_in_threadpool(engine.refits.refit)
    metrics.version.set(version)
    return RefitPublic(version=version)


@router.post(
    "/models", response_model=RegisteredPublic, responses=errors(400, 401, 403, 413, 422, 429, 503)
)
def register_models(body: ModelsIn, engine: EngineDep) -> Registered:
    """Add models to the catalogue: votes naming them are accepted from now on, by every
    replica sharing the store. A model is ranked on public boards once it has
    ``PLB_MIN_MODEL_VOTES`` votes."""
    try:
        return engine.writes.register_models(body.models)
    except InputError as error:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error)) from None


@router.get("/integrity", response_model=IntegrityPublic, responses=errors(401, 403, 429, 503))
def integrity(engine: EngineDep) -> IntegrityReport:
    """The users the served version's public boards leave out, with the evidence.

    Each refit caps every user's votes per day (``PLB_DAILY_VOTE_CAP``) and tests each
    user against everyone else (``PLB_FLAG_VOTERS``): random clickers and users who vote
    one model up. Their votes stay stored and count in their own leaderboard.
    """
    return engine.reads.integrity_report()


@router.get(
    "/users/{user_id}/token", response_model=TokenPublic, responses=errors(401, 403, 422, 429)
)
def read_token(user_id: UserId, engine: EngineDep) -> TokenPublic:
    """The read token of any user (for users of the fitted log, who never got one)."""
    return TokenPublic(user_id=user_id, token=engine.credentials.token(user_id))
