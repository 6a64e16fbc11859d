"""Prometheus metrics and one structured log line a request, as plain ASGI middleware.

Requests are labelled by their route template (``/v1/users/{user_id}/leaderboard``), never
by the raw path or query string, so neither user ids nor tokens reach the metrics or the
logs. A file of a mounted folder is labelled by its mount (``/static``,
``/docs/assets``: a :class:`CountedMount`), and a path no route matches is ``unmatched``,
so the labels stay a fixed, small set whatever paths clients ask for.

The metrics count every request exactly. The access log (logger ``plb.access``) writes one
line a request, with the fields ``method``, ``route``, ``status`` and ``ms``, as long as
the process serves at most :data:`ACCESS_LOG_LINES_PER_S` requests a second; above that it
is sampled (:class:`AccessLog`): one answer in N below 400 is logged, N chosen from the
last second's rate so that about that many lines a second are written, and every answer of
400 or more is still logged. Each second sampled ends in one line ``access log sampled``
with the fields ``one_in`` (N), ``requests`` (the second's requests) and ``logged``;
``plb_requests_total`` and ``plb_request_seconds`` in ``/metrics`` stay exact, and
``plb_access_log_skipped_total`` counts the requests left out of the log.
"""

from __future__ import annotations

import json
import logging
import math
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "ACCESS_LOG_LINES_PER_S",
    "AccessLog",
    "CountedMount",
    "JsonFormatter",
    "Metrics",
    "ObservabilityMiddleware",
]

log = logging.getLogger("plb.access")

#: Requests a second up to which every one is logged; the sampled log's lines a second.
ACCESS_LOG_LINES_PER_S = 200
_DEFAULT = object()


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
        self.log_skipped = Counter(
            "plb_access_log_skipped",
            "Requests left out of the sampled access log (all are in plb_requests_total)",
            registry=self.registry,
        )
        # the labelled children of each (method, route, status): labels() costs a lookup
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one request and its time."""
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            children = (
                self.requests.labels(method, route, str(status)),
                self.latency.labels(route),
            )
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)


class AccessLog:
    """One ``plb.access`` line a request, sampled above ``lines_per_s`` requests a second.

    Parameters
    ----------
    skipped : Counter
        Counts the requests left out of the log.
    lines_per_s : int or None, default :data:`ACCESS_LOG_LINES_PER_S` (read when made)
        Up to this many requests a second every one is logged; above, one in
        N = ceil(last second's requests / ``lines_per_s``) below status 400, and every
        one from 400 up. None logs every request.
    """

    def __init__(self, skipped: Counter, lines_per_s: int | None | object = _DEFAULT) -> None:
        if lines_per_s is _DEFAULT:
            lines_per_s = ACCESS_LOG_LINES_PER_S
        if lines_per_s is not None and (not isinstance(lines_per_s, int) or lines_per_s < 1):
            raise ValueError(f"Argument 'lines_per_s' must be at least 1, not {lines_per_s!r}")
        self.skipped = skipped
        self.lines_per_s: int | None = lines_per_s
        self._second = 0  # the second of the clock counted in
        self._requests = 0  # requests in that second
        self._logged = 0  # lines written in that second
        self._one_in = 1  # the sampling of that second, from the one before

    def _next_second(self, second: int) -> None:
        if self._one_in > 1:
            log.info(
                "access log sampled",
                extra={
                    "fields": {
                        "one_in": self._one_in,
                        "requests": self._requests,
                        "logged": self._logged,
                    }
                },
            )
        rate = self._requests if second == self._second + 1 else 0
        limit = self.lines_per_s
        self._one_in = 1 if limit is None or rate <= limit else math.ceil(rate / limit)
        self._second, self._requests, self._logged = second, 0, 0

    def write(self, method: str, route: str, status: int, seconds: float) -> None:
        """Log one request (or, sampled, count it as left out)."""
        if not log.isEnabledFor(logging.INFO):
            return
        second = int(time.monotonic())
        if second != self._second:
            self._next_second(second)
        self._requests += 1
        if status < 400 and self._one_in > 1 and self._requests % self._one_in:
            self.skipped.inc()
            return
        self._logged += 1
        log.info(
            "request",
            extra={
                "fields": {
                    "method": method,
                    "route": route,
                    "status": status,
                    "ms": round(seconds * 1000.0, 2),
                }
            },
        )


class CountedMount(Mount):
    """A :class:`~starlette.routing.Mount` whose requests are counted under its path.

    Starlette's mount does not name itself in the request's scope (a route does), so the
    files it serves would be counted as ``unmatched``; this one sets ``scope["route"]``
    to itself, and :class:`ObservabilityMiddleware` labels them with its path.
    """

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        if match is Match.FULL:
            child_scope["route"] = self
        return match, child_scope


def _route(scope: Scope) -> str:
    route = scope.get("route")
    return getattr(route, "path", None) or "unmatched"


class ObservabilityMiddleware:
    """Count, time and log every HTTP request by route template and status.

    ``log_lines_per_s`` is the :class:`AccessLog`'s sampling threshold (None: every line).
    """

    def __init__(
        self,
        app: ASGIApp,
        metrics: Metrics,
        log_lines_per_s: int | None | object = _DEFAULT,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = AccessLog(metrics.log_skipped, log_lines_per_s)

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
            self.metrics.observe(scope["method"], route, status, elapsed)
            self.access_log.write(scope["method"], route, status, elapsed)


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
