"""Error bodies: the one shape of every 4xx and 5xx, and each route's ``responses=``.

Every error answers ``{"detail": "..."}``: one line saying what is wrong, naming the
field and the value. A request the framework could not validate (a 422 of FastAPI) adds
``errors``, its list of problems, one entry each (``loc``, ``msg``, ``type``, ``input``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ERRORS", "ErrorPublic", "FieldErrorPublic", "errors"]


class FieldErrorPublic(BaseModel):
    """One problem FastAPI found while validating a request (a 422 of the framework)."""

    model_config = ConfigDict(extra="allow")

    loc: list[str | int]
    msg: str
    type: str


class ErrorPublic(BaseModel):
    """Every 4xx and 5xx answer: ``{"detail": "..."}`` (docs/SPEC.md sections 4 and 5),
    with ``errors`` where the request failed validation field by field."""

    detail: str = Field(description="what is wrong, in one line naming the field and the value")
    errors: list[FieldErrorPublic] = Field(
        default_factory=list,
        description="only on a 422 of request validation: one entry a problem, each naming "
        "its place (loc), what is wrong (msg) and the value sent (input)",
    )


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorPublic, "description": description}


#: The error answers of the service, by status; routes document theirs with :func:`errors`.
ERRORS: dict[int, dict[str, Any]] = {
    400: _error("the request body is not UTF-8 JSON, or its Content-Length is not a number"),
    401: _error("no credential was sent (Authorization: Bearer ...)"),
    403: _error("the credential is wrong, or this part of the service is off"),
    404: _error("what was asked for does not exist in the served fit"),
    413: _error("the request body is larger than PLB_MAX_BODY_BYTES"),
    422: _error("the request is malformed: the detail names the field and the value"),
    429: _error("too many requests: retry after Retry-After seconds"),
    503: _error("the store is unreachable; the service recovers by itself"),
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` of a route that can answer ``statuses``."""
    return {status: ERRORS[status] for status in statuses}
