"""One error shape (issue 32): every 4xx and 5xx answers ``{"detail": "..."}``.

``detail`` is always one string naming the field and the value; a request the framework
could not validate (its 422) adds ``errors``, FastAPI's list of problems. Each kind of
error the service answers is provoked here, from the router's 404 and 405 to the rate
limit's 429, the store's 503 and the catch-all 500, and the schema declares that shape
(``ErrorPublic``) for every error status of every route.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.api.schemas import ErrorPublic
from service.store.base import StoreUnavailable
from tests.service.conftest import (
    ADMIN,
    INGEST,
    bearer,
    open_client,
    service_settings,
)


@pytest.fixture(scope="module")
def client(shared_fit: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    store = tmp_path_factory.mktemp("errors") / "s.sqlite"
    with open_client(service_settings(shared_fit, store_path=store), allow_5xx=True) as c:
        yield c


def one_shape(response: Any, status: int) -> dict[str, Any]:
    """The body of an error answer of ``status``, checked to be the one shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert set(body) <= {"detail", "errors"}, body
    assert isinstance(body["detail"], str) and body["detail"], body
    ErrorPublic.model_validate(body)
    return body


def test_a_framework_422_says_the_field_and_value_and_lists_the_problems(
    client: TestClient,
) -> None:
    body = one_shape(client.get("/v1/leaderboard", params={"method": "glicko"}), 422)
    assert body["detail"] == "query 'method': Input should be 'bt' or 'elo', not 'glicko'"
    (problem,) = body["errors"]
    assert problem["loc"] == ["query", "method"] and problem["input"] == "glicko"
    # a body: each problem named by its path, a missing field without a value
    response = client.post("/v1/recommend", json={"queries": [5], "votes": [{}], "prompt": 7})
    body = one_shape(response, 422)
    assert "body 'queries[0]': Input should be a valid string, not 5" in body["detail"]
    assert "body 'prompt': Input should be a valid string, not 7" in body["detail"]
    assert body["detail"].count("; ") == len(body["errors"]) - 1
    missing = one_shape(client.post("/v1/recommend", json={}), 422)
    assert missing["detail"] == "body 'queries': Field required"
    # a body that is not JSON: where its text stops being JSON
    sent = b'{"battles": [{"model_a": "x", "mod'
    response = client.post(
        "/v1/battles", content=sent, headers={**INGEST, "content-type": "application/json"}
    )
    body = one_shape(response, 422)
    assert (
        body["detail"]
        == "body: JSON decode error at character 30 (Unterminated string starting at)"
    )
    # a long value is abbreviated in the detail, kept whole in the list
    long = "x" * 5_000
    body = one_shape(client.get("/v1/leaderboard", params={"method": long}), 422)
    assert len(body["detail"]) < 200 and body["errors"][0]["input"] == long


def test_route_errors_are_a_detail_alone(client: TestClient) -> None:
    for response, status in [
        (client.get("/v1/nothing-here"), 404),
        (client.delete("/v1/leaderboard"), 405),
        (client.get("/v1/leaderboard", params={"where": "user_id=1"}), 422),
        (client.get("/v1/users/someone/leaderboard"), 401),
        (client.get("/v1/users/someone/leaderboard", headers=bearer("wrong-token")), 403),
        (client.get("/v1/users/nobody-at-all/leaderboard", headers=ADMIN), 404),
        (client.get("/report"), 404),
        (
            client.post(
                "/v1/battles",
                content=b'{"battles": [\xff]}',
                headers={**INGEST, "content-type": "application/json"},
            ),
            400,
        ),
    ]:
        assert "errors" not in one_shape(response, status)
    # a path nothing serves is named; a missing file of a mount is "Not Found" as before
    nowhere = one_shape(client.get("/v1/nothing-here"), 404)
    assert nowhere["detail"] == "Not Found: nothing is served at '/v1/nothing-here'"
    assert one_shape(client.get("/static/no-such-file.js"), 404) == {"detail": "Not Found"}


def test_the_guards_answer_the_same_shape(shared_fit: Path, tmp_path: Path) -> None:
    settings = service_settings(
        shared_fit,
        store_path=tmp_path / "s.sqlite",
        max_body_bytes=2048,
        rate_limit_per_address="3/minute",
    )
    with open_client(settings) as client:
        big = client.post("/v1/recommend", json={"queries": ["x" * 4096]})
        assert "2,048 bytes" in one_shape(big, 413)["detail"]
        answers = [client.get("/v1/models") for _ in range(4)]
        limited = one_shape(answers[-1], 429)
        assert answers[-1].headers["retry-after"] and limited["detail"]


def test_the_store_down_and_a_bug_answer_the_same_shape(
    shared_fit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down() -> None:
        raise StoreUnavailable("redis://10.0.0.1:6379 refused")

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    settings = service_settings(shared_fit, store_path=tmp_path / "s.sqlite")
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        engine = client.app.state.engine  # type: ignore[attr-defined]
        monkeypatch.setattr(engine.store, "ping", down)
        assert one_shape(client.get("/healthz"), 503) == {"detail": "the store is unavailable"}
        monkeypatch.setattr(engine.reads, "leaderboard", bug)
        answer = client.get("/v1/leaderboard", params={"method": "elo"})
        assert one_shape(answer, 500) == {"detail": "internal error"}


def test_the_schema_declares_the_shape_for_every_error(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    error = schema["components"]["schemas"]["ErrorPublic"]
    assert error["required"] == ["detail"]
    assert error["properties"]["detail"]["type"] == "string"
    assert error["properties"]["errors"]["type"] == "array"
    assert "HTTPValidationError" not in schema["components"]["schemas"]  # FastAPI's list
    statuses = 0
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for status, response in operation["responses"].items():
                if int(status) < 400:
                    continue
                statuses += 1
                declared = response["content"]["application/json"]["schema"]
                assert declared == {"$ref": "#/components/schemas/ErrorPublic"}, (
                    method,
                    path,
                    status,
                )
    assert statuses > 50
