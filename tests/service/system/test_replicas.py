"""Replicas on one real Redis: what one writes, the other reads; and Redis going away.

Two apps (each its own :class:`~service.live.engine.Engine`) serve the shared fit from one
``redis-server``, checking the store for a new model version on every read
(``version_poll_s=0``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.redis_server import RedisServer
from tests.service.conftest import (
    ADMIN,
    ADMIN_KEY,
    INGEST,
    INGEST_KEY,
    assert_error,
    check_leaderboard,
    open_client,
    service_settings,
)


@pytest.fixture
def replicas(shared_fit_no_features: Path, redis_url: str) -> Iterator[tuple[TestClient, ...]]:
    """Two apps on one Redis and the same fit directory."""
    settings = service_settings(shared_fit_no_features, redis_url=redis_url, version_poll_s=0)
    with open_client(settings) as one, open_client(settings) as two:
        yield one, two


@pytest.fixture
def server(redis_server: RedisServer, redis_url: str) -> Iterator[RedisServer]:
    """The session's Redis, left running after the test even when the test fails."""
    try:
        yield redis_server
    finally:
        redis_server.start()


def vote(a: str, b: str, **fields: Any) -> dict[str, Any]:
    return {"model_a": a, "model_b": b, "winner": "model_a", **fields}


def ratings(document: dict[str, Any]) -> dict[str, float]:
    return {m["model"]: m["rating"] for m in document["models"]}


def user_board(client: TestClient, user: str, method: str = "bt") -> dict[str, Any]:
    response = client.get(f"/v1/users/{user}/leaderboard", headers=ADMIN, params={"method": method})
    assert response.status_code == 200, response.text
    return response.json()


def test_both_serve_one_version(replicas: tuple[TestClient, ...]) -> None:
    one, two = replicas
    first, second = one.get("/v1/leaderboard").json(), two.get("/v1/leaderboard").json()
    assert first == second
    assert first["version"] == 1  # the second app found the fit published: no new version


def test_a_vote_through_one_is_read_through_the_other(
    replicas: tuple[TestClient, ...], shared_fit_no_features: Path
) -> None:
    from service.pipeline.artifacts import load_fit

    one, two = replicas
    user = str(load_fit(shared_fit_no_features).agreement["user_id"].iloc[0])
    before = user_board(two, user)
    elo_before = two.get("/v1/leaderboard", params={"method": "elo"}).json()
    top, bottom = before["models"][0]["model"], before["models"][-1]["model"]

    votes = [vote(bottom, top, user_id=user) for _ in range(6)]
    votes.append(vote("pico-3b", "lyra-mini", user_id="replica-user"))
    result = one.post("/v1/battles", json={"battles": votes}, headers=INGEST).json()
    assert result["accepted"] == 7

    after = user_board(two, user)
    assert after["n_battles"] == before["n_battles"] + 6
    assert ratings(after)[bottom] > ratings(before)[bottom]
    elo_after = two.get("/v1/leaderboard", params={"method": "elo"}).json()
    check_leaderboard(elo_after, "elo")
    assert elo_after["n_battles"] == elo_before["n_battles"] + 7
    assert ratings(elo_after)[bottom] > ratings(elo_before)[bottom]
    assert elo_after == one.get("/v1/leaderboard", params={"method": "elo"}).json()

    # the token one handed out opens the user's leaderboard on the other (shared secret)
    token = result["tokens"]["replica-user"]
    mine = two.get("/v1/users/replica-user/leaderboard", params={"token": token})
    assert mine.status_code == 200, mine.text
    assert mine.json()["n_battles"] == 1
    # and a battle id one stored is a duplicate on the other
    body = {"battles": [votes[0] | {"battle_id": "r-1"}]}
    assert two.post("/v1/battles", json=body, headers=INGEST).json()["accepted"] == 1
    again = one.post("/v1/battles", json=body, headers=INGEST)
    assert (again.json()["accepted"], again.json()["duplicates"]) == (0, 1)


def test_a_refit_by_one_is_served_by_the_other(replicas: tuple[TestClient, ...]) -> None:
    one, two = replicas
    n_fitted = two.get("/v1/leaderboard").json()["n_battles"]
    votes = [vote("pico-3b", "helios-2-ultra", user_id="refit-user") for _ in range(4)]
    assert one.post("/v1/battles", json={"battles": votes}, headers=INGEST).json()["accepted"] == 4
    assert two.get("/v1/leaderboard").json()["version"] == 1

    refit = one.post("/v1/admin/refit", headers=ADMIN)
    assert refit.json() == {"version": 2}
    served = two.get("/v1/leaderboard").json()
    check_leaderboard(served, "bt")
    assert served["version"] == 2
    assert served["n_battles"] == n_fitted + 4
    assert served == one.get("/v1/leaderboard").json()
    assert two.get("/healthz").json() == {"status": "ok", "version": 2}
    assert user_board(two, "refit-user")["version"] == 2


def test_three_replicas_share_one_rate_limit(shared_fit_no_features: Path, redis_url: str) -> None:
    """Each replica alone would allow 10 requests an hour from an address: together, 10."""
    import redis

    from service.api.guards import REDIS_KEY_PREFIX

    settings = service_settings(
        shared_fit_no_features,
        redis_url=redis_url,
        rate_limit_per_address="10/hour",
        rate_limit_per_key="4/hour",
    )
    with open_client(settings) as a, open_client(settings) as b, open_client(settings) as c:
        replicas = (a, b, c)
        # 30 requests from one address, round robin over the three replicas
        answers = [replicas[i % 3].get("/v1/models") for i in range(30)]
        assert [r.status_code for r in answers] == [200] * 10 + [429] * 20
        for refused in answers[10:]:
            assert_error(refused, 429, "too many requests")
            assert 1 <= int(refused.headers["retry-after"]) <= 3600
        # a key's budget is shared too (its requests count against the key first)
        keyed = [replicas[i % 3].get("/v1/models", headers=ADMIN) for i in range(7)]
        assert [r.status_code for r in keyed] == [429] * 7  # the address is spent already
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        client.flushall()
    finally:
        client.close()
    settings = service_settings(
        shared_fit_no_features, redis_url=redis_url, rate_limit_per_key="4/hour"
    )
    with open_client(settings) as a, open_client(settings) as b, open_client(settings) as c:
        replicas = (a, b, c)
        keyed = [replicas[i % 3].get("/v1/models", headers=ADMIN) for i in range(9)]
        assert [r.status_code for r in keyed] == [200] * 4 + [429] * 5
        assert a.get("/v1/models", headers=INGEST).status_code == 200  # another key
        assert b.get("/v1/models").status_code == 200  # no key, and no address limit
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        keys = sorted(k.decode() for k in client.scan_iter("*"))
    finally:
        client.close()
    limit_keys = [k for k in keys if k.startswith(f"{REDIS_KEY_PREFIX}:")]
    assert len(limit_keys) == 2, keys  # one window a key: the admin's and the ingest key's
    assert not [k for k in keys if k.startswith("LIMITS")], keys
    assert ADMIN_KEY not in " ".join(keys) and INGEST_KEY not in " ".join(keys)


def test_redis_down_is_503_then_recovers(
    shared_fit_no_features: Path, redis_url: str, server: RedisServer
) -> None:
    settings = service_settings(shared_fit_no_features, redis_url=redis_url, version_poll_s=0)
    with open_client(settings, allow_5xx=True) as client:
        first = {"battles": [vote("pico-3b", "sage-1.2", battle_id="d-1")]}
        stored = client.post("/v1/battles", json=first, headers=INGEST)
        assert stored.json()["accepted"] == 1
        n_before = client.get("/v1/leaderboard", params={"method": "elo"}).json()["n_battles"]

        server.stop()
        body = {"battles": [vote("pico-3b", "sage-1.2", battle_id="d-2")]}
        down = [
            client.get("/v1/leaderboard", params={"method": "elo"}),
            client.post("/v1/battles", json=body, headers=INGEST),
            client.get("/healthz"),
        ]
        for response in down:  # naming no store, no address: those are for the log
            assert assert_error(response, 503) == "the store is unavailable"

        server.start()  # the same client, no restart of the app
        elo = client.get("/v1/leaderboard", params={"method": "elo"})
        assert elo.status_code == 200, elo.text
        assert elo.json()["n_battles"] == n_before  # the vote before the outage is kept (AOF)
        result = client.post("/v1/battles", json=body, headers=INGEST)
        assert result.status_code == 200, result.text
        assert result.json()["accepted"] == 1
        again = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        assert again["n_battles"] == n_before + 1
        assert client.get("/healthz").status_code == 200


@pytest.mark.slow
def test_two_service_processes_on_one_redis(
    shared_fit_no_features: Path, redis_url: str, tmp_path: Path
) -> None:
    """Two real ``plb serve`` processes behind (say) a load balancer, sharing one Redis."""
    import httpx

    from tests.service.conftest import ServeProcess

    env = {
        "PLB_INGEST_KEY": INGEST_KEY,
        "PLB_ADMIN_KEY": ADMIN_KEY,
        "PLB_REFIT_INTERVAL_S": "0",
        "PLB_VERSION_POLL_S": "0",
    }
    args = [str(shared_fit_no_features), "--redis-url", redis_url]
    processes = [ServeProcess(args, tmp_path, tmp_path / f"replica{i}.log", env) for i in (1, 2)]
    try:
        for process in processes:
            process.wait_healthy()
        one, two = (p.url for p in processes)
        battle = vote("pico-3b", "helios-2-ultra", user_id="replica-voter", battle_id="r-1")
        posted = httpx.post(f"{one}/v1/battles", json={"battles": [battle]}, headers=INGEST)
        assert posted.status_code == 200, posted.text
        token = posted.json()["tokens"]["replica-voter"]
        read = httpx.get(f"{two}/v1/users/replica-voter/leaderboard", params={"token": token})
        assert read.status_code == 200, read.text
        assert read.json()["n_battles"] == 1
        again = httpx.post(f"{two}/v1/battles", json={"battles": [battle]}, headers=INGEST)
        assert again.json()["duplicates"] == 1  # the id is known to the other replica too
        refit = httpx.post(f"{two}/v1/admin/refit", headers=ADMIN, timeout=120)
        assert refit.status_code == 200, refit.text
        version = refit.json()["version"]
        assert httpx.get(f"{one}/v1/leaderboard").json()["version"] == version
    finally:
        for process in processes:
            process.stop()


@pytest.mark.slow
def test_three_service_processes_share_one_rate_limit(
    shared_fit_no_features: Path, redis_url: str, tmp_path: Path
) -> None:
    """Three real ``plb serve`` processes on one Redis: 10 requests an hour from an address."""
    import httpx

    from tests.service.conftest import ServeProcess

    env = {
        "PLB_REFIT_INTERVAL_S": "0",
        "PLB_RATE_LIMIT_PER_ADDRESS": "10/hour",
        "PLB_RATE_LIMIT_PER_KEY": "off",
    }
    args = [str(shared_fit_no_features), "--redis-url", redis_url]
    processes = [ServeProcess(args, tmp_path, tmp_path / f"replica{i}.log", env) for i in (1, 2, 3)]
    try:
        for process in processes:
            process.wait_healthy()  # /healthz is never limited
        answers = [httpx.get(f"{processes[i % 3].url}/v1/models") for i in range(30)]
        assert [r.status_code for r in answers] == [200] * 10 + [429] * 20
        assert all(int(r.headers["retry-after"]) >= 1 for r in answers[10:])
    finally:
        for process in processes:
            process.stop()
