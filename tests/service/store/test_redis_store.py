"""The Redis store against a real ``redis-server``: AOF restarts, outages, replicas."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.store import open_store
from service.store.base import Store, StoreUnavailable
from service.store.redis_store import RedisStore, redact_url
from tests.redis_server import RedisServer, free_port, require_redis_server
from tests.service.store.test_store_contract import battle, count_elo, ids


@pytest.fixture
def store(redis_url: str) -> Iterator[RedisStore]:
    with RedisStore(redis_url) as store:
        yield store


def fill(store: Store) -> bytes:
    store.init_elo({"alpha": 1000.0})
    store.ingest([battle(1, "u1"), battle(2, "u2"), battle(3, "u1")], count_elo)
    store.put_user("u1", "bt", {"n": 2})
    store.publish({"board": ["alpha"]})
    return store.secret()


def check_filled(store: Store, secret: bytes) -> None:
    assert store.battles() == [battle(1, "u1"), battle(2, "u2"), battle(3, "u1")]
    assert ids(store.battles("u1")) == ["b1", "b3"]
    assert store.elo() == {"alpha": 1000.0, "n": 3.0}
    assert store.get_user("u1", "bt") == {"n": 2}
    assert store.snapshot() == (1, {"board": ["alpha"]}) and store.version() == 1
    assert store.secret() == secret


@pytest.mark.parametrize("how", ["restart", "crash"])
def test_data_survives_a_server_restart_or_crash(
    store: RedisStore, redis_url: str, redis_server: RedisServer, how: str
) -> None:
    secret = fill(store)
    if how == "restart":
        redis_server.restart()
    else:  # SIGKILL: only the AOF, fsynced before each reply, keeps the data
        redis_server.crash()
        redis_server.start()
    check_filled(store, secret)  # the same object reconnects by itself
    with RedisStore(redis_url) as fresh:
        check_filled(fresh, secret)
        assert fresh.ingest([battle(3), battle(4)], count_elo).accepted == (1,)


CALLS: list[tuple[str, Callable[[Store], Any]]] = [
    ("ping", lambda s: s.ping()),
    ("ingest", lambda s: s.ingest([battle(9, "u9")], count_elo)),
    ("battles", lambda s: s.battles()),
    ("battles(user)", lambda s: s.battles("u1")),
    ("n_battles", lambda s: s.n_battles()),
    ("elo", lambda s: s.elo()),
    ("init_elo", lambda s: s.init_elo({"alpha": 1.0})),
    ("put_user", lambda s: s.put_user("u1", "bt", {"n": 0})),
    ("get_user", lambda s: s.get_user("u1", "bt")),
    ("get_user_raw", lambda s: s.get_user_raw("u1", "bt")),
    ("get_user_raw_async", lambda s: asyncio.run(s.get_user_raw_async("u1", "bt"))),
    ("publish", lambda s: s.publish({"v": 0})),
    ("snapshot", lambda s: s.snapshot()),
    ("version", lambda s: s.version()),
    ("secret", lambda s: s.secret()),
]


def test_an_outage_raises_store_unavailable_and_heals_by_itself(
    store: RedisStore, redis_url: str, redis_server: RedisServer
) -> None:
    secret = fill(store)
    redis_server.stop()
    try:
        born_in_outage = RedisStore(redis_url)  # construction never contacts the server
        for name, call in CALLS:
            for target in (store, born_in_outage):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable, match="unreachable") as caught:
                    call(target)
                assert time.monotonic() - started < 2.5, name
                assert redis_url in str(caught.value), name
                assert caught.value.__cause__ is not None, name
    finally:
        redis_server.start()
    check_filled(store, secret)  # the same objects work again, without being recreated
    check_filled(born_in_outage, secret)
    assert store.ingest([battle(9, "u9")], count_elo).new_users == ("u9",)
    born_in_outage.close()


def test_two_replicas_see_each_others_ingests(redis_url: str) -> None:
    with RedisStore(redis_url) as one, RedisStore(redis_url) as two:
        one.ingest([battle(1, "u1")], count_elo)
        got = two.ingest([battle(1, "u1"), battle(2, "u1")], count_elo)
        assert got.accepted == (1,) and got.new_users == ()
        assert ids(one.battles("u1")) == ["b1", "b2"] and one.elo() == {"n": 2.0}
        assert one.publish({"v": 1}) == 1 and two.snapshot() == (1, {"v": 1})


def test_namespaces_keep_stores_apart(redis_url: str) -> None:
    with RedisStore(redis_url, namespace="a") as a, RedisStore(redis_url, namespace="b") as b:
        a.ingest([battle(1)], count_elo)
        assert b.n_battles() == 0 and b.elo() == {}
        assert b.ingest([battle(1)], count_elo).accepted == (0,)
        assert a.secret() != b.secret()


def test_keys_follow_the_documented_layout(store: RedisStore, redis_url: str) -> None:
    import redis

    fill(store)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert set(client.keys("plb:*")) == {
            "plb:battles",
            "plb:ids",
            "plb:users",
            "plb:user:u1:battles",
            "plb:user:u2:battles",
            "plb:user:u1:docs",
            "plb:elo",
            "plb:snapshot",
            "plb:version",
            "plb:secret",
        }
        assert client.smembers("plb:ids") == {"b1", "b2", "b3"}
    finally:
        client.close()


def test_open_store_and_bad_urls() -> None:
    store = open_store(redis_url="redis://127.0.0.1:6379/0", namespace="x")
    assert isinstance(store, RedisStore) and store.namespace == "x"
    store.close()
    with pytest.raises(ValueError, match="not a Redis URL"):
        open_store(redis_url="http://127.0.0.1:6379")
    with pytest.raises(ValueError, match="namespace"):
        RedisStore("redis://127.0.0.1:6379/0", namespace="")


def test_a_password_never_appears_in_an_error() -> None:
    url = f"redis://user:hunter2@127.0.0.1:{free_port()}/0"
    assert redact_url(url) == f"redis://user:***@127.0.0.1:{url.rsplit(':', 1)[1]}"
    with RedisStore(url) as store, pytest.raises(StoreUnavailable) as caught:
        store.ping()
    assert "hunter2" not in str(caught.value) and "user:***@" in str(caught.value)


@pytest.mark.slow
def test_a_frozen_server_times_out_as_store_unavailable(
    store: RedisStore, redis_server: RedisServer
) -> None:
    fill(store)
    redis_server.pause()
    try:
        for call in (
            lambda s: s.ping(),
            lambda s: s.ingest([battle(9)], count_elo),
            lambda s: asyncio.run(s.get_user_raw_async("u1", "bt")),  # a read left unanswered
        ):
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="unreachable"):
                call(store)
            assert time.monotonic() - started < 3.5
    finally:
        redis_server.resume()
    # after a timeout, calls fail at once for one timeout more (a request waits one
    # timeout, not one per call); then the same store answers again
    deadline = time.monotonic() + 3 * 2.0
    while True:
        try:
            store.ping()
            break
        except StoreUnavailable:
            assert time.monotonic() < deadline, "the store did not answer again"
            time.sleep(0.1)
    assert store.ingest([battle(9)], count_elo).accepted == (0,)
    assert store.n_battles() == 4


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_missing_redis_server_skips_except_on_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci == "true" else pytest.skip.Exception
    with pytest.raises(outcome, match="redis-server is not on PATH"):
        require_redis_server()
