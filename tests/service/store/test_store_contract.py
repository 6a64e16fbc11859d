"""The contract every store keeps, run against both: SQLite in a file and a real Redis."""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from service.store.base import Ingested, Store, StoreUnavailable
from tests.service.store.conftest import Opener


def battle(i: int | str, user: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "battle_id": f"b{i}",
        "model_a": "alpha",
        "model_b": "beta",
        "winner": "model_a",
        "user_id": user,
        **extra,
    }


def count_elo(state: dict[str, float], accepted: list[dict[str, Any]]) -> dict[str, float]:
    """An Elo stand-in that counts the battles it has seen."""
    return {**state, "n": state.get("n", 0.0) + len(accepted)}


def run_threads(work: Callable[[int], None], n: int) -> None:
    """``work(t)`` for ``t`` in ``range(n)``, each in a thread of its own; waits for all."""
    threads = [threading.Thread(target=work, args=(t,)) for t in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)


def ids(battles: list[dict[str, Any]]) -> list[str]:
    return [b["battle_id"] for b in battles]


def test_empty_store(store: Store) -> None:
    store.ping()
    assert store.n_battles() == 0
    assert store.battles() == [] and store.battles("u1") == []
    assert store.elo() == {}
    assert store.snapshot() == (0, None) and store.version() == 0
    assert store.get_user("u1", "bt") is None


def test_ingest_dedupes_within_and_across_batches(store: Store) -> None:
    first = store.ingest([battle(1), battle(2), battle(1), battle(3)], count_elo)
    assert first.accepted == (0, 1, 3) and first.duplicates == 1
    second = store.ingest([battle(3), battle(4), battle(2), battle(5), battle(4)], count_elo)
    assert second.accepted == (1, 3) and second.duplicates == 3
    assert ids(store.battles()) == ["b1", "b2", "b3", "b4", "b5"]
    assert store.n_battles() == 5
    assert store.elo() == {"n": 5.0} == second.elo


def test_new_users_are_first_stored_battles_in_first_seen_order(store: Store) -> None:
    got = store.ingest(
        [battle(1, "u2"), battle(2, "u1"), battle(3), battle(4, "u2"), battle(5, "u3")],
        count_elo,
    )
    assert got.new_users == ("u2", "u1", "u3")
    # a dropped duplicate brings no user; a known user is not new
    got = store.ingest(
        [battle(1, "u9"), battle(6, "u1"), battle(7, "u4"), battle(7, "u5")], count_elo
    )
    assert got.new_users == ("u4",)
    assert store.battles("u9") == [] and store.battles("u5") == []


def test_battles_round_trip_in_order_and_filter_by_user(store: Store) -> None:
    batch = [
        battle(1, "u1", prompt='héllo ✓ "quoted"\n', tstamp=1714000000.125),
        battle(2, "a:doc:m", labels={"topic": ["code", "math"], "score": -0.5, "ok": True}),
        battle(3, None, winner="tie (bothbad)", extra=None),
        battle(4, "u1", nested=[[1, 2.5], {"k": "v"}]),
    ]
    store.ingest(batch, count_elo)
    assert store.battles() == batch
    assert store.battles("u1") == [batch[0], batch[3]]
    assert store.battles("a:doc:m") == [batch[1]]
    assert store.battles("nobody") == []
    # a user id with colons and a method with colons do not collide with battle lists
    store.put_user("a", "m:battles", {"x": 1})
    assert store.battles("a:doc:m") == [batch[1]]
    assert store.get_user("a", "m:battles") == {"x": 1}


def test_update_elo_receives_the_state_and_the_accepted_battles(store: Store) -> None:
    calls: list[tuple[dict[str, float], list[dict[str, Any]]]] = []

    def update(state: dict[str, float], accepted: list[dict[str, Any]]) -> dict[str, float]:
        calls.append((dict(state), [dict(b) for b in accepted]))
        return {**state, "alpha": state.get("alpha", 1000.0) + len(accepted)}

    assert store.init_elo({"alpha": 1000.0, "beta": 990.0})
    got = store.ingest([battle(1, "u1"), battle(1, "u1"), battle(2)], update)
    assert calls[-1] == ({"alpha": 1000.0, "beta": 990.0}, [battle(1, "u1"), battle(2)])
    assert got.elo == store.elo() == {"alpha": 1002.0, "beta": 990.0}
    got = store.ingest([battle(2)], update)
    assert calls[-1] == ({"alpha": 1002.0, "beta": 990.0}, [])
    assert got.accepted == () and got.duplicates == 1 and got.elo == store.elo()
    got = store.ingest([], update)
    assert calls[-1][1] == [] and got == Ingested((), 0, (), {"alpha": 1002.0, "beta": 990.0})


class Boom(Exception):
    pass


def _state(store: Store) -> tuple[Any, ...]:
    return (
        store.battles(),
        store.battles("u1"),
        store.battles("u2"),
        store.elo(),
        store.n_battles(),
    )


def test_a_failing_update_elo_stores_nothing(store: Store) -> None:
    store.ingest([battle(1, "u1"), battle(2)], count_elo)
    before = _state(store)

    def explode(state: dict[str, float], accepted: list[dict[str, Any]]) -> dict[str, float]:
        raise Boom("no")

    with pytest.raises(Boom):
        store.ingest([battle(3, "u1"), battle(4, "u2")], explode)
    assert _state(store) == before

    def not_finite(state: dict[str, float], accepted: list[dict[str, Any]]) -> dict[str, float]:
        return {"alpha": math.nan}

    with pytest.raises(ValueError):
        store.ingest([battle(3, "u1"), battle(4, "u2")], not_finite)
    assert _state(store) == before
    # the ids were not recorded, and u2 is still new
    got = store.ingest([battle(3, "u1"), battle(4, "u2")], count_elo)
    assert got.accepted == (0, 1) and got.new_users == ("u2",)


@pytest.mark.parametrize(
    "bad",
    [
        {"model_a": "a"},
        {"battle_id": ""},
        {"battle_id": 7},
        {"battle_id": "b9", "user_id": 3},
        {"battle_id": "b9", "labels": {1, 2}},
        {"battle_id": "b9", "score": math.inf},
    ],
)
def test_an_invalid_battle_is_refused_before_anything_is_stored(
    store: Store, bad: dict[str, Any]
) -> None:
    with pytest.raises(ValueError, match="battle 1"):
        store.ingest([battle(1), bad], count_elo)
    assert store.n_battles() == 0 and store.elo() == {}


def test_init_elo_sets_only_once(store: Store) -> None:
    assert store.init_elo({"alpha": 1010.0})
    assert not store.init_elo({"alpha": 1.0})
    assert store.elo() == {"alpha": 1010.0}
    store.ingest([battle(1)], count_elo)
    assert store.elo() == {"alpha": 1010.0, "n": 1.0}
    assert not store.init_elo({})


def test_init_elo_after_an_ingest_does_nothing(store: Store) -> None:
    store.ingest([battle(1)], count_elo)
    assert not store.init_elo({"alpha": 1.0})
    assert store.elo() == {"n": 1.0}


def test_user_documents(store: Store) -> None:
    store.put_user("u1", "bt", {"ratings": {"alpha": 1.5}, "n": 3})
    store.put_user("u1", "elo", {"ratings": {"alpha": 1010.0}})
    assert store.get_user("u1", "bt") == {"ratings": {"alpha": 1.5}, "n": 3}
    store.put_user("u1", "bt", {"n": 4})
    assert store.get_user("u1", "bt") == {"n": 4}
    assert store.get_user("u1", "elo") == {"ratings": {"alpha": 1010.0}}
    assert store.get_user("u2", "bt") is None and store.get_user("u1", "other") is None


def test_publish_increments_the_version_with_the_snapshot(store: Store) -> None:
    assert store.publish({"board": [1, 2]}) == 1
    assert store.snapshot() == (1, {"board": [1, 2]}) and store.version() == 1
    assert store.publish({"board": []}) == 2
    assert store.snapshot() == (2, {"board": []}) and store.version() == 2


def test_secret_is_made_once_and_shared(store: Store, opener: Opener) -> None:
    secret = store.secret()
    assert isinstance(secret, bytes) and len(secret) == 32
    assert store.secret() == secret
    assert opener().secret() == secret


def test_another_store_object_sees_everything(store: Store, opener: Opener) -> None:
    store.ingest([battle(1, "u1"), battle(2)], count_elo)
    store.put_user("u1", "bt", {"n": 1})
    store.publish({"v": 1})
    other = opener()
    assert other.battles() == [battle(1, "u1"), battle(2)]
    assert other.get_user("u1", "bt") == {"n": 1} and other.snapshot() == (1, {"v": 1})
    got = other.ingest([battle(2), battle(3, "u1")], count_elo)
    assert got.accepted == (1,) and got.new_users == ()
    assert ids(store.battles("u1")) == ["b1", "b3"] and store.elo() == {"n": 3.0}


def test_concurrent_overlapping_ingests_store_each_id_once(store: Store, opener: Opener) -> None:
    """Four threads, two sharing one store object and two with their own, race on ids."""
    stores = [store, store, opener(), opener()]
    accepted_counts = [0] * 4
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def update(state: dict[str, float], accepted: list[dict[str, Any]]) -> dict[str, float]:
        time.sleep(0.001)  # widen the window between the read and the write
        return count_elo(state, accepted)

    def work(t: int) -> None:
        rng = random.Random(t)
        numbers = list(range(t * 20, t * 20 + 50))  # overlaps the next thread's range
        rng.shuffle(numbers)
        try:
            start.wait()
            for k in range(0, len(numbers), 6):
                chunk = numbers[k : k + 6]
                got = stores[t].ingest([battle(i, f"u{i % 5}") for i in chunk], update)
                accepted_counts[t] += len(got.accepted)
                assert len(got.accepted) + got.duplicates == len(chunk)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    run_threads(work, 4)
    assert not errors, errors
    stored = ids(store.battles())
    expected = {f"b{i}" for i in range(0, 3 * 20 + 50)}
    assert len(stored) == len(set(stored)) == len(expected) and set(stored) == expected
    assert sum(accepted_counts) == len(expected) == store.n_battles()
    assert store.elo() == {"n": float(len(expected))}
    by_user = [ids(store.battles(f"u{j}")) for j in range(5)]
    assert sorted(sum(by_user, [])) == sorted(stored)


def test_a_closed_store_refuses_calls(opener: Opener) -> None:
    with opener() as store:
        store.ping()
    with pytest.raises(StoreUnavailable, match="closed"):
        store.n_battles()
    with pytest.raises(StoreUnavailable, match="closed"):
        store.ingest([battle(1)], count_elo)
    store.close()  # closing twice is harmless


# -- the model catalogue ---------------------------------------------------------------


def test_register_models_adds_new_names_once_at_the_starting_rating(store: Store) -> None:
    assert store.models() == frozenset()
    assert store.init_elo({"alpha": 1010.0, "beta": 990.0})
    added = store.register_models(["gamma", "alpha", "gamma", "delta"])
    assert added == ("gamma", "delta")
    assert store.models() == {"alpha", "beta", "gamma", "delta"}
    # a known model keeps its rating; a new one starts at 1000
    assert store.elo() == {"alpha": 1010.0, "beta": 990.0, "gamma": 1000.0, "delta": 1000.0}
    assert store.register_models(["gamma", "alpha"]) == ()
    assert store.n_battles() == 0  # registering stores no battle


def test_registered_models_are_shared_and_survive_ingests(store: Store, opener: Opener) -> None:
    store.register_models(["alpha", "beta", "gamma"])
    other = opener()
    assert other.models() == {"alpha", "beta", "gamma"}

    def keep_and_count(state: dict[str, float], accepted: list[dict[str, Any]]) -> dict[str, float]:
        return {**state, "alpha": state["alpha"] + len(accepted)}

    other.ingest([battle(1), battle(2)], keep_and_count)
    assert store.models() == {"alpha", "beta", "gamma"}
    assert store.elo()["alpha"] == 1002.0  # nothing of the ingest lost by the registration
    assert store.register_models(["delta"]) == ("delta",)
    assert other.elo() == {"alpha": 1002.0, "beta": 1000.0, "gamma": 1000.0, "delta": 1000.0}
    assert ids(other.battles()) == ["b1", "b2"]


def test_concurrent_registrations_and_ingests_lose_nothing(store: Store, opener: Opener) -> None:
    """Two threads register models while two ingest: every name and every vote is kept."""
    store.init_elo({"n": 0.0})
    stores = [store, opener(), store, opener()]
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(t: int) -> None:
        try:
            start.wait()
            for k in range(15):
                if t < 2:
                    stores[t].register_models([f"m{t}-{k}"])
                else:
                    stores[t].ingest([battle(f"{t}-{k}")], count_elo)
        except BaseException as exc:
            errors.append(exc)

    run_threads(work, 4)
    assert not errors, errors
    assert store.models() == {"n"} | {f"m{t}-{k}" for t in range(2) for k in range(15)}
    assert store.elo()["n"] == 30.0 and store.n_battles() == 30


@pytest.mark.parametrize("bad", ["", 3, None])
def test_register_models_refuses_a_bad_name_and_stores_nothing(store: Store, bad: Any) -> None:
    with pytest.raises(ValueError, match=r"models\[1\]"):
        store.register_models(["alpha", bad])
    assert store.models() == frozenset()
