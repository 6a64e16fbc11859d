"""A hung Redis (``SIGSTOP``: it accepts connections but never answers) fails bounded.

The test runs its own ``redis-server``, never the session's, so that freezing it cannot
stall another test. While it is frozen, every request that needs Redis answers 503 within
a bound of the configured timeout (``PLB_REDIS_TIMEOUT_S``): one wait for the rate
limiter, which then counts in the process, and one for the store. Reads of the published
version keep answering 200: between version checks they need no Redis, and a version
check that times out keeps the version held. After ``SIGCONT`` the same app serves
everything again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.live.settings import Settings
from tests.redis_server import RedisServer, require_redis_server
from tests.service.conftest import (
    ADMIN,
    INGEST,
    assert_error,
    check_leaderboard,
    open_client,
    service_settings,
)

pytestmark = pytest.mark.slow

TIMEOUT_S = 1.0  # PLB_REDIS_TIMEOUT_S of the test service
BOUND_S = 3 * TIMEOUT_S  # the most a request may take while Redis is frozen
RECOVERY_S = 30.0  # the most the test waits for the service to recover
BATTLE = {
    "battle_id": "hang-1",
    "model_a": "pico-3b",
    "model_b": "sage-1.2",
    "winner": "model_a",
    "user_id": "hang-user",
}


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A ``redis-server`` of this test alone; resumed and stopped whatever happens."""
    server = RedisServer(tmp_path / "redis", require_redis_server())
    server.start()
    try:
        yield server
    finally:
        server.resume()
        server.stop()  # sends SIGCONT first as well


def hang_settings(fit: Path, redis: RedisServer, **overrides: Any) -> Settings:
    """The service's settings on ``fit`` with ``redis``, each Redis reply awaited TIMEOUT_S."""
    return service_settings(fit, redis_url=redis.url, redis_timeout_s=TIMEOUT_S, **overrides)


def timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    response = call(*args, **kwargs)
    return response, time.monotonic() - started


def test_a_hung_redis_is_503_within_a_bound_then_recovers(
    shared_fit_no_features: Path, own_redis: RedisServer
) -> None:
    settings = hang_settings(
        shared_fit_no_features,
        own_redis,
        version_poll_s=3600,  # reads of the published version need no Redis
        rate_limit_per_address="1000/minute",  # the limiter counts in Redis too
    )
    needs_redis: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/v1/leaderboard", {"params": {"method": "elo"}}),  # live Elo
        ("POST", "/v1/battles", {"json": {"battles": [BATTLE]}, "headers": INGEST}),
        ("GET", "/v1/users/hang-user/leaderboard", {"headers": ADMIN}),
        ("GET", "/healthz", {}),
    ]
    published: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/v1/leaderboard", {}),  # Bradley-Terry of the published version
        ("GET", "/v1/models", {}),
        ("GET", "/v1/about", {}),
        ("GET", "/v1/analysis/correlations", {}),
        ("GET", "/", {}),
        ("GET", "/widget/leaderboard", {}),
        ("GET", "/widget/badge.svg", {}),
    ]
    with open_client(settings, allow_5xx=True) as client:
        n_before = client.get("/v1/leaderboard", params={"method": "elo"}).json()["n_battles"]
        bt_before = client.get("/v1/leaderboard").json()

        latencies: list[tuple[str, float]] = []
        served: list[tuple[str, float]] = []
        own_redis.pause()
        try:
            for _ in range(2):  # the second round: the limiter counts in the process
                for method, path, kwargs in needs_redis:
                    response, seconds = timed(client.request, method, path, **kwargs)
                    assert assert_error(response, 503) == "the store is unavailable"
                    assert seconds < BOUND_S, f"{method} {path} took {seconds:.2f} s"
                    latencies.append((f"{method} {path}", seconds))
                for method, path, kwargs in published:
                    response, seconds = timed(client.request, method, path, **kwargs)
                    assert response.status_code == 200, (path, response.text)
                    assert seconds < BOUND_S, f"{method} {path} took {seconds:.2f} s"
                    served.append((f"{method} {path}", seconds))
                assert client.get("/v1/leaderboard").json() == bt_before
        finally:
            own_redis.resume()
        print(  # the figures of the report: pytest -s shows them
            f"\nfrozen Redis, timeout {TIMEOUT_S} s, 503 after: "
            + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in latencies)
            + "; 200 after: "
            + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in served)
        )

        deadline = time.monotonic() + RECOVERY_S
        while True:  # the same app, no restart: the first request after SIGCONT may time out
            posted = client.post("/v1/battles", json={"battles": [BATTLE]}, headers=INGEST)
            if posted.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert posted.status_code == 200, posted.text
        result = posted.json()
        assert result["accepted"] + result["duplicates"] == 1  # stored once, whatever came first
        elo = client.get("/v1/leaderboard", params={"method": "elo"})
        assert elo.status_code == 200, elo.text
        check_leaderboard(elo.json(), "elo")
        assert elo.json()["n_battles"] == n_before + 1
        mine = client.get("/v1/users/hang-user/leaderboard", headers=ADMIN)
        assert mine.status_code == 200, mine.text
        assert mine.json()["n_battles"] == 1
        assert client.get("/healthz").status_code == 200


def test_a_version_check_on_a_hung_redis_keeps_serving_the_version_held(
    shared_fit_no_features: Path, own_redis: RedisServer
) -> None:
    settings = hang_settings(
        shared_fit_no_features,
        own_redis,
        version_poll_s=0,  # every read checks the store for a newer version
    )
    with open_client(settings, allow_5xx=True) as client:
        before = client.get("/v1/leaderboard").json()
        own_redis.pause()
        try:
            for _ in range(2):
                response, seconds = timed(client.get, "/v1/leaderboard")
                assert response.status_code == 200, response.text
                assert response.json() == before
                assert seconds < BOUND_S, f"the read took {seconds:.2f} s"
        finally:
            own_redis.resume()
        assert client.get("/v1/leaderboard").json() == before


def test_a_segment_read_on_a_hung_redis_waits_at_most_twice_the_timeout(
    shared_fit_no_features: Path, own_redis: RedisServer
) -> None:
    """Issue 31: a ``?where=`` during a freeze answered after 3 timeouts (6.0 s for the
    default 2 s: the rate limiter, the version check and the segment's read of the
    battles), where the README promises twice the timeout at most."""
    timeout_s = 1.5
    settings = service_settings(
        shared_fit_no_features,
        redis_url=own_redis.url,
        redis_timeout_s=timeout_s,
        version_poll_s=0,  # the read checks the store for a newer version too
        rate_limit_per_address="1000/minute",  # the limiter counts in Redis
    )
    with open_client(settings, allow_5xx=True) as client:
        assert client.get("/healthz").status_code == 200
        own_redis.pause()
        try:
            response, seconds = timed(
                client.get, "/v1/leaderboard", params={"where": "topic=coding"}
            )
        finally:
            own_redis.resume()
    assert response.status_code in (200, 422, 503), response.text
    print(
        f"\nfrozen Redis, timeout {timeout_s} s: ?where= answered {response.status_code} "
        f"after {seconds:.2f} s"
    )
    assert seconds < 2 * timeout_s + 0.75, f"?where= took {seconds:.2f} s"
