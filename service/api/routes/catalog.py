"""``GET /v1/models``, ``GET /v1/topics``, ``GET /v1/analysis/correlations`` and
``GET /v1/about``: what the served fit holds."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter

from service.api.deps import EngineDep
from service.api.schemas import (
    AboutPublic,
    CorrelationsPublic,
    ModelsPublic,
    TopicsPublic,
    errors,
)
from service.live.results import About, Correlations, ModelCounts, Topics

router = APIRouter(prefix="/v1", tags=["catalog"])


@router.get("/models", response_model=ModelsPublic, responses=errors(429, 503))
def read_models(engine: EngineDep) -> ModelCounts:
    """The models of the served version, with their battle counts."""
    return engine.reads.models()


@router.get("/topics", response_model=TopicsPublic, responses=errors(404, 429, 503))
def read_topics(engine: EngineDep) -> Topics:
    """The topics of the users' queries, with their top words and sizes."""
    return engine.reads.topics()


@router.get(
    "/analysis/correlations",
    response_model=CorrelationsPublic,
    response_model_exclude_unset=True,
    responses=errors(404, 422, 429, 503),
)
def read_correlations(
    engine: EngineDep,
    method: Literal["bt", "elo"] = "bt",
    shrinkage: Literal["cv", "none"] = "cv",
) -> Correlations:
    """How per-user rankings agree with the aggregate: the users summary of docs/SPEC.md section 3
    and the histogram of per-user Spearman (``shrinkage=none`` is the study's plain fit)."""
    return engine.reads.correlations(method, shrinkage)


@router.get("/about", response_model=AboutPublic, responses=errors(429, 503))
def read_about(engine: EngineDep) -> About:
    """What is served: whether the arena is simulated (``plb serve --demo``), and the fit's
    date. The web page says so when it is; ``style_control``: whether
    ``GET /v1/leaderboard?style=control`` has a board to answer (the page shows it then)."""
    return engine.reads.about()
