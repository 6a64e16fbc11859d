"""``POST /v1/recommend`` with a ``prompt`` (and a user's token): the per-prompt ranking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.pipeline.artifacts import load_fit
from tests.service.api.test_explanation import check_explanation
from tests.service.conftest import (
    ADMIN,
    ADMIN_KEY,
    INGEST,
    assert_error,
    bearer,
)

QUERIES = ["How do I reverse a linked list in Rust?", "Explain p-values simply"]
CODE = "Write a Python function that merges two sorted lists, with unit tests."
POEM = "Write a short poem about autumn rain falling on an old stone bridge."


@pytest.fixture(scope="module")
def busiest_user(shared_fit: Path) -> str:
    battles = load_fit(shared_fit).read_battles()
    assert battles is not None
    return str(battles["user_id"].value_counts().index[0])


def order(document: dict[str, Any]) -> list[str]:
    return [row["model"] for row in document["models"]]


def ratings(document: dict[str, Any]) -> dict[str, float]:
    return {row["model"]: row["rating"] for row in document["models"]}


def test_a_prompt_gives_its_own_ranking(client: TestClient) -> None:
    person = client.post("/v1/recommend", json={"queries": QUERIES})
    assert person.status_code == 200, person.text
    assert person.json()["scope"] == "person"
    answers = {
        name: client.post("/v1/recommend", json={"queries": QUERIES, "prompt": prompt})
        for name, prompt in (("code", CODE), ("poem", POEM))
    }
    for response in answers.values():
        assert response.status_code == 200, response.text
        document = response.json()
        assert document["scope"] == "prompt" and document["source"] == "predicted"
        assert set(document["prompt_topic"]) == {"topic", "label"}
        assert document["n_queries"] == 2 and document["n_votes"] == 0
        rows = document["models"]
        assert len(rows) == len(person.json()["models"])
        assert [r["rating"] for r in rows] == sorted((r["rating"] for r in rows), reverse=True)
        for row in rows:
            assert row["lower"] <= row["rating"] <= row["upper"]
            assert 0.0 <= row["p_best"] <= 1.0
    code, poem = answers["code"].json(), answers["poem"].json()
    assert code["prompt_topic"]["topic"] != poem["prompt_topic"]["topic"]
    assert ratings(code) != ratings(poem)
    assert order(code) != order(poem)
    again = client.post("/v1/recommend", json={"queries": QUERIES, "prompt": CODE})
    assert again.json() == code  # deterministic


def test_votes_shift_the_prompts_ranking(client: TestClient) -> None:
    plain = client.post("/v1/recommend", json={"queries": QUERIES, "prompt": CODE}).json()
    best, worst = order(plain)[0], order(plain)[-1]
    votes = [{"model_a": worst, "model_b": best, "winner": "model_a"}] * 4
    body = {"queries": QUERIES, "prompt": CODE, "votes": votes}
    shifted = client.post("/v1/recommend", json=body)
    assert shifted.status_code == 200, shifted.text
    document = shifted.json()
    assert document["source"] == "blended" and document["n_votes"] == 4
    assert document["scope"] == "prompt"
    gap = ratings(document)[best] - ratings(document)[worst]
    assert gap < ratings(plain)[best] - ratings(plain)[worst]


def test_a_users_stored_votes_need_their_token(client: TestClient, busiest_user: str) -> None:
    body = {"queries": QUERIES, "prompt": CODE, "user_id": busiest_user}
    assert_error(client.post("/v1/recommend", json=body), 401, "token")
    other = client.get("/v1/admin/users/someone-else/token", headers=ADMIN).json()["token"]
    wrong = client.post("/v1/recommend", json={**body, "token": other})
    assert_error(wrong, 403, "does not belong")
    assert_error(client.post("/v1/recommend", json=body, headers=bearer(other)), 403)
    assert_error(client.post("/v1/recommend", json=body, headers=INGEST), 403)
    # the admin key is taken from the Authorization header only, not as the body's token
    admin_in_body = client.post("/v1/recommend", json={**body, "token": ADMIN_KEY})
    assert_error(admin_in_body, 403, "does not belong")

    token = client.get(f"/v1/admin/users/{busiest_user}/token", headers=ADMIN).json()["token"]
    answers = [
        client.post("/v1/recommend", json={**body, "token": token}),
        client.post("/v1/recommend", json=body, headers=bearer(token)),
        client.post("/v1/recommend", json=body, headers=ADMIN),
    ]
    for response in answers:
        assert response.status_code == 200, response.text
    document = answers[0].json()
    assert answers[1].json() == document == answers[2].json()
    assert document["source"] == "blended" and document["n_votes"] > 0
    assert document["n_queries"] > len(QUERIES)  # the stored votes' prompts joined
    person = client.post("/v1/recommend", json={"queries": QUERIES, "user_id": busiest_user,
                                                "token": token})  # fmt: skip
    assert person.status_code == 200, person.text
    assert person.json()["scope"] == "person" and person.json()["source"] == "blended"
    assert person.json()["n_votes"] == document["n_votes"]


def test_the_next_battle_of_a_user_by_id_takes_the_same_credentials(
    client: TestClient, busiest_user: str
) -> None:
    """``POST /v1/next-battle`` with a ``user_id`` checks the token as recommend does."""
    body = {"queries": QUERIES, "user_id": busiest_user}
    assert_error(client.post("/v1/next-battle", json=body), 401, "token")
    other = client.get("/v1/admin/users/someone-else/token", headers=ADMIN).json()["token"]
    assert_error(client.post("/v1/next-battle", json=body, headers=bearer(other)), 403)
    token = client.get(f"/v1/admin/users/{busiest_user}/token", headers=ADMIN).json()["token"]
    by_header = client.post("/v1/next-battle", json=body, headers=bearer(token))
    in_body = client.post("/v1/next-battle", json={**body, "token": token})
    assert by_header.status_code == 200, by_header.text
    assert by_header.json() == in_body.json()
    assert by_header.json()["source"] == "blended"


@pytest.mark.parametrize(
    ("prompt", "words"),
    [
        ("   ", ["prompt", "blank"]),
        ("x" * 20_001, ["prompt", "20001 characters"]),
        ("bad \ud800 text", ["prompt", "Unicode"]),
    ],
    ids=["blank", "oversized", "surrogate"],
)
def test_a_bad_prompt_is_422_naming_it(client: TestClient, prompt: str, words: list[str]) -> None:
    body = json.dumps({"queries": QUERIES, "prompt": prompt})  # "\\ud800" escaped
    headers = {"Content-Type": "application/json"}
    response = client.post("/v1/recommend", content=body, headers=headers)
    assert_error(response, 422, *words)


def test_a_bad_user_id_or_prompt_type_is_422(client: TestClient) -> None:
    response = client.post("/v1/recommend", json={"queries": QUERIES, "user_id": "u" * 300})
    assert response.status_code == 422 and "user_id" in str(response.json()["detail"])
    response = client.post("/v1/recommend", json={"queries": QUERIES, "prompt": 3})
    assert response.status_code == 422 and "prompt" in str(response.json()["detail"])


def test_without_a_predictor_a_prompt_is_404(client_no_features: TestClient) -> None:
    response = client_no_features.post("/v1/recommend", json={"queries": QUERIES, "prompt": CODE})
    assert_error(response, 404, "predictor")


def test_a_prompts_ranking_says_why_for_this_prompt(client: TestClient) -> None:
    document = client.post("/v1/recommend", json={"queries": QUERIES, "prompt": CODE}).json()
    explanation = document["explanation"]
    check_explanation(explanation, document)
    assert explanation["scope"] == "prompt" and explanation["n_queries"] == 2
    (topic,) = explanation["topics"]
    assert topic["topic"] == document["prompt_topic"]["topic"] and topic["share"] == 1.0
    assert topic["fits"]
    assert explanation["sentences"][0] == f"For this prompt: it reads as {topic['name']}."
    for row in explanation["models"]:
        assert row["votes"] == 0.0 and row["topic"] is not None
    person = client.post("/v1/recommend", json={"queries": QUERIES}).json()["explanation"]
    assert person["scope"] == "person"
    # the prompt's topic replaced the queries': the topic parts differ, the style parts do not
    by_model = {m["model"]: m for m in person["models"]}
    shared = [m for m in explanation["models"] if m["model"] in by_model]
    assert any(m["topic"] != by_model[m["model"]]["topic"] for m in shared) or not shared
    for m in shared:
        assert m["style"] == pytest.approx(by_model[m["model"]]["style"], abs=0.01)

    winner = document["models"][-1]["model"]
    votes = [{"model_a": winner, "model_b": document["models"][0]["model"], "winner": "model_a"}]
    voted = client.post(
        "/v1/recommend", json={"queries": QUERIES, "prompt": CODE, "votes": votes * 4}
    ).json()
    check_explanation(voted["explanation"], voted)
    assert any(m["votes"] != 0.0 for m in voted["explanation"]["models"])


def test_a_prompt_far_from_every_topic_is_not_given_one(client: TestClient) -> None:
    tax = "What deductions can I claim on my tax return as a freelancer?"
    document = client.post("/v1/recommend", json={"queries": QUERIES, "prompt": tax}).json()
    explanation = document["explanation"]
    check_explanation(explanation, document)
    assert not explanation["topics"][0]["fits"]
    assert explanation["sentences"][0] == "For this prompt: none of our topics fits it closely."
