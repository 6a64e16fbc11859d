"""``GET /healthz`` and ``GET /metrics``."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from service.api.deps import EngineDep, MetricsDep
from service.api.schemas import HealthPublic, errors

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthPublic, responses=errors(503))
def health(engine: EngineDep, metrics: MetricsDep) -> HealthPublic:
    """Liveness: the store answers, and which model version is served."""
    engine.store.ping()
    version = engine.versions.served().version
    metrics.version.set(version)
    return HealthPublic(status="ok", version=version)


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "description": "the metrics in Prometheus's text format",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        },
        **errors(429, 503),
    },
)
def prometheus_metrics(engine: EngineDep, metrics: MetricsDep) -> Response:
    """Prometheus metrics: requests and latency by route, model version, votes ingested."""
    metrics.version.set(engine.versions.served().version)
    return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)
