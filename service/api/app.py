"""The FastAPI application: ``create_app(settings)`` wires the engine, routes and middleware.

Nothing happens at import time: the store is opened and the fit loaded when the app
starts (its lifespan), and closed when it stops.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from limits.aio.strategies import FixedWindowRateLimiter
from starlette.exceptions import HTTPException

from ranking.io.text_checks import short_repr
from service.api import failures
from service.api.budget import QueryBudget
from service.api.exposure import NoReferrer, WebAssets
from service.api.fast_reads import FastReads
from service.api.guards import BodySizeLimit, BodyTimeout, Counter, RateLimit
from service.api.observability import CountedMount, Metrics, ObservabilityMiddleware
from service.api.proxies import TrustedProxies
from service.api.routes import (
    admin,
    battles,
    catalog,
    credentials,
    docs_assets,
    health,
    history,
    leaderboard,
    next_battle,
    recommend,
    report,
    users,
    web,
)
from service.live.engine import Engine
from service.live.errors import InputError, NotAvailable
from service.live.rates import parse_networks, parse_rates
from service.live.settings import Settings, get_settings
from service.pipeline.artifacts import load_fit
from service.store import open_store
from service.store.base import StoreUnavailable
from service.web import DOCS_ASSETS_DIR, WEB_DIR

__all__ = ["STORE_UNAVAILABLE", "create_app", "open_engine"]

log = logging.getLogger(__name__)

#: The detail of every 503: which store, its address and the cause go to the log only.
STORE_UNAVAILABLE = "the store is unavailable"


def open_engine(settings: Settings) -> Engine:
    """Open the store and the fit directory that ``settings`` name.

    Raises
    ------
    ValueError
        When no fit directory is set, or it cannot be read.
    StoreUnavailable
        When the store cannot be opened.
    """
    if settings.fit_dir is None:
        raise ValueError("no fit directory to serve: set PLB_FIT_DIR (or run 'plb serve DIR')")
    fit = load_fit(settings.fit_dir)
    if settings.redis_url is None:
        store = open_store(path=settings.store_path)
    else:
        store = open_store(
            redis_url=str(settings.redis_url), redis_timeout_s=settings.redis_timeout_s
        )
    try:
        return Engine(store, fit, settings)
    except BaseException:
        store.close()
        raise


def _error(status_code: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status_code)


def _unparsable(cause: BaseException) -> str:
    """Why FastAPI could not read a request body as JSON (it answers 400 without saying)."""
    if isinstance(cause, UnicodeDecodeError):
        return f"the request body is not UTF-8 text (byte {cause.start}: {cause.reason})"
    if isinstance(cause, RecursionError):
        return "the request body is JSON nested too deeply"
    if isinstance(cause, ValueError) and "digits" in str(cause):  # int_max_str_digits
        return "the request body holds an integer of more than 4300 digits"
    return f"the request body cannot be parsed ({type(cause).__name__})"


def create_app(settings: Settings | None = None, *, engine: Engine | None = None) -> FastAPI:
    """The service for ``settings`` (from ``PLB_*`` environment variables by default).

    The engine is opened when the app starts, unless an open ``engine`` is given (the
    app then closes it when it stops).
    """
    settings = settings or get_settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.engine = opened = engine or open_engine(settings)
        # The models loaded at start-up are millions of long-lived objects: freeze them out
        # of the garbage collector's scans, whose full passes would otherwise stall requests.
        gc.collect()
        gc.freeze()
        metrics.version.set(opened.versions.served().version)
        opened.refits.start_background()
        try:
            yield
        finally:
            await opened.store.aclose()  # the store's connections of this event loop
            opened.close()

    app = FastAPI(
        title="personal-leaderboard",
        summary="Which LLM is best for you: aggregate and personal leaderboards.",
        version="0.1.0",
        lifespan=lifespan,
        # Served by the web routes instead, from this origin: FastAPI's own load a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.metrics = metrics

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        if error.status_code == status.HTTP_400_BAD_REQUEST and error.__cause__ is not None:
            error = HTTPException(error.status_code, _unparsable(error.__cause__), error.headers)
        elif error.status_code == status.HTTP_404_NOT_FOUND and "route" not in request.scope:
            # no route or mount matched: say which path (a mount's missing file keeps its
            # plain "Not Found", as for a file that does not exist)
            path = short_repr(request.url.path, 120)
            error = HTTPException(404, f"Not Found: nothing is served at {path}", error.headers)
        return await http_exception_handler(request, error)

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(request: Request, error: StoreUnavailable) -> JSONResponse:
        # the detail (which store, its address, why) is for the server's log only
        log.warning("store unavailable: %s", error)
        return _error(status.HTTP_503_SERVICE_UNAVAILABLE, STORE_UNAVAILABLE)

    @app.exception_handler(InputError)
    async def bad_input(request: Request, error: InputError) -> JSONResponse:
        return _error(status.HTTP_422_UNPROCESSABLE_CONTENT, str(error))

    @app.exception_handler(NotAvailable)
    async def not_available(request: Request, error: NotAvailable) -> JSONResponse:
        return _error(status.HTTP_404_NOT_FOUND, str(error))

    failures.install(app)  # 422 echoing input, and the catch-all 500: always sendable

    for module in (
        leaderboard,
        users,
        credentials,
        recommend,
        battles,
        catalog,
        admin,
        health,
        web,
        report,
        docs_assets,  # before the mount of /docs/assets: ReDoc without its logo's CDN
    ):
        app.include_router(module.router)
    app.include_router(next_battle.router)
    app.include_router(history.router)
    # web assets only: WEB_DIR is a Python package, its source and byte code stay private
    # counted under their mount path in /metrics, not as unmatched
    for path, directory, name in (
        ("/static", WEB_DIR, "static"),
        ("/docs/assets", DOCS_ASSETS_DIR, "docs-assets"),
    ):
        app.router.routes.append(CountedMount(path, WebAssets(directory=directory), name=name))
    # innermost: the limits and the access log see every request
    app.add_middleware(FastReads, answers=[users.FAST_READ, leaderboard.FAST_READ])
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(BodyTimeout, timeout_s=settings.body_timeout_s)
    redis_url = None if settings.redis_url is None else str(settings.redis_url)
    chars_per_address = parse_rates(settings.anonymous_query_chars_per_address)
    budget_counter = Counter(
        redis_url if chars_per_address else None,
        settings.redis_timeout_s,
        strategy=FixedWindowRateLimiter,
        what="query budget",
    )
    app.state.query_budget = QueryBudget(
        settings.anonymous_query_chars, chars_per_address, budget_counter
    )
    app.add_middleware(
        RateLimit,
        per_address=parse_rates(settings.rate_limit_per_address),
        per_key=parse_rates(settings.rate_limit_per_key),
        redis_url=redis_url,
        timeout_s=settings.redis_timeout_s,
        closing=[budget_counter],
    )
    # outside the limits: they count the client a trusted proxy names, or the peer
    app.add_middleware(TrustedProxies, trusted=parse_networks(settings.trusted_proxies))
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    app.add_middleware(ObservabilityMiddleware, metrics=metrics)
    app.add_middleware(NoReferrer)  # outermost: on every response, a 429 or a 500 too
    return app
