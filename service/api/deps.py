"""Dependencies of the routes: the engine, the settings, and who is asking.

They are ``async def`` because they only look things up: FastAPI runs a plain ``def``
dependency in its thread pool, a hop that costs more than the lookup itself.

The most read routes also answer their common case before the router
(:mod:`service.api.fast_reads`): :func:`request_bearer` reads the bearer credential with
the routes' own :class:`~fastapi.security.HTTPBearer`, and :func:`may_read_user_async`
checks a token by the rule of :func:`can_read_user`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Path, Query, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from service.api.observability import Metrics
from service.live.engine import Engine
from service.live.settings import Settings
from service.live.tokens import keys_match
from service.live.writes import MAX_USER_ID_CHARS

__all__ = [
    "AdminDep",
    "BearerDep",
    "EngineDep",
    "IngestDep",
    "MetricsDep",
    "SettingsDep",
    "TokenQuery",
    "UserId",
    "request_bearer",
    "can_read_user",
    "may_read_user",
    "may_read_user_async",
]

_bearer = HTTPBearer(auto_error=False, description="an ingest key, the admin key or a token")


async def get_engine(request: Request) -> Engine:
    """The engine the app started with."""
    engine: Engine = request.app.state.engine
    return engine


async def get_settings(request: Request) -> Settings:
    """The settings the app was made with."""
    settings: Settings = request.app.state.settings
    return settings


async def get_metrics(request: Request) -> Metrics:
    """The app's metrics."""
    metrics: Metrics = request.app.state.metrics
    return metrics


async def get_bearer(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str | None:
    """The bearer credential of the request, if any."""
    return None if credentials is None else credentials.credentials


async def request_bearer(request: Request) -> str | None:
    """The bearer credential of ``request``, if any, read as the routes read it (their
    :data:`BearerDep`): for an answer given before the router."""
    return await get_bearer(await _bearer(request))


EngineDep = Annotated[Engine, Depends(get_engine)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
BearerDep = Annotated[str | None, Depends(get_bearer)]

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def _secret(value: object) -> str | None:
    return None if value is None else value.get_secret_value()  # type: ignore[attr-defined]


def _require_key(bearer: str | None, accepted: tuple[object, ...], *, name: str, off: str) -> None:
    """Let through a bearer credential equal to one of the ``accepted`` keys.

    403 with ``off`` when the first of them (the route's own key) is unset, 401 without a
    credential, 403 for a wrong one.
    """
    if accepted[0] is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, off)
    if bearer is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            f"the {name} is required (Authorization: Bearer KEY)",
            headers=_CHALLENGE,
        )
    if not any(keys_match(_secret(key), bearer) for key in accepted):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"the {name} is wrong")


async def require_ingest_key(settings: SettingsDep, bearer: BearerDep) -> None:
    """Let through requests carrying the ingest key (or the admin key)."""
    _require_key(
        bearer,
        (settings.ingest_key, settings.admin_key),
        name="ingest key",
        off="ingestion is off: the service has no PLB_INGEST_KEY",
    )


async def require_admin_key(settings: SettingsDep, bearer: BearerDep) -> None:
    """Let through requests carrying the admin key."""
    _require_key(
        bearer,
        (settings.admin_key,),
        name="admin key",
        off="admin routes are off: the service has no PLB_ADMIN_KEY",
    )


IngestDep = Depends(require_ingest_key)
AdminDep = Depends(require_admin_key)

TokenQuery = Annotated[
    str | None,
    Query(description="the user's read token (or send it as Authorization: Bearer TOKEN)"),
]
UserId = Annotated[
    str, Path(min_length=1, max_length=MAX_USER_ID_CHARS, description="the user's id")
]


def may_read_user(
    engine: Engine, settings: Settings, user_id: str, token: str | None, bearer: str | None
) -> bool:
    """Whether the request may read ``user_id``: its query ``token`` when it has one, else
    its ``bearer`` credential.

    The query's token can only be the user's own read token: the admin key is a key, taken
    from the ``Authorization`` header only (a query string ends up in access logs, browser
    histories and ``Referer`` headers).
    """
    if token:
        return engine.credentials.token_matches(user_id, token)
    if bearer is None:
        return False
    return keys_match(_secret(settings.admin_key), bearer) or engine.credentials.token_matches(
        user_id, bearer
    )


async def may_read_user_async(
    engine: Engine, settings: Settings, user_id: str, token: str | None, bearer: str | None
) -> bool:
    """:func:`may_read_user`, the token's store read (its generation) awaited, so that it
    never blocks the event loop on the network."""
    if token:
        return await engine.credentials.token_matches_async(user_id, token)
    if bearer is None:
        return False
    if keys_match(_secret(settings.admin_key), bearer):
        return True
    return await engine.credentials.token_matches_async(user_id, bearer)


def can_read_user(
    engine: Engine, settings: Settings, user_id: str, token: str | None, bearer: str | None
) -> None:
    """Allow the user's own token (query or bearer) or the admin key (bearer only); raise
    401/403 else."""
    if not (token or bearer):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "this user's read token is required (?token=TOKEN or Authorization: Bearer TOKEN)",
            headers=_CHALLENGE,
        )
    if may_read_user(engine, settings, user_id, token, bearer):
        return
    raise HTTPException(status.HTTP_403_FORBIDDEN, "the token does not belong to this user")
