"""Error answers that can always be sent: echoed input made encodable, and the catch-all.

Two handlers the app installs (:func:`install`):

* a request the framework cannot validate answers 422 with FastAPI's own detail (one
  entry a problem, echoing the input), every value in it made encodable first: a lone
  surrogate (JSON ``"\\ud800"``) cannot be written as UTF-8, and it is shown escaped
  (``\\ud800``) instead; ``NaN`` and the infinities (which Python's JSON reader takes,
  and a JSON answer cannot hold) are shown as the strings ``"NaN"``, ``"Infinity"`` and
  ``"-Infinity"``;
* anything unexpected answers ``500 {"detail": "internal error"}``, JSON like every other
  error, with ``Connection: close``: the connection is dropped after a 500, and the
  client is told so instead of finding out on its next request.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

__all__ = ["encodable", "install"]

log = logging.getLogger(__name__)


def encodable(value: Any) -> Any:
    """``value`` with every string (keys too) encodable as UTF-8, lone surrogates escaped,
    and every float one JSON can hold: ``NaN`` and infinities as the tokens' names."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(v) for v in value]
    return value


def install(app: FastAPI) -> None:
    """Add the validation-error and catch-all handlers to ``app``."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        detail = encodable(jsonable_encoder(error.errors()))
        return JSONResponse({"detail": detail}, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> JSONResponse:
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=error)
        return JSONResponse(
            {"detail": "internal error"},
            status_code=status.HTTP_500_INTERNAL_SERVER_ERROR,
            headers={"Connection": "close"},
        )
