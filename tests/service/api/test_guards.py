"""Request guards: body size limits (413) and rate limits (429), before any route runs."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from service.api.guards import REDIS_KEY_PREFIX, RateLimit
from service.live.rates import parse_rates
from tests.redis_server import RedisServer, free_port, require_redis_server
from tests.service.conftest import INGEST_KEY, assert_error, bearer, open_client, service_settings


def test_parse_rates() -> None:
    assert [str(r) for r in parse_rates("5/second;100/minute")] == [
        "5 per 1 second",
        "100 per 1 minute",
    ]
    assert parse_rates("off") == parse_rates("") == parse_rates(None) == []
    with pytest.raises(ValueError):
        parse_rates("lots")


def test_a_body_over_the_limit_is_413_and_nothing_is_stored(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    settings = service_settings(
        shared_fit_no_features, store_path=tmp_path / "s.sqlite", max_body_bytes=4096
    )
    battle = {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "tie", "user_id": "big"}
    with open_client(settings) as client:
        before = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        body = {"battles": [battle] * 200}  # about 14 kB
        response = client.post("/v1/battles", json=body, headers=bearer(INGEST_KEY))
        assert_error(response, 413, "4,096 bytes")

        def chunks():  # no Content-Length: the limit is enforced while the body streams
            yield b'{"battles": ['
            for _ in range(100):
                yield b'{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "tie"},'
            yield b"{}]}"

        headers = {**bearer(INGEST_KEY), "content-type": "application/json"}
        response = client.post("/v1/battles", content=chunks(), headers=headers)
        assert_error(response, 413, "bytes")
        after = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        assert after["n_battles"] == before["n_battles"]


def test_a_garbled_content_length_is_400(client_no_features: TestClient) -> None:
    headers = {
        **bearer(INGEST_KEY),
        "content-length": "lots",
        "content-type": "application/json",
    }
    response = client_no_features.post("/v1/battles", content=b"{}", headers=headers)
    assert_error(response, 400, "Content-Length")


def test_rate_limit_per_address(shared_fit_no_features: Path, tmp_path: Path) -> None:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        rate_limit_per_address="5/minute",
    )
    with open_client(settings) as client:
        codes = [client.get("/v1/models").status_code for _ in range(7)]
        assert codes == [200] * 5 + [429] * 2
        response = client.get("/v1/leaderboard")
        assert_error(response, 429, "too many requests")
        assert int(response.headers["retry-after"]) >= 1
        assert client.get("/healthz").status_code == 200  # health checks are never limited
        metrics = client.get("/healthz")
        assert metrics.status_code == 200


def test_rate_limit_per_key_counts_each_key_apart(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "s.sqlite",
        rate_limit_per_key="3/minute",
    )
    with open_client(settings) as client:
        one, two = bearer("a-token-of-some-user"), bearer("another-token-entirely")
        codes = [client.get("/v1/models", headers=one).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        assert client.get("/v1/models", headers=two).status_code == 200
        assert client.get("/v1/models").status_code == 200  # no key: the address limit only


def limited_app(rates: str, redis_url: str, retry_s: float) -> Starlette:
    """A bare app behind :class:`RateLimit` on ``redis_url`` (no store, no fit)."""

    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = Starlette(routes=[Route("/", hello)])
    app.add_middleware(
        RateLimit,
        per_address=parse_rates(rates),
        per_key=[],
        redis_url=redis_url,
        timeout_s=0.5,
        retry_s=retry_s,
    )
    return app


def limit_keys(url: str) -> list[bytes]:
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        return list(client.scan_iter(f"{REDIS_KEY_PREFIX}:*"))
    finally:
        client.close()


def test_an_unreachable_redis_counts_in_the_process_never_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = limited_app("3/hour", f"redis://127.0.0.1:{free_port()}/0", retry_s=3600)
    with caplog.at_level(logging.WARNING, "service.api.guards"), TestClient(app) as client:
        responses = [client.get("/") for _ in range(5)]
    assert [r.status_code for r in responses] == [200] * 3 + [429] * 2
    assert int(responses[-1].headers["retry-after"]) >= 1
    warnings = [r.getMessage() for r in caplog.records if "cannot count" in r.getMessage()]
    assert len(warnings) == 1, warnings  # once an outage, not once a request
    assert "counting in this process" in warnings[0]


def test_counting_returns_to_redis_when_it_answers_again(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis", require_redis_server())
    app = limited_app("1000/hour", server.url, retry_s=0.2)
    try:
        with TestClient(app) as client:
            assert client.get("/").status_code == 200  # nothing listens: counted here
            server.start()
            deadline = time.monotonic() + 30
            while not limit_keys(server.url) and time.monotonic() < deadline:
                assert client.get("/").status_code == 200
                time.sleep(0.05)
            assert limit_keys(server.url), "the limiter never went back to Redis"
    finally:
        server.stop()


def test_a_new_event_loop_per_request_still_counts_in_redis(redis_url: str) -> None:
    # without ``with``, the test client runs each request in an event loop of its own
    client = TestClient(limited_app("5/hour", redis_url, retry_s=3600))
    assert [client.get("/").status_code for _ in range(7)] == [200] * 5 + [429] * 2
    assert len(limit_keys(redis_url)) == 1
