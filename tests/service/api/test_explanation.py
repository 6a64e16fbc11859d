"""``explanation`` of ``POST /v1/recommend`` and of a user's board (docs/SPEC.md section 5)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from service.cli import main
from tests.service.conftest import ADMIN, INGEST, assert_error, open_client, service_settings

QUERIES = [
    "Why does my Python loop raise IndexError: list index out of range?",
    "Write a Rust function that reverses a linked list",
    "Fix this JavaScript: TypeError: undefined is not a function",
]
PARTS = ("aggregate", "baseline", "topic", "style", "votes")
KEYS = {"topics", "style", "models", "n_queries", "note", "scope", "sentences", "taste"}
#: Internal terms and units a person should never read in the why (issue 32, item 4).
JARGON = ("starting point", " sd", "baseline", "prior", "Elo points", "z-score", "topic:")


def check_explanation(explanation: dict[str, Any], board: dict[str, Any]) -> None:
    """The documented shape; the top models are the board's, their parts add up."""
    assert set(explanation) == KEYS
    assert explanation["taste"] is None  # these votes carry no answers
    for topic in explanation["topics"]:
        assert set(topic) == {"topic", "label", "share", "population", "name", "fits"}
        assert isinstance(topic["label"], str) and topic["label"]
        assert isinstance(topic["name"], str) and topic["name"]
        assert 0.0 < topic["share"] <= 1.0 and 0.0 <= topic["population"] <= 1.0
    for trait in explanation["style"]:
        assert set(trait) == {"feature", "label", "z", "sentence"}
        assert isinstance(trait["label"], str) and abs(trait["z"]) >= 1.0
        assert trait["sentence"].startswith("you ")
    check_sentences(explanation)
    top = [m["model"] for m in board["models"][:3]]
    assert [m["model"] for m in explanation["models"]] == top
    shown = {m["model"]: m["rating"] for m in board["models"]}
    for row in explanation["models"]:
        assert set(row) == {"model", "rating", *PARTS}
        assert row["rating"] == pytest.approx(shown[row["model"]], abs=0.01)
        total = sum(row[p] for p in PARTS if row[p] is not None)
        assert total == pytest.approx(row["rating"], abs=0.05)


def check_sentences(explanation: dict[str, Any]) -> None:
    """The why in plain words: a sentence per top model naming it, moves in whole points,
    no internal term; topics named only where the queries fit them."""
    sentences = explanation["sentences"]
    assert all(isinstance(s, str) and s.endswith(".") for s in sentences)
    text = " ".join(sentences)
    assert not any(word in text for word in JARGON), text
    for model in explanation["models"]:
        said = [s for s in sentences if s.startswith(f"{model['model']}, rated ")]
        assert len(said) == 1, sentences
        for part, words in (("topic", "topics"), ("style", "writing style"), ("votes", "votes")):
            value = model[part]
            if value is not None and round(abs(value)) >= 1:
                way = "up" if value > 0 else "down"
                assert f"moved it {way} {round(abs(value))} point" in said[0], (part, said)
                assert words in said[0] or "this prompt" in said[0]
    topics = explanation["topics"]
    fitting = {t["name"] for t in topics if t["fits"]}
    first = sentences[0] if topics else ""
    if fitting:
        assert any(name in first for name in fitting), (first, topics)
    for topic in topics:
        if topic["name"] not in fitting:  # a query far from its topic: not named for it
            assert topic["name"] not in first, (first, topics)
    if explanation["note"]:
        assert sentences[-1] == explanation["note"]


def test_recommend_explains_its_ranking(client: TestClient) -> None:
    response = client.post("/v1/recommend", json={"queries": QUERIES})
    assert response.status_code == 200, response.text
    document = response.json()
    explanation = document["explanation"]
    check_explanation(explanation, document)
    assert explanation["n_queries"] == 3 and explanation["note"] is None
    labels = {t["topic"]: t["label"] for t in client.get("/v1/topics").json()["topics"]}
    for topic in explanation["topics"]:
        assert topic["label"] == labels[topic["topic"]]
    aggregate = {m["model"]: m["rating"] for m in client.get("/v1/leaderboard").json()["models"]}
    for row in explanation["models"]:
        assert row["aggregate"] == pytest.approx(aggregate[row["model"]], abs=0.01)
        assert row["votes"] == 0.0
        assert row["topic"] is not None and row["style"] is not None

    worst = document["models"][-1]["model"]
    others = [m["model"] for m in document["models"][:3]]
    votes = [{"model_a": worst, "model_b": o, "winner": "model_a"} for o in others for _ in "ab"]
    blended = client.post("/v1/recommend", json={"queries": QUERIES, "votes": votes}).json()
    check_explanation(blended["explanation"], blended)
    moved = {m["model"]: m["votes"] for m in blended["explanation"]["models"]}
    assert any(v != 0.0 for v in moved.values())


def test_a_users_board_explains_what_their_queries_and_votes_did(client: TestClient) -> None:
    top = client.post("/v1/recommend", json={"queries": QUERIES}).json()["models"]
    worst, best = top[-1]["model"], top[0]["model"]
    battles = [
        {
            "user_id": "explained",
            "model_a": worst,
            "model_b": best,
            "winner": "model_a",
            "prompt": prompt,
        }
        for prompt in QUERIES * 2
    ]
    answer = client.post("/v1/battles", json={"battles": battles}, headers=INGEST)
    assert answer.status_code == 200, answer.text
    token = answer.json()["tokens"]["explained"]
    board = client.get("/v1/users/explained/leaderboard", params={"token": token}).json()
    assert board["source"] == "blended"
    explanation = board["explanation"]
    check_explanation(explanation, board)
    assert explanation["n_queries"] == 6 and explanation["topics"]
    rows = {m["model"]: m for m in explanation["models"]}
    for row in rows.values():
        assert row["topic"] is not None and row["style"] is not None
    if worst in rows:  # six votes won: the votes lift it
        assert rows[worst]["votes"] > 0.0

    elo = client.get("/v1/users/explained/leaderboard", params={"token": token, "method": "elo"})
    assert elo.status_code == 200, elo.text
    check_explanation(elo.json()["explanation"], elo.json())
    for row in elo.json()["explanation"]["models"]:
        assert row["topic"] is None and row["baseline"] is None
    assert "Elo" in elo.json()["explanation"]["note"]


def test_a_board_without_queries_says_so(client: TestClient) -> None:
    vote = {"user_id": "no-prompts", "model_a": "pico-3b", "model_b": "sage-1.2"}
    battles = [{**vote, "winner": "model_a"} for _ in range(3)]
    answer = client.post("/v1/battles", json={"battles": battles}, headers=INGEST)
    assert answer.status_code == 200, answer.text
    board = client.get("/v1/users/no-prompts/leaderboard", headers=ADMIN).json()
    assert board["source"] == "fitted"
    explanation = board["explanation"]
    check_explanation(explanation, board)
    assert explanation["topics"] == [] and explanation["n_queries"] == 0
    assert "no prediction from your queries" in explanation["note"]
    for row in explanation["models"]:
        assert row["topic"] is None and row["style"] is None and row["baseline"] is None


def test_bad_input_is_still_422(client: TestClient) -> None:
    assert client.post("/v1/recommend", json={"queries": []}).status_code == 422
    assert_error(client.post("/v1/recommend", json={"queries": ["  "]}), 422, "queries[0]")
    unknown = [{"model_a": "no-such-model", "model_b": "pico-3b", "winner": "model_a"}]
    response = client.post("/v1/recommend", json={"queries": QUERIES, "votes": unknown})
    assert_error(response, 422, "no-such-model")


def test_the_schema_documents_the_explanation(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("RecommendPublic", "UserLeaderboardPublic"):
        assert "explanation" in schemas[name]["properties"]
    assert set(schemas["ExplainedModelPublic"]["properties"]) == {"model", "rating", *PARTS}
    assert set(schemas["ExplanationPublic"]["properties"]) == KEYS
    assert set(schemas["TastePublic"]["properties"]) == {
        "source",
        "features",
        "n_votes",
        "confidence",
    }
    assert set(schemas["AnswerTastePublic"]["properties"]) == {
        "feature",
        "unit",
        "points",
        "lower",
        "upper",
        "everyone",
        "distinct",
        "sentence",
    }


def test_queries_far_from_every_topic_do_not_name_one(client: TestClient) -> None:
    far = [
        "How do I file my taxes as a freelancer in Germany?",
        "What deductions can I claim on my tax return?",
    ]
    explanation = client.post("/v1/recommend", json={"queries": far}).json()["explanation"]
    check_explanation(explanation, client.post("/v1/recommend", json={"queries": far}).json())
    assert explanation["topics"] and not any(t["fits"] for t in explanation["topics"])
    assert explanation["sentences"][0] == "None of our topics fits your queries closely."


# --- a person's taste in answers, end to end (issue 34, item 2) ---


def taste_log(path: Path, per_user: int = 120, seed: int = 0) -> Path:
    """Votes with answers of 16 users: half pick the longer answer more often (1.5
    nats per doubling), half the shorter; each answer's length varies about its model's."""
    rng = np.random.default_rng(seed)
    names = np.array(["long", "mid", "short"])
    words = np.array([300, 150, 80])
    rows = []
    for k in range(16):
        taste = 1.5 if k % 2 == 0 else -1.5
        for _ in range(per_user):
            i, j = rng.choice(3, 2, replace=False)
            a = int(words[i] * 2.0 ** rng.normal(0.0, 0.8)) + 1
            b = int(words[j] * 2.0 ** rng.normal(0.0, 0.8)) + 1
            p = 1.0 / (1.0 + np.exp(-taste * np.log2(a / b)))
            rows.append(
                {
                    "model_a": names[i],
                    "model_b": names[j],
                    "winner": "model_a" if rng.random() < p else "model_b",
                    "user_id": f"{'long' if taste > 0 else 'short'}-lover-{k}",
                    "answer_a": "word " * a,
                    "answer_b": "word " * b,
                }
            )
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)
    return path


@pytest.fixture(scope="module")
def taste_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("taste-fit")
    log = taste_log(folder / "votes.jsonl")
    assert main(["-q", "fit", str(log), "--out", str(folder / "fit"), "--no-features"]) == 0
    with open_client(service_settings(folder / "fit", store_path=folder / "s.sqlite")) as c:
        yield c


def test_a_users_board_says_their_taste_in_answers(taste_client: TestClient) -> None:
    short = taste_client.get("/v1/users/short-lover-1/leaderboard", headers=ADMIN)
    assert short.status_code == 200, short.text
    taste = short.json()["explanation"]["taste"]
    assert taste is not None and taste["source"] == "person" and taste["n_votes"] == 120
    length = taste["features"][0]
    assert length["feature"] == "length" and length["distinct"]
    assert length["points"] < length["everyone"]
    assert length["sentence"].startswith("You prefer shorter answers than most: -")
    assert length["sentence"] in short.json()["explanation"]["sentences"]
    long = taste_client.get("/v1/users/long-lover-0/leaderboard", headers=ADMIN).json()
    assert long["explanation"]["taste"]["features"][0]["sentence"].startswith(
        "You prefer longer answers than most: +"
    )
    # a vote without answers since does not change what the answered votes say
    vote = {"user_id": "short-lover-1", "model_a": "long", "model_b": "mid", "winner": "tie"}
    answer = taste_client.post("/v1/battles", json={"battles": [vote]}, headers=INGEST)
    assert answer.status_code == 200, answer.text
    again = taste_client.get("/v1/users/short-lover-1/leaderboard", headers=ADMIN).json()
    assert again["n_battles"] == 121 and again["explanation"]["taste"]["n_votes"] == 120
