"""The most read answers, given before routing: :class:`FastReads`.

The user board and the aggregate board are read far more often than anything else, and
their common case (valid, authorised, stored) is a few stored bytes. Answered inside the
route, each request also paid for FastAPI's routing of included routers and the request
cycle of a route, about as much again as the answer (bench G). This middleware sits inside
the service's own middleware (the access log and metrics, the rate limits, the body
limit), so those see every request as before, and answers the common case before the
router; every other request goes on to the app as declared.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["FastPath", "FastRead", "FastReads", "route_of"]

log = logging.getLogger(__name__)

FastPath = Callable[[Request], Awaitable[Response | None]]
"""``answer(request)``: the response of the common case, or None to run the route as declared."""
FastRead = tuple[BaseRoute, FastPath]
"""A route and the answer of its common case."""


def route_of(routes: Sequence[BaseRoute], endpoint: Callable[..., object]) -> BaseRoute:
    """The route of ``routes`` (a router's) whose endpoint is ``endpoint``."""
    for route in routes:
        if getattr(route, "endpoint", None) is endpoint:
            return route
    raise LookupError(f"no route has the endpoint {endpoint!r}")


class FastReads:
    """Answer the common case of the given routes' GET requests before the router.

    Parameters
    ----------
    app : ASGI app
        The app as declared, which answers every request an answer leaves.
    answers : sequence of (route, answer)
        For a GET whose path ``route`` matches (its own matching: the router's),
        ``answer(request)`` gives the response, or None to leave the request to ``app``,
        which routes it and answers it as declared, errors included (a bad parameter, a
        missing or wrong token, a board not stored). An answer that raises leaves the
        request too: the declared route meets the same error and answers it through the
        app's handlers (a 503 for a store that is down), never a bare 500 from here. The
        matched route is put in the scope as the router puts it, so that the metrics and
        the access log name the route template.
    """

    def __init__(self, app: ASGIApp, answers: Sequence[FastRead]) -> None:
        self.app = app
        self.answers = tuple(answers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            for route, answer in self.answers:
                match, child = route.matches(scope)
                if match is Match.FULL:
                    response = await _answered(answer, Request({**scope, **child}, receive))
                    if response is not None:
                        scope.update(child)
                        scope["route"] = route  # as the router sets it
                        await response(scope, receive, send)
                        return
                    break
        await self.app(scope, receive, send)


async def _answered(answer: FastPath, request: Request) -> Response | None:
    try:
        return await answer(request)
    except Exception as error:  # the declared route answers it, through the app's handlers
        log.debug("fast read left to the route: %s: %s", type(error).__name__, error)
        return None
