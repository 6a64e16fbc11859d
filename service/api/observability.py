"""Prometheus metrics and one structured log line a request, as plain ASGI middleware.

Requests are labelled by their route template (``/v1/users/{user_id}/leaderboard``), never
by the raw path or query string, so neither user ids nor tokens reach the metrics or the
logs.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["JsonFormatter", "Metrics", "ObservabilityMiddleware"]

log = logging.getLogger("plb.access")


class Metrics:
    """The service's metrics, in a registry of their own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "plb_requests",
            "HTTP requests served",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "plb_request_seconds",
            "Time to serve a request",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
            registry=self.registry,
        )
        self.version = Gauge(
            "plb_model_version", "The model version served", registry=self.registry
        )
        self.votes = Counter(
            "plb_votes_ingested", "Battles accepted by POST /v1/battles", registry=self.registry
        )
        self.duplicates = Counter(
            "plb_votes_duplicate", "Battles skipped as duplicates", registry=self.registry
        )
        self.rejected = Counter(
            "plb_votes_rejected", "Battles rejected as invalid", registry=self.registry
        )


def _route(scope: Scope) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


class ObservabilityMiddleware:
    """Count, time and log every HTTP request by route template and status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            elapsed = time.perf_counter() - started
            route = _route(scope)
            self.metrics.requests.labels(scope["method"], route, str(status)).inc()
            self.metrics.latency.labels(route).observe(elapsed)
            if log.isEnabledFor(logging.INFO):
                log.info(
                    "request",
                    extra={
                        "fields": {
                            "method": scope["method"],
                            "route": route,
                            "status": status,
                            "ms": round(elapsed * 1000.0, 2),
                        }
                    },
                )


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message and any ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
