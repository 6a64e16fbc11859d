"""The fast path of the most read routes (issue 18): the same answers, byte for byte.

``GET /v1/users/{user_id}/leaderboard`` answers a valid, authorised request for a stored
board with the stored bytes, before FastAPI solves a dependency; ``GET /v1/leaderboard``
without a query string answers the version's encoded board. Every other request runs the
route as declared, so the errors (401, 403, 404, 422) are the same as before, and a token
is checked exactly as strictly. The access log is sampled at high rates, the counts in
``/metrics`` staying exact.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.responses import JSONResponse

from service.api import deps as users
from service.api import observability
from service.api.observability import AccessLog, Metrics
from service.api.routes import users as users_module
from service.live.writes import MAX_USER_ID_CHARS
from service.store.base import StoreUnavailable
from tests.service.conftest import (
    ADMIN,
    ADMIN_KEY,
    INGEST,
    assert_error,
    bearer,
    open_client,
    service_settings,
)


@pytest.fixture
def client(shared_fit: Path, store: dict[str, Any]) -> Iterator[TestClient]:
    with open_client(service_settings(shared_fit, **store)) as test_client:
        yield test_client


def vote(user: str, i: int = 0) -> dict[str, Any]:
    return {
        "battle_id": f"fast-{user}-{i}",
        "model_a": "pico-3b",
        "model_b": "lyra-mini",
        "winner": "model_a",
        "user_id": user,
    }


def new_user(client: TestClient, user: str) -> str:
    """Ingest a first vote of ``user``; their read token."""
    response = client.post("/v1/battles", json={"battles": [vote(user)]}, headers=INGEST)
    assert response.status_code == 200, response.text
    token: str = response.json()["tokens"][user]
    return token


def path_of(user: str) -> str:
    return f"/v1/users/{urllib.parse.quote(user, safe='')}/leaderboard"


@pytest.mark.parametrize("user", ["fast-user", "zoë-日本 user", "a:b?c#d&e"])
def test_the_stored_board_is_answered_as_the_route_answered_it(
    client: TestClient, user: str
) -> None:
    token = new_user(client, user)
    engine = client.app.state.engine  # type: ignore[attr-defined]
    for method in ("bt", "elo"):
        first = client.get(path_of(user), params={"token": token, "method": method})
        assert first.status_code == 200, first.text  # refitted and stored, or stored
        document = engine.reads.stored_user_leaderboard(user, method)
        assert document is not None and document["user_id"] == user
        expected = JSONResponse(document)  # what the route answered before issue 18
        for response in (
            client.get(path_of(user), params={"token": token, "method": method}),
            client.get(path_of(user), params={"method": method}, headers=bearer(token)),
            client.get(path_of(user), params={"method": method}, headers=ADMIN),
        ):
            assert response.status_code == 200, response.text
            assert response.content == expected.body
            assert response.headers["content-type"] == expected.headers["content-type"]
            assert response.headers["content-length"] == expected.headers["content-length"]
            assert response.json() == document
    default = client.get(path_of(user), params={"token": token})
    assert default.content == JSONResponse(engine.reads.stored_user_leaderboard(user, "bt")).body


def test_a_token_is_checked_as_strictly(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = new_user(client, "strict-user")
    other = new_user(client, "strict-other")
    path = path_of("strict-user")
    assert client.get(path, params={"token": token}).status_code == 200  # stored now
    declared: list[str] = []  # the requests the declared route checked

    def checked(engine: Any, settings: Any, user_id: str, *presented: Any) -> None:
        declared.append(user_id)
        users.can_read_user(engine, settings, user_id, *presented)

    monkeypatch.setattr(users_module, "can_read_user", checked)
    assert client.get(path, params={"token": token}).status_code == 200
    assert client.get(path, headers=ADMIN).status_code == 200
    assert declared == []  # answered by the fast path

    missing = client.get(path)
    assert_error(missing, 401, "token")
    assert missing.headers["www-authenticate"] == "Bearer"
    assert_error(client.get(path, params={"token": ""}), 401, "token")
    assert_error(client.get(path, params={"token": other}), 403, "does not belong")
    assert_error(client.get(path, params={"token": token + "x"}), 403, "does not belong")
    assert_error(client.get(path, params={"token": token[:-1]}), 403, "does not belong")
    assert_error(client.get(path, headers=bearer(other)), 403, "does not belong")
    assert_error(client.get(path, headers=INGEST), 403, "does not belong")
    # the admin key is a key: read from the Authorization header only, never from the query
    assert_error(client.get(path, params={"token": ADMIN_KEY}), 403, "does not belong")
    # only a bearer credential counts, as HTTPBearer reads it
    assert_error(client.get(path, headers={"Authorization": f"Basic {token}"}), 401)
    assert_error(client.get(path, headers={"Authorization": "Bearer "}), 401)
    assert_error(client.get(path, headers={"Authorization": token}), 401)
    assert client.get(path, headers={"Authorization": f"bearer {token}"}).status_code == 200
    # the query's token comes first, as in the declared route
    assert_error(client.get(path, params={"token": other}, headers=bearer(token)), 403)
    assert client.get(path, params={"token": token}, headers=bearer(other)).status_code == 200
    # a user's token reads that user only, also one whose board is stored
    assert_error(client.get(path_of("strict-other"), params={"token": token}), 403)
    assert len(declared) == 13  # every refusal came from the declared route


def test_bad_input_is_the_declared_routes_422(client: TestClient) -> None:
    token = new_user(client, "bad-input-user")
    path = path_of("bad-input-user")
    assert client.get(path, params={"token": token}).status_code == 200
    response = client.get(path, params={"token": token, "method": "glicko"})
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error["loc"] == ["query", "method"] and error["input"] == "glicko"
    response = client.get(path, params={"token": token, "method": ""})
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["query", "method"]
    # the last of repeated parameters counts, in both paths
    repeated = client.get(f"{path}?token={token}&method=bt&method=glicko")
    assert repeated.status_code == 422
    assert client.get(f"{path}?token={token}&method=glicko&method=elo").status_code == 200
    long_id = "u" * (MAX_USER_ID_CHARS + 1)
    response = client.get(path_of(long_id), headers=ADMIN)
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error["loc"] == ["path", "user_id"] and error["input"] == long_id
    assert_error(client.get(path_of("nobody-at-all"), headers=ADMIN), 404, "nobody")


def test_the_fast_answer_is_counted_under_its_route_and_a_store_failure_is_a_503(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = new_user(client, "counted-user")
    path = path_of("counted-user")
    assert client.get(path, params={"token": token}).status_code == 200  # stored now
    for _ in range(3):
        assert client.get(path, params={"token": token}).status_code == 200
    metrics = client.get("/metrics").text
    label = 'method="GET",route="/v1/users/{user_id}/leaderboard",status="200"'
    assert f"plb_requests_total{{{label}}} 4.0" in metrics

    engine = client.app.state.engine  # type: ignore[attr-defined]

    async def down(*args: Any) -> bytes:
        raise StoreUnavailable("get_user: the store is down")

    monkeypatch.setattr(engine.reads, "stored_user_leaderboard_body", down)
    client.event_hooks = {"request": [], "response": []}  # the 503 is what is asserted
    detail = assert_error(client.get(path, params={"token": token}), 503)
    assert detail == "the store is unavailable"  # why is for the server's log only


def test_a_board_of_an_older_version_is_refitted_not_served(client: TestClient) -> None:
    token = new_user(client, "version-user")
    path = path_of("version-user")
    before = client.get(path, params={"token": token}).json()
    assert client.post("/v1/admin/refit", headers=ADMIN).status_code == 200
    after = client.get(path, params={"token": token})
    assert after.status_code == 200
    assert after.json()["version"] == before["version"] + 1


def test_the_aggregate_board_is_the_versions_bytes(client: TestClient) -> None:
    engine = client.app.state.engine  # type: ignore[attr-defined]
    plain = client.get("/v1/leaderboard")
    assert plain.status_code == 200
    assert plain.content == engine.versions.served().bt_json
    assert plain.headers["content-type"] == "application/json"
    assert client.get("/v1/leaderboard", params={"method": "bt"}).content == plain.content
    assert client.get("/v1/leaderboard", params={"method": "glicko"}).status_code == 422


def test_metrics_count_every_request_while_the_log_is_sampled(
    shared_fit: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(observability.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(observability, "ACCESS_LOG_LINES_PER_S", 3)
    caplog.set_level(logging.INFO, logger="plb.access")
    settings = service_settings(shared_fit, store_path=tmp_path / "s.sqlite")
    with open_client(settings) as client:
        for _ in range(12):  # one second of 12 requests: all logged
            assert client.get("/v1/leaderboard").status_code == 200
        clock[0] += 1.0
        for _ in range(12):  # the next: sampled one in 4, errors all logged
            assert client.get("/v1/leaderboard").status_code == 200
        for _ in range(2):
            assert client.get("/v1/leaderboard", params={"method": "x"}).status_code == 422
        clock[0] += 1.0
        metrics = client.get("/metrics").text
    lines = [r for r in caplog.records if r.name == "plb.access"]
    requests = [r.fields for r in lines if r.getMessage() == "request"]  # type: ignore[attr-defined]
    board = [f for f in requests if f["route"] == "/v1/leaderboard"]
    assert all(set(f) == {"method", "route", "status", "ms"} for f in requests)
    assert len([f for f in board if f["status"] == 200]) == 12 + 3
    assert len([f for f in board if f["status"] == 422]) == 2
    (summary,) = [r.fields for r in lines if r.getMessage() == "access log sampled"]  # type: ignore[attr-defined]
    assert summary == {"one_in": 4, "requests": 14, "logged": 5}
    assert 'plb_requests_total{method="GET",route="/v1/leaderboard",status="200"} 24.0' in metrics
    assert 'plb_requests_total{method="GET",route="/v1/leaderboard",status="422"} 2.0' in metrics
    assert "plb_access_log_skipped_total 9.0" in metrics


def test_the_access_log_below_its_threshold_logs_every_request(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [50.0]
    monkeypatch.setattr(observability.time, "monotonic", lambda: clock[0])
    caplog.set_level(logging.INFO, logger="plb.access")
    metrics = Metrics()
    access = AccessLog(metrics.log_skipped, lines_per_s=10)
    for second in range(3):
        clock[0] = 50.0 + second
        for _ in range(10):
            access.write("GET", "/x", 200, 0.001)
    assert len([r for r in caplog.records if r.getMessage() == "request"]) == 30
    unlogged = AccessLog(metrics.log_skipped, lines_per_s=None)
    clock[0] = 60.0
    for _ in range(50):
        unlogged.write("GET", "/x", 200, 0.001)
    clock[0] = 61.0
    for _ in range(50):
        unlogged.write("GET", "/x", 200, 0.001)
    assert len([r for r in caplog.records if r.getMessage() == "request"]) == 130
    with pytest.raises(ValueError, match="'lines_per_s' must be at least 1, not 0"):
        AccessLog(metrics.log_skipped, lines_per_s=0)
