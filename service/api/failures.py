"""Error answers that can always be sent: echoed input made encodable, and the catch-all.

Two handlers the app installs (:func:`install`):

* a request the framework cannot validate answers 422 in the one error shape of the
  service (:class:`~service.api.schemas.errors.ErrorPublic`): ``detail`` one line naming
  each field and its value (:func:`validation_message`), and ``errors`` FastAPI's own
  list (one entry a problem, echoing the input), every value in both made encodable
  first: a lone surrogate (JSON ``"\\ud800"``) cannot be written as UTF-8, and it is
  shown escaped (``\\ud800``) instead; ``NaN`` and the infinities (which Python's JSON
  reader takes, and a JSON answer cannot hold) are shown as the strings ``"NaN"``,
  ``"Infinity"`` and ``"-Infinity"``;
* anything unexpected answers ``500 {"detail": "internal error"}``, JSON like every other
  error, with ``Connection: close``: the connection is dropped after a 500, and the
  client is told so instead of finding out on its next request.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ranking.io.text_checks import short_repr

__all__ = ["encodable", "install", "validation_message"]

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


def _field(loc: Sequence[str | int]) -> str:
    """``("body", "votes", 0, "model_a")`` as ``body 'votes[0].model_a'``."""
    where, *path = loc or ["request"]
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return f"{where} {name!r}" if name else str(where)


def validation_message(errors: Sequence[Mapping[str, Any]]) -> str:
    """One line for FastAPI's list of validation errors: each field, what is wrong, the value.

    Parameters
    ----------
    errors : sequence of mapping
        ``RequestValidationError.errors()``: entries with ``loc``, ``msg``, ``type`` and
        ``input``.

    Returns
    -------
    str
        The problems joined by ``"; "``, e.g. ``query 'method': Input should be 'bt' or
        'elo', not 'glicko'``; a missing field names no value, and a long value is
        abbreviated (:func:`~ranking.io.text_checks.short_repr`); a body that is not JSON
        says where its text stops being JSON (``body: JSON decode error at character 36
        (Unterminated string starting at)``).
    """
    parts = []
    for error in errors:
        if error.get("type") == "json_invalid":  # loc: ("body", character); no value
            where, *at = error.get("loc", ("body",))
            why = (error.get("ctx") or {}).get("error")
            place = f" at character {at[0]}" if at else ""
            parts.append(f"{where}: JSON decode error{place}" + (f" ({why})" if why else ""))
            continue
        part = f"{_field(error.get('loc', ()))}: {error.get('msg') or 'invalid'}"
        if error.get("type") != "missing" and "input" in error:
            value = error["input"]
            if isinstance(value, float) and not math.isfinite(value):
                value = encodable(value)  # 'NaN', as the list shows it
            part += f", not {short_repr(value)}"
        parts.append(part)
    return str(encodable("; ".join(parts) or "the request is invalid"))


def install(app: FastAPI) -> None:
    """Add the validation-error and catch-all handlers to ``app``."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        return JSONResponse(
            {
                "detail": validation_message(problems),
                "errors": encodable(jsonable_encoder(problems)),
            },
            status_code=status.HTTP_422_UNPROCESSABLE_CONTENT,
        )

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> JSONResponse:
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=error)
        return JSONResponse(
            {"detail": "internal error"},
            status_code=status.HTTP_500_INTERNAL_SERVER_ERROR,
            headers={"Connection": "close"},
        )
