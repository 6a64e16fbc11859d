"""``service.live.votes``: the online Elo update applied with each stored batch."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.elo import online_elo
from service.live.votes import battle_documents, battle_frame, elo_update

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


def test_battle_documents_give_every_battle_an_id_and_read_back() -> None:
    frame = battle_frame([{k: v for k, v in vote.items() if k != "battle_id"} for vote in VOTES])
    documents = battle_documents(frame)
    ids = [d["battle_id"] for d in documents]
    assert len(set(ids)) == len(VOTES) and all(isinstance(i, str) and i for i in ids)
    assert documents[0]["prompt"] is None  # missing values are JSON nulls, not NaN
    again = battle_frame(documents)
    assert again["winner"].astype(str).tolist() == [v["winner"] for v in VOTES]
    assert battle_frame([]).empty
