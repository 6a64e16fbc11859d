"""``GET /v1/users/{user_id}/next-battle`` and ``POST /v1/next-battle`` through the app."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from service.live.next_battle import INFORMATIVE_BITS, last_pair, next_battle_document
from service.pipeline.artifacts import load_fit
from tests.service.conftest import (
    ADMIN,
    INGEST,
    assert_error,
    read_as_owner,
)

QUERIES = ["How do I reverse a linked list in Rust?", "Write a short poem about autumn rain"]
DOCUMENT_KEYS = {
    "target",
    "model_a", "model_b", "information", "p_a", "p_best_a", "p_best_b", "entropy",
    "alternatives", "informative", "source", "version",
}  # fmt: skip


@pytest.fixture(scope="module")
def fit_models(shared_fit: Path) -> set[str]:
    battles = load_fit(shared_fit).read_battles()
    assert battles is not None
    return set(battles["model_a"]) | set(battles["model_b"])


@pytest.fixture(scope="module")
def busiest_user(shared_fit: Path) -> str:
    battles = load_fit(shared_fit).read_battles()
    assert battles is not None
    return str(battles["user_id"].value_counts().index[0])


def check_document(document: dict[str, Any], models: set[str]) -> None:
    """The next-battle shape: two different known models, bits and probabilities in range."""
    assert DOCUMENT_KEYS <= set(document), document
    assert document["model_a"] != document["model_b"]
    assert {document["model_a"], document["model_b"]} <= models
    assert document["information"] >= 0.0
    assert 0.0 <= document["entropy"] <= 4.0  # log2(15) = 3.9
    for key in ("p_a", "p_best_a", "p_best_b"):
        assert 0.0 <= document[key] <= 1.0, (key, document)
    chosen = {document["model_a"], document["model_b"]}
    assert 1 <= len(document["alternatives"]) <= 3
    for pair in document["alternatives"]:
        assert set(pair) == {"model_a", "model_b", "information"}
        assert {pair["model_a"], pair["model_b"]} != chosen
        assert 0.0 <= pair["information"] <= document["information"] + 1e-9
    assert None not in document.values()  # an absent key is left out, never null
    assert document["informative"] is (document["information"] >= INFORMATIVE_BITS)


def test_user_next_battle_needs_the_users_token(
    client: TestClient, busiest_user: str, fit_models: set[str]
) -> None:
    path = f"/v1/users/{busiest_user}/next-battle"
    assert_error(client.get(path), 401, "token")
    token = client.get(f"/v1/admin/users/{busiest_user}/token", headers=ADMIN).json()["token"]
    other = client.get("/v1/admin/users/someone-else/token", headers=ADMIN).json()["token"]
    document = read_as_owner(client, path, token, other)
    check_document(document, fit_models)
    assert document["user_id"] == busiest_user
    assert document["source"] in ("fitted", "blended")
    assert document["n_battles"] > 0
    assert document["target"] == "best"
    board = client.get(f"/v1/users/{busiest_user}/leaderboard", headers=ADMIN).json()
    ranked = [row["model"] for row in board["models"]]
    assert ranked.index(document["model_a"]) < ranked.index(document["model_b"])

    whole = client.get(path, params={"token": token, "target": "ranking"})
    assert whole.status_code == 200, whole.text
    check_document(whole.json(), fit_models)
    assert whole.json()["target"] == "ranking"
    bad = client.get(path, params={"token": token, "target": "worst"})
    assert bad.status_code == 422 and "target" in str(bad.json()["detail"])


def test_unknown_user_is_404_and_a_bad_id_422(client: TestClient) -> None:
    assert_error(client.get("/v1/users/nobody-at-all/next-battle", headers=ADMIN), 404, "nobody")
    response = client.get(f"/v1/users/{'u' * 300}/next-battle", headers=ADMIN)
    assert response.status_code == 422
    assert "user_id" in str(response.json()["detail"])


def test_a_new_voters_next_battle_follows_their_votes(
    client: TestClient, fit_models: set[str]
) -> None:
    votes = [
        {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "model_a", "user_id": "fresh"}
    ]
    answer = client.post("/v1/battles", json={"battles": votes}, headers=INGEST)
    assert answer.status_code == 200, answer.text
    token = answer.json()["tokens"]["fresh"]
    response = client.get("/v1/users/fresh/next-battle", params={"token": token})
    assert response.status_code == 200, response.text
    document = response.json()
    check_document(document, fit_models)
    assert document["user_id"] == "fresh" and document["n_battles"] == 1


def test_next_battle_from_queries(client: TestClient, fit_models: set[str]) -> None:
    response = client.post("/v1/next-battle", json={"queries": QUERIES})
    assert response.status_code == 200, response.text
    predicted = response.json()
    check_document(predicted, fit_models)
    assert predicted["source"] == "predicted" and predicted["n_votes"] == 0
    assert "user_id" not in predicted
    again = client.post("/v1/next-battle", json={"queries": QUERIES}).json()
    assert again == predicted

    a, b = predicted["model_a"], predicted["model_b"]
    votes = [{"model_a": a, "model_b": b, "winner": "model_b"}] * 3
    blended = client.post("/v1/next-battle", json={"queries": QUERIES, "votes": votes})
    assert blended.status_code == 200, blended.text
    assert blended.json()["source"] == "blended" and blended.json()["n_votes"] == 3
    check_document(blended.json(), fit_models)

    whole = client.post("/v1/next-battle", json={"queries": QUERIES, "target": "ranking"})
    assert whole.status_code == 200, whole.text
    assert whole.json()["target"] == "ranking"
    check_document(whole.json(), fit_models)


def test_next_battle_rejects_bad_input_naming_the_field(client: TestClient) -> None:
    missing = client.post("/v1/next-battle", json={})
    assert missing.status_code == 422 and "queries" in str(missing.json()["detail"])
    empty = client.post("/v1/next-battle", json={"queries": []})
    assert empty.status_code == 422 and "queries" in str(empty.json()["detail"])
    extra = client.post("/v1/next-battle", json={"queries": QUERIES, "extra": 1})
    assert extra.status_code == 422 and "extra" in str(extra.json()["detail"])
    target = client.post("/v1/next-battle", json={"queries": QUERIES, "target": "worst"})
    assert target.status_code == 422 and "target" in str(target.json()["detail"])
    assert_error(
        client.post("/v1/next-battle", json={"queries": ["fine", "   "]}), 422, "queries[1]"
    )
    bad_vote = {"model_a": "pico-3b", "model_b": "lyra-mini", "winner": "me"}
    assert_error(
        client.post("/v1/next-battle", json={"queries": QUERIES, "votes": [bad_vote]}),
        422,
        "votes[0]",
        "winner",
    )
    unknown = {"model_a": "pico-3b", "model_b": "gpt-17-mega", "winner": "model_a"}
    assert_error(
        client.post("/v1/next-battle", json={"queries": QUERIES, "votes": [unknown]}),
        422,
        "'gpt-17-mega'",
    )


def test_without_a_predictor_queries_give_404(client_no_features: TestClient) -> None:
    response = client_no_features.post("/v1/next-battle", json={"queries": QUERIES})
    assert_error(response, 404, "predictor")


def test_both_routes_are_in_the_schema(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "get" in paths["/v1/users/{user_id}/next-battle"]
    assert "post" in paths["/v1/next-battle"]


def test_right_after_a_vote_the_same_pair_is_not_asked_again(
    client: TestClient, fit_models: set[str]
) -> None:
    first = client.post("/v1/next-battle", json={"queries": QUERIES}).json()
    a, b = first["model_a"], first["model_b"]
    for winner in ("model_a", "model_b", "tie"):
        vote = {"model_a": a, "model_b": b, "winner": winner}
        after = client.post("/v1/next-battle", json={"queries": QUERIES, "votes": [vote]})
        assert after.status_code == 200, after.text
        document = after.json()
        check_document(document, fit_models)
        assert {document["model_a"], document["model_b"]} != {a, b}
        if "skipped" in document:  # still the most informative: said, not asked
            skipped = document["skipped"]
            assert {skipped["model_a"], skipped["model_b"]} == {a, b}
            assert skipped["information"] >= document["information"]


def board(rows: list[tuple[str, float, float]]) -> dict[str, Any]:
    """A board document of (model, rating, half-width of its 95% interval) rows."""
    return {
        "models": [{"model": m, "rating": r, "lower": r - w, "upper": r + w} for m, r, w in rows],
        "source": "predicted",
    }


def test_the_document_skips_the_last_pair_and_says_so() -> None:
    # two unknown contenders far above two known models
    two_close = board([("a", 1100, 400), ("b", 1100, 400), ("c", 500, 40), ("d", 450, 40)])
    plain = next_battle_document(two_close)
    assert {plain["model_a"], plain["model_b"]} == {"a", "b"} and "skipped" not in plain
    assert plain["informative"] and plain["information"] >= INFORMATIVE_BITS
    after = next_battle_document(two_close, last=("b", "a"))
    assert {after["model_a"], after["model_b"]} != {"a", "b"}
    assert after["skipped"] == {
        "model_a": plain["model_a"],
        "model_b": plain["model_b"],
        "information": plain["information"],
    }
    listed = [{p["model_a"], p["model_b"]} for p in after["alternatives"]]
    assert {"a", "b"} not in listed
    # the next best pair tells almost nothing here: it is not said to tell them apart
    assert not after["informative"] and after["information"] < INFORMATIVE_BITS
    # a last vote naming a model the board lacks changes nothing
    assert next_battle_document(two_close, last=("a", "zzz")) == plain


def test_last_pair_reads_the_latest_vote() -> None:
    votes = [
        {"model_a": "a", "model_b": "b", "winner": "tie"},
        {"model_a": "c", "model_b": "d", "winner": "model_a"},
    ]
    assert last_pair(votes) == ("c", "d")
    assert last_pair(pd.DataFrame(votes)) == ("c", "d")
    assert last_pair([]) is None and last_pair(None) is None
    assert last_pair([{"model_a": 1, "model_b": "b"}]) is None
