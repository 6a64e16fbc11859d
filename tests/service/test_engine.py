"""``service.engine``: the live Elo update, and an engine restarted on its embedded store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ranking.elo import online_elo
from service.artifacts import load_fit
from service.engine import Engine, elo_update
from service.settings import Settings
from service.store import open_store

VOTES = [
    {"model_a": "a", "model_b": "b", "winner": "model_a", "battle_id": "1"},
    {"model_a": "c", "model_b": "a", "winner": "model_a", "battle_id": "2"},
    {"model_a": "b", "model_b": "c", "winner": "tie", "battle_id": "3"},
    {"model_a": "d", "model_b": "b", "winner": "both_bad", "battle_id": "4"},
    {"model_a": "a", "model_b": "d", "winner": "model_b", "battle_id": "5"},
]


def test_elo_update_is_online_elo_continued() -> None:
    state = {"a": 1010.0, "b": 990.0, "c": 1003.5}
    got = elo_update(state, VOTES)
    models = ("a", "b", "c", "d")  # d is new: it starts at 1000
    matchups = np.array([[0, 1], [2, 0], [1, 2], [3, 1], [0, 3]])
    outcomes = np.array([1.0, 1.0, 0.5, 0.5, 0.0])
    start = np.array([1010.0, 990.0, 1003.5, 1000.0])
    expected = online_elo(4, matchups, outcomes, initial=start)
    assert list(got) == list(models)
    np.testing.assert_allclose([got[m] for m in models], expected, rtol=0, atol=1e-9)


def test_elo_update_known_answers() -> None:
    # two new models: 1000 each, expected score 1/2, K = 4
    assert elo_update({}, VOTES[:1]) == {"a": 1002.0, "b": 998.0}
    # FastChat's update by hand: the underdog wins
    delta = 4 * (1 - 1 / (1 + 10 ** ((1100 - 900) / 400)))
    got = elo_update({"a": 900.0, "b": 1100.0}, VOTES[:1])
    assert got == pytest.approx({"a": 900.0 + delta, "b": 1100.0 - delta}, abs=1e-12)
    assert elo_update({"a": 1.0}, []) == {"a": 1.0}


def test_elo_update_follows_arrival_order_not_tstamp() -> None:
    stamped = [v | {"tstamp": 2_000_000_000 - i} for i, v in enumerate(VOTES)]  # decreasing
    assert elo_update({}, stamped) == pytest.approx(elo_update({}, VOTES), abs=1e-12)
    assert elo_update({}, stamped[::-1]) != pytest.approx(elo_update({}, VOTES), abs=1e-6)


def engine(fit_dir: Path, store_path: Path) -> Engine:
    settings = Settings(fit_dir=fit_dir, store_path=store_path, redis_url=None, refit_interval_s=0)
    return Engine(open_store(path=store_path), load_fit(fit_dir), settings)


def state(served: Engine, user: str) -> dict[str, Any]:
    return {
        "version": served.served().version,
        "battles": served.store.battles(),
        "user": served.user_leaderboard(user),
        "user_elo": served.user_leaderboard(user, "elo"),
        "elo": served.leaderboard("elo"),
        "bt": served.leaderboard("bt"),
        "token": served.token(user),
    }


def test_engine_restart_keeps_everything(shared_fit_no_features: Path, tmp_path: Path) -> None:
    store_path = tmp_path / "store.sqlite"
    first = engine(shared_fit_no_features, store_path)
    try:
        votes = [
            {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a", "user_id": "r"},
            {"model_a": "sage-1.2", "model_b": "pico-3b", "winner": "tie", "user_id": "r"},
            {"model_a": "sage-1.2", "model_b": "lyra-mini", "winner": "model_b"},
        ]
        result = first.ingest(votes)
        assert result["accepted"] == 3 and set(result["tokens"]) == {"r"}
        before = state(first, "r")
    finally:
        first.close()
    assert before["version"] == 1 and len(before["battles"]) == 3

    second = engine(shared_fit_no_features, store_path)
    try:
        after = state(second, "r")
        assert after == before  # same battles, user documents, Elo, version and token
        again = second.ingest(before["battles"])  # their ids were stored: all duplicates
        assert (again["accepted"], again["duplicates"]) == (0, 3)
    finally:
        second.close()


def test_a_new_fit_is_published_as_a_new_version(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    store_path = tmp_path / "store.sqlite"
    first = engine(shared_fit_no_features, store_path)
    try:
        first.ingest([{"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a"}])
        elo = first.store.elo()
    finally:
        first.close()

    refitted = tmp_path / "fit"
    shutil.copytree(shared_fit_no_features, refitted)
    manifest = json.loads((refitted / "manifest.json").read_text(encoding="utf-8"))
    manifest["created"] = "2001-01-01T00:00:00+00:00"
    (refitted / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    second = engine(refitted, store_path)
    try:
        served = second.served()
        assert served.version == 2
        assert served.snapshot["fit_created"] == "2001-01-01T00:00:00+00:00"
        assert second.store.elo() == elo  # the live Elo state is kept, not reset
        assert second.leaderboard("bt")["version"] == 2
    finally:
        second.close()
