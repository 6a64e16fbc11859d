"""The apps benchmark G's uvicorn serves (``--factory bench.service.apps:NAME``)."""

from __future__ import annotations

from typing import Any

__all__ = ["hello_fastapi_app", "serving_app", "trivial_app"]


def trivial_app() -> Any:
    """A Starlette app with one async route that answers a constant JSON document."""
    from starlette.applications import Starlette
    from starlette.requests import Request as HttpRequest
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def hello(request: HttpRequest) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/", hello)])


def hello_fastapi_app() -> Any:
    """A FastAPI app with one async route that answers a constant JSON document."""
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/")
    async def hello() -> dict[str, str]:
        return {"status": "ok"}

    return app


def serving_app() -> Any:
    """The service as ``plb serve`` makes it (its JSON access log included), from ``PLB_*``."""
    from service.api.app import create_app
    from service.cli.serve import _configure_logging

    _configure_logging()
    return create_app()
