"""Answers before routing (:mod:`service.api.fast_reads`): only the common case, and the
route as declared for everything else, errors included."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from service.api.fast_reads import FastReads, route_of

answered: list[str] = []


async def declared(request: Request) -> Response:
    """The route as declared: it names itself, and fails as the app's handler says."""
    if request.path_params["name"] == "broken":
        raise LookupError("nothing stored")
    return PlainTextResponse(f"declared {request.path_params['name']}")


async def fast(request: Request) -> Response | None:
    name = request.path_params["name"]
    answered.append(name)
    if name == "broken":
        raise LookupError("the store is down")
    if request.query_params.get("miss"):
        return None
    return PlainTextResponse(f"fast {name}")


async def unrelated(request: Request) -> Response:
    return PlainTextResponse("unrelated")


async def not_found(request: Request, error: Exception) -> Response:
    return PlainTextResponse(f"handled: {error}", status_code=503)


def make_client() -> tuple[TestClient, list[dict[str, Any]]]:
    routes = [Route("/boards/{name}", declared), Route("/other", unrelated)]
    seen: list[dict[str, Any]] = []

    class Recorder:  # outside FastReads, as the access log is: what it sees of the scope
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await self.app(scope, receive, send)
            seen.append(scope)

    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(Recorder),
            Middleware(FastReads, answers=[(route_of(routes, declared), fast)]),
        ],
        exception_handlers={LookupError: not_found},
    )
    return TestClient(app), seen


@pytest.fixture(autouse=True)
def _clear() -> None:
    answered.clear()


def test_the_common_case_is_answered_before_the_router_and_named_as_its_route() -> None:
    client, seen = make_client()
    response = client.get("/boards/a%20b")
    assert response.text == "fast a b"  # the path decoded as the router decodes it
    assert answered == ["a b"]
    assert seen[-1]["route"].path == "/boards/{name}"  # for the metrics and the access log


def test_what_an_answer_leaves_goes_to_the_route_as_declared() -> None:
    client, _ = make_client()
    assert client.get("/boards/x", params={"miss": "1"}).text == "declared x"
    assert client.get("/other").text == "unrelated"
    assert client.post("/boards/x").status_code == 405  # not a GET: the router's answer
    assert client.get("/boards/x/more").status_code == 404
    assert answered == ["x"]


def test_an_answer_that_raises_is_the_declared_routes_handled_error_not_a_500() -> None:
    client, _ = make_client()
    response = client.get("/boards/broken")
    assert response.status_code == 503 and response.text == "handled: nothing stored"
    assert answered == ["broken"]


def test_route_of_names_a_missing_endpoint() -> None:
    with pytest.raises(LookupError, match="no route has the endpoint"):
        route_of([Route("/other", unrelated)], declared)
