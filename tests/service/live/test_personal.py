"""``service.live.personal.personal_leaderboard``: one user's leaderboard from their votes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from features.answer_style import ANSWER_STYLE_FEATURES, answer_style
from ranking.io.validation import battles_from_records
from ranking.personal_style.results import StylePrior
from service.api.schemas.users import UserLeaderboardPublic
from service.live.personal import fit_taste_prior, personal_leaderboard, typical_answer_style
from service.pipeline.style import fit_style_document

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


# --- a person's taste in answers (issue 34, item 2) ---

SHORT, LONG = "Yes, because it is. " * 4, "Yes, because it is. " * 40
#: Everyone likes longer answers a little (0.1 nats per doubling); a person departs by
#: 0.5 nats typically (alpha 4); no formatting preference.
TASTE = StylePrior(
    ANSWER_STYLE_FEATURES, np.array([0.1, 0.0, 0.0, 0.0]), np.eye(4) * 1e-4, 4.0, True, "mixed"
)


def answered(n: int, short_wins: float, seed: int = 0) -> pd.DataFrame:
    """``n`` votes with answers, one short and one long at random sides, where the short
    answer wins with probability ``short_wins``."""
    rng = np.random.default_rng(seed)
    votes, answers = [], []
    for _ in range(n):
        a, b = rng.choice(MODELS, 2, replace=False)
        long_on_a = bool(rng.random() < 0.5)
        short_won = bool(rng.random() < short_wins)
        winner = "model_a" if long_on_a != short_won else "model_b"
        votes.append((str(a), str(b), winner))
        answers.append((LONG, SHORT) if long_on_a else (SHORT, LONG))
    battles = frame(*votes)
    battles["answer_a"] = [x for x, _ in answers]
    battles["answer_b"] = [y for _, y in answers]
    return battles


def test_a_person_who_prefers_short_answers_is_told_so() -> None:
    document = board(answered(80, 0.9), taste_prior=TASTE)
    taste = document["explanation"]["taste"]
    assert taste["source"] == "person" and taste["n_votes"] == 80
    length = taste["features"][0]
    assert length["feature"] == "length" and length["unit"] == "per doubling of length"
    assert length["distinct"] and length["upper"] < 0 < length["everyone"]
    assert length["sentence"].startswith("You prefer shorter answers than most: -")
    assert length["sentence"] in document["explanation"]["sentences"]
    # no answer had any formatting: nothing is said of it
    assert not any(f["distinct"] or f["sentence"] for f in taste["features"][1:])
    # the REST body of the board keeps it (GET /v1/users/{user_id}/leaderboard)
    public = UserLeaderboardPublic.model_validate({**document, "version": 1}).model_dump()
    assert public["explanation"]["taste"] == taste


def test_a_person_who_prefers_long_answers_is_told_so() -> None:
    taste = board(answered(80, 0.05, seed=1), taste_prior=TASTE)["explanation"]["taste"]
    length = taste["features"][0]
    assert length["distinct"] and length["lower"] > length["everyone"]
    assert length["sentence"].startswith("You prefer longer answers than most: +")


def test_a_few_votes_cannot_tell_a_taste_yet() -> None:
    explanation = board(answered(3, 1.0, seed=2), taste_prior=TASTE)["explanation"]
    taste = explanation["taste"]
    assert not any(f["distinct"] for f in taste["features"])
    assert (
        "Your 3 votes cannot yet tell your taste in answers (length, headers, lists and bold) "
        "apart from most voters'." in explanation["sentences"]
    )


def test_a_service_where_taste_does_not_help_uses_everyones() -> None:
    fallen = StylePrior(TASTE.features, TASTE.aggregate, TASTE.covariance, 4.0, False, "mixed")
    explanation = board(answered(80, 0.9), taste_prior=fallen)["explanation"]
    taste = explanation["taste"]
    assert taste["source"] == "everyone"
    assert [f["points"] for f in taste["features"]] == [f["everyone"] for f in taste["features"]]
    assert any("is read as everyone's" in s for s in explanation["sentences"])


def test_no_taste_without_answers_or_without_a_prior() -> None:
    assert board(BASE, taste_prior=TASTE)["explanation"]["taste"] is None
    assert board(answered(10, 0.9))["explanation"]["taste"] is None


def arena(tastes: dict[str, float], n: int = 150, seed: int = 3) -> pd.DataFrame:
    """``n`` answered votes of each user, who picks the short answer with probability
    ``tastes[user]``."""
    parts = []
    for k, (user, short_wins) in enumerate(tastes.items()):
        votes = answered(n, short_wins, seed=seed + k)
        votes["user_id"] = user
        parts.append(votes)
    return pd.concat(parts, ignore_index=True)


def test_the_prior_of_all_users_then_one_users_taste_under_it() -> None:
    tastes = {f"short{k}": 0.9 for k in range(6)} | {f"long{k}": 0.1 for k in range(6)}
    battles = arena(tastes, n=100)
    document = fit_style_document(battles)
    assert document is not None
    prior = fit_taste_prior(battles, document)
    assert prior is not None and prior.features[0] == "length"
    assert prior.personal  # every user far from everyone: per-user taste kept
    assert prior.models == MODELS and prior.typical is not None
    assert np.abs(prior.typical).max() < 0.3  # every model answers long and short alike
    mine = battles[battles["user_id"] == "short0"]
    taste = board(mine, taste_prior=prior)["explanation"]["taste"]
    length = taste["features"][0]
    assert length["distinct"] and length["sentence"].startswith("You prefer shorter answers")
    # the order of votes judges the earlier by the later ones too
    later = fit_taste_prior(battles, document, method="later")
    assert later is not None and later.alpha > 0


def test_no_prior_without_a_style_board_or_user_ids() -> None:
    battles = arena({"short": 0.9, "long": 0.1})
    document = fit_style_document(battles)
    assert fit_taste_prior(battles, None) is None
    assert fit_taste_prior(battles.drop(columns=["user_id"]), document) is None


def test_a_model_that_answers_long_is_not_a_taste_for_length() -> None:
    # model a always answers long, the others short; the user simply likes model a
    rng = np.random.default_rng(5)
    votes, answers = [], []
    for _ in range(120):
        other = str(rng.choice(MODELS[1:]))
        a_first = bool(rng.random() < 0.5)
        pair = ("a", other) if a_first else (other, "a")
        votes.append((*pair, "model_a" if a_first else "model_b"))
        answers.append((LONG, SHORT) if a_first else (SHORT, LONG))
    battles = frame(*votes)
    battles["answer_a"] = [x for x, _ in answers]
    battles["answer_b"] = [y for _, y in answers]
    style_a = answer_style(battles["answer_a"].tolist())
    style_b = answer_style(battles["answer_b"].tolist())
    matchups = np.array([[MODELS.index(x), MODELS.index(y)] for x, y, _ in votes])
    typical = typical_answer_style(style_a, style_b, matchups, len(MODELS))
    assert typical[0, 0] > 0 > typical[1:, 0].max()  # a answers longer than the rest
    prior = StylePrior(
        TASTE.features, TASTE.aggregate, TASTE.covariance, 4.0, True, "mixed", MODELS, typical
    )
    taste = board(battles, taste_prior=prior)["explanation"]["taste"]
    # every answer is its model's usual one: nothing is left to read as a taste
    assert not taste["features"][0]["distinct"]
    assert taste["features"][0]["points"] == pytest.approx(taste["features"][0]["everyone"])
