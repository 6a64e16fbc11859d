"""``service.personal.personal_leaderboard``: one user's leaderboard from their votes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from ranking.io.validation import battles_from_records
from service.personal import personal_leaderboard

MODELS = ("a", "b", "c", "d")
AGGREGATE = np.array([1100.0, 1050.0, 1000.0, 850.0])
ALPHA = 2.0  # a fixed prior precision: no shrinkage search, deterministic


def frame(*votes: tuple[str, str, str]) -> pd.DataFrame:
    records = [{"model_a": a, "model_b": b, "winner": w, "user_id": "u"} for a, b, w in votes]
    battles, errors, _ = battles_from_records(records)
    assert not errors
    return battles


BASE = frame(("a", "b", "model_a"), ("c", "d", "tie"), ("b", "c", "model_b"))


def board(battles: pd.DataFrame, **options: Any) -> dict[str, Any]:
    options.setdefault("alpha", ALPHA)
    return personal_leaderboard("u", battles, MODELS, AGGREGATE, **options)


def ratings(document: dict[str, Any]) -> dict[str, float]:
    return {m["model"]: m["rating"] for m in document["models"]}


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_document_shape(method: str) -> None:
    document = board(BASE, method=method)
    assert document["method"] == method
    assert document["user_id"] == "u"
    assert document["source"] == "fitted"
    assert document["n_battles"] == 3
    rows = document["models"]
    assert sorted(m["model"] for m in rows) == sorted(MODELS)
    assert [m["rating"] for m in rows] == sorted((m["rating"] for m in rows), reverse=True)
    for row in rows:
        assert row["lower"] <= row["rating"] <= row["upper"]
        assert row["rank"] == 1 + sum(o["lower"] > row["upper"] for o in rows)
    counts = {m["model"]: (m["wins"], m["losses"], m["ties"]) for m in rows}
    assert counts == {"a": (1, 0, 0), "b": (0, 2, 0), "c": (1, 0, 1), "d": (0, 0, 1)}


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_more_wins_raise_a_rating(method: str) -> None:
    wins = frame(*[("d", "a", "model_a")] * 6)
    before = ratings(board(BASE, method=method))
    after = ratings(board(pd.concat([BASE, wins], ignore_index=True), method=method))
    assert after["d"] > before["d"]
    assert after["a"] < before["a"]


def test_bt_intervals_narrow_with_votes() -> None:
    few = board(BASE)["models"]
    many = board(pd.concat([BASE] * 10, ignore_index=True))["models"]
    width = {m["model"]: m["upper"] - m["lower"] for m in few}
    for row in many:
        assert row["upper"] - row["lower"] < width[row["model"]]


def test_a_prior_makes_it_blended() -> None:
    prior = np.array([900.0, 1000.0, 1000.0, 1100.0])
    document = board(BASE, prior=prior)
    assert document["source"] == "blended"
    # toward the prior: d (best in the prior) rates higher than when fitted toward the aggregate
    assert ratings(document)["d"] > ratings(board(BASE))["d"]
    # without a vote between known models, the ratings are the prior's
    nothing = board(frame(("a", "new-model", "model_a")), prior=prior)
    assert ratings(nothing) == pytest.approx(dict(zip(MODELS, prior, strict=True)))


def test_spearman_against_the_aggregate() -> None:
    agreeing = board(frame(*[("a", "d", "model_a")] * 5))
    assert agreeing["spearman"] == 1.0  # only a and d voted on: in the aggregate's order
    reversed_ = board(frame(*[("d", "a", "model_a")] * 20))
    assert reversed_["spearman"] == -1.0


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_spearman_is_none_when_undefined(method: str) -> None:
    # only a vote between a known model and one this version lacks: nothing to compare
    document = board(frame(("a", "new-model", "model_a")), method=method)
    assert document["spearman"] is None
    assert document["n_battles"] == 0
    assert ratings(document) == pytest.approx(dict(zip(MODELS, AGGREGATE, strict=True)))
