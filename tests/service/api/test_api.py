"""The REST contract (docs/SPEC.md section 4) against the real app, on both real stores.

Every test runs twice: on the embedded SQLite store and on a real ``redis-server``. The
app serves the session's shared fit (``plb simulate`` + ``plb fit``); nothing is mocked,
and any 5xx answer fails the test (:func:`open_client`).
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from service.live.tokens import user_token
from service.live.votes import elo_update
from service.pipeline.artifacts import load_fit
from service.web import badge_words
from tests.service.conftest import (
    ADMIN,
    ADMIN_KEY,
    INGEST,
    INGEST_KEY,
    assert_error,
    bearer,
    check_leaderboard,
    open_client,
    read_as_owner,
    service_settings,
)

QUERIES = ["How do I reverse a linked list in Rust?", "Write a short poem about autumn rain"]
#: Every route of the SPEC's REST table that belongs in the OpenAPI schema.
SPEC_ROUTES = {
    "/v1/leaderboard": "get",
    "/v1/users/{user_id}/leaderboard": "get",
    "/v1/recommend": "post",
    "/v1/battles": "post",
    "/v1/analysis/correlations": "get",
    "/v1/models": "get",
    "/v1/topics": "get",
    "/healthz": "get",
    "/metrics": "get",
    "/widget/badge.svg": "get",
}


@pytest.fixture
def client(shared_fit: Path, store: dict[str, Any]) -> Iterator[TestClient]:
    """The service on the shared fit (topics and predictor), with both keys."""
    with open_client(service_settings(shared_fit, **store)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def fit_battles(shared_fit: Path) -> Any:
    """The battles of the shared fit (a frame)."""
    battles = load_fit(shared_fit).read_battles()
    assert battles is not None
    return battles


@pytest.fixture(scope="module")
def busiest_user(fit_battles: Any) -> str:
    """The user of the fitted log with the most votes."""
    return str(fit_battles["user_id"].value_counts().index[0])


def vote(a: str, b: str, winner: str = "model_a", **fields: Any) -> dict[str, Any]:
    return {"model_a": a, "model_b": b, "winner": winner, **fields}


def ingest(client: TestClient, battles: list[Any], key: str = INGEST_KEY) -> dict[str, Any]:
    response = client.post("/v1/battles", json={"battles": battles}, headers=bearer(key))
    assert response.status_code == 200, response.text
    return response.json()


def ratings(document: dict[str, Any]) -> dict[str, float]:
    return {m["model"]: m["rating"] for m in document["models"]}


def rows_by_model(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["model"]: m for m in document["models"]}


# -- reads ---------------------------------------------------------------------------------


def test_aggregate_leaderboards(client: TestClient, fit_battles: Any) -> None:
    for method in ("bt", "elo"):
        response = client.get("/v1/leaderboard", params={"method": method})
        assert response.status_code == 200, response.text
        document = response.json()
        check_leaderboard(document, method)
        assert document["n_battles"] == len(fit_battles)
        assert document["version"] == 1
        assert len(document["models"]) == 15
    default = client.get("/v1/leaderboard").json()
    assert default["method"] == "bt"


def test_segment_leaderboard(shared_fit: Path, store: dict[str, Any], fit_battles: Any) -> None:
    n_math = int((fit_battles["topic"] == "math").sum())
    assert 0 < n_math < len(fit_battles)
    # the shared fit is small: its math segment has fewer voters than the default minimum,
    # and each model fewer votes in it than a public board's default minimum
    settings = service_settings(shared_fit, **store, segment_min_users=5, min_model_votes=5)
    with open_client(settings) as client:
        check_segments(client, n_math)


def check_segments(client: TestClient, n_math: int) -> None:
    for method in ("bt", "elo"):
        response = client.get("/v1/leaderboard", params={"method": method, "where": "topic=math"})
        assert response.status_code == 200, response.text
        document = response.json()
        check_leaderboard(document, method)
        assert document["n_battles"] == n_math
        assert document["min_votes"] == 5
        assert all(m["battles"] >= 5 for m in document["models"])
        assert all(m["battles"] < 5 for m in document["provisional"])
        assert len(document["models"]) + len(document["provisional"]) == 15
    both = client.get("/v1/leaderboard", params=[("where", "topic=math"), ("where", "topic=chat")])
    assert_error(both, 422, "no battle matches", "topic=math", "topic=chat")


def test_segments_never_filter_on_what_identifies_a_person_a_text_or_a_vote(
    client: TestClient, fit_battles: Any, busiest_user: str
) -> None:
    first = fit_battles.iloc[0]
    for where in (
        f"user_id={busiest_user}",
        f"judge={busiest_user}",
        f"prompt={first['prompt']}",
        f"battle_id={first['battle_id']}",
        "tstamp=0",
        f"model_a={first['model_a']}",
        "winner=model_a",
    ):
        response = client.get("/v1/leaderboard", params={"where": where})
        detail = assert_error(response, 422, "cannot be filtered on", "labels: topic")
        assert busiest_user not in detail  # the value is not echoed back


def test_a_segment_of_too_few_votes_or_voters_is_refused_without_its_size(
    shared_fit: Path, fit_battles: Any, tmp_path: Path
) -> None:
    """Issue 31: a refused segment stated its exact size ("2 votes from 1 distinct
    users"); it names the minimums only."""
    math = fit_battles[fit_battles["topic"] == "math"]
    n_votes, n_users = len(math), int(math["user_id"].nunique())
    for minimum, named in (
        ({"segment_min_users": n_users + 1}, f"at least 100 votes from {n_users + 1:,} distinct"),
        ({"segment_min_votes": n_votes + 1}, f"at least {n_votes + 1:,} votes from 20 distinct"),
    ):
        settings = service_settings(shared_fit, store_path=tmp_path / "s.sqlite", **minimum)
        with open_client(settings) as test_client:
            response = test_client.get("/v1/leaderboard", params={"where": "topic=math"})
        detail = assert_error(response, 422, "where topic=math", "too few votes", named)
        assert f"{n_votes:,} votes" not in detail and f"{n_users:,} distinct" not in detail


def test_a_segment_is_the_published_versions_and_cannot_be_differenced(
    shared_fit: Path, fit_battles: Any, tmp_path: Path
) -> None:
    """Issue 31: ``?where=topic=coding`` read before and after a voter's 2 votes showed
    exactly their votes. Segments are fitted on the published version's votes, so a
    vote moves a segment only with everyone else's at the next refit."""
    settings = service_settings(
        shared_fit, store_path=tmp_path / "s.sqlite", segment_min_users=5, min_model_votes=5
    )
    math = fit_battles[fit_battles["topic"] == "math"].iloc[0]
    with open_client(settings) as client:
        before = client.get("/v1/leaderboard", params={"where": "topic=math"}).json()
        votes = [
            {
                "model_a": str(math["model_a"]),
                "model_b": str(math["model_b"]),
                "winner": "model_a",
                "user_id": "watched",
                "topic": "math",
            }
            for _ in range(2)
        ]
        answer = client.post("/v1/battles", json={"battles": votes}, headers=INGEST)
        assert answer.status_code == 200 and answer.json()["accepted"] == 2, answer.text
        after = client.get("/v1/leaderboard", params={"where": "topic=math"}).json()
        assert after == before
        assert client.post("/v1/admin/refit", headers=ADMIN).status_code == 200
        refitted = client.get("/v1/leaderboard", params={"where": "topic=math"}).json()
        assert refitted["n_battles"] == before["n_battles"] + 2
        assert refitted["version"] > before["version"]


@pytest.mark.parametrize(
    ("where", "named"),
    [
        ("no-equals-sign", "no-equals-sign"),
        ("=math", "=math"),
        ("nosuchlabel=1", "nosuchlabel"),
        ("tstamp=yesterday", "'tstamp' cannot be filtered on"),
        ("topic=astrology", "topic=astrology"),
    ],
)
def test_bad_segment_is_422_naming_it(client: TestClient, where: str, named: str) -> None:
    response = client.get("/v1/leaderboard", params={"where": where})
    detail = assert_error(response, 422, named)
    assert "where" in detail or "no battle matches" in detail


def test_bad_method_is_422(client: TestClient) -> None:
    response = client.get("/v1/leaderboard", params={"method": "glicko"})
    assert response.status_code == 422
    assert "detail" in response.json()


def test_user_leaderboard_needs_the_users_token(client: TestClient, busiest_user: str) -> None:
    path = f"/v1/users/{busiest_user}/leaderboard"
    assert_error(client.get(path), 401, "token")
    assert client.get(path).headers["www-authenticate"] == "Bearer"

    # the admin route hands out any user's token, to the admin only
    token_path = f"/v1/admin/users/{busiest_user}/token"
    assert_error(client.get(token_path), 401, "admin key")
    assert_error(client.get(token_path, headers=INGEST), 403, "admin key")
    answer = client.get(token_path, headers=ADMIN)
    assert answer.status_code == 200, answer.text
    assert answer.json()["user_id"] == busiest_user
    token = answer.json()["token"]
    other = client.get("/v1/admin/users/someone-else/token", headers=ADMIN).json()["token"]
    assert other != token

    document = read_as_owner(client, path, token, other)
    check_leaderboard(document, "bt")
    assert document["user_id"] == busiest_user
    assert document["source"] in ("fitted", "blended")
    assert document["spearman"] is None or -1.0 <= document["spearman"] <= 1.0
    assert len(document["models"]) == 15

    elo = client.get(path, params={"token": token, "method": "elo"})
    assert elo.status_code == 200, elo.text
    check_leaderboard(elo.json(), "elo")

    assert_error(client.get("/v1/users/nobody-at-all/leaderboard", headers=ADMIN), 404, "nobody")


def test_recommend(client: TestClient, fit_battles: Any) -> None:
    response = client.post("/v1/recommend", json={"queries": QUERIES})
    assert response.status_code == 200, response.text
    predicted = response.json()
    assert predicted["source"] == "predicted"
    assert predicted["n_queries"] == 2 and predicted["n_votes"] == 0
    assert predicted["version"] == 1
    models = predicted["models"]
    assert len(models) == 15
    assert [m["rating"] for m in models] == sorted((m["rating"] for m in models), reverse=True)
    for row in models:
        assert {"model", "rating", "lower", "upper", "rank"} <= set(row)
        assert row["lower"] <= row["rating"] <= row["upper"]
        assert row["rank"] == 1 + sum(o["lower"] > row["upper"] for o in models)

    best, worst = models[0]["model"], models[-1]["model"]
    votes = [vote(worst, best) for _ in range(3)] + [vote(best, worst, "tie")]
    response = client.post("/v1/recommend", json={"queries": QUERIES, "votes": votes})
    assert response.status_code == 200, response.text
    blended = response.json()
    assert blended["source"] == "blended"
    assert blended["n_votes"] == 4
    assert ratings(blended)[worst] > ratings(predicted)[worst]


def test_recommend_rejects_bad_input(client: TestClient) -> None:
    assert client.post("/v1/recommend", json={"queries": []}).status_code == 422
    assert client.post("/v1/recommend", json={}).status_code == 422
    assert client.post("/v1/recommend", json={"queries": QUERIES, "extra": 1}).status_code == 422
    blank = client.post("/v1/recommend", json={"queries": ["fine", "   "]})
    assert_error(blank, 422, "queries[1]", "blank")
    many = client.post("/v1/recommend", json={"queries": ["q"] * 201})
    assert_error(many, 422, "queries", "201", "200")
    unknown = client.post(
        "/v1/recommend", json={"queries": QUERIES, "votes": [vote("pico-3b", "gpt-17-mega")]}
    )
    assert_error(unknown, 422, "'gpt-17-mega'")
    bad_vote = client.post(
        "/v1/recommend", json={"queries": QUERIES, "votes": [vote("pico-3b", "lyra-mini", "me")]}
    )
    assert_error(bad_vote, 422, "votes[0]", "winner", "'me'")


def test_catalog(client: TestClient, fit_battles: Any) -> None:
    models = client.get("/v1/models")
    assert models.status_code == 200, models.text
    rows = models.json()["models"]
    assert len(rows) == 15
    counts = [m["battles"] for m in rows]
    assert counts == sorted(counts, reverse=True)
    board = rows_by_model(client.get("/v1/leaderboard").json())
    assert {m["model"]: m["battles"] for m in rows} == {m: r["battles"] for m, r in board.items()}

    topics = client.get("/v1/topics")
    assert topics.status_code == 200, topics.text
    document = topics.json()
    assert document["version"] == 1
    assert len(document["topics"]) == 4
    for topic in document["topics"]:
        assert isinstance(topic["topic"], int)
        assert topic["size"] > 0
        assert topic["words"] and all(isinstance(w, str) and w for w in topic["words"])
    assert sum(t["size"] for t in document["topics"]) <= len(fit_battles)


def test_correlations(client: TestClient) -> None:
    choices: list[dict[str, str]] = [{}, {"shrinkage": "none"}, {"method": "elo"}]
    for params in [*choices, {"method": "elo", "shrinkage": "none"}]:
        response = client.get("/v1/analysis/correlations", params=params)
        assert response.status_code == 200, response.text
        document = response.json()
        assert document["method"] == params.get("method", "bt")
        assert document["shrinkage"] == params.get("shrinkage", "cv")
        summary, histogram = document["summary"], document["histogram"]
        assert {"users", "mean_spearman", "median_spearman", "share_near_zero_or_negative"} <= set(
            summary
        )
        assert summary["users"] > 0
        edges = histogram["edges"]
        assert len(edges) == len(histogram["counts"]) + 1 == 21
        assert edges[0] == -1.0 and edges[-1] == 1.0 and edges == sorted(edges)
        assert sum(histogram["counts"]) == summary["users"]
    cv = client.get("/v1/analysis/correlations").json()["summary"]["mean_spearman"]
    plain = client.get("/v1/analysis/correlations", params={"shrinkage": "none"}).json()
    assert plain["summary"]["mean_spearman"] < cv  # shrinkage pulls users toward the aggregate
    bad = client.get("/v1/analysis/correlations", params={"shrinkage": "magic"})
    assert bad.status_code == 422


def test_health_docs_and_openapi(client: TestClient) -> None:
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "version": 1}

    schema = client.get("/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for route, method in SPEC_ROUTES.items():
        assert method in paths.get(route, {}), f"{method.upper()} {route} is not in the schema"
    assert "get" in paths["/v1/about"]
    for page in ("/", "/docs", "/redoc", "/widget/leaderboard"):
        assert page not in paths, f"{page} is in the schema"


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_are_served_from_this_origin(client: TestClient, page: str) -> None:
    docs = client.get(page)
    assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
    policy = docs.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "'unsafe-eval'" not in policy
    assert "script-src" not in policy  # scripts: our own files only, no inline script
    assert "<script>" not in docs.text and "<style" not in docs.text
    assets = re.findall(r'(?:src|href|spec-url)="([^"]+)"', docs.text)
    assert "/openapi.json" in assets
    for asset in assets:
        assert asset.startswith("/"), f"{page} refers to {asset}, not on this origin"
        answer = client.get(asset)
        assert answer.status_code == 200, f"{page}: {asset} answers {answer.status_code}"
        assert answer.content, f"{page}: {asset} is empty"
        if asset.endswith(".js"):  # nothing fetched from elsewhere: ReDoc's logo was
            assert "cdn.redoc.ly" not in answer.text, f"{page}: {asset} loads from a CDN"
    if page == "/docs":
        assert "/static/docs.js" in assets and "/docs/assets/swagger-ui-bundle.js" in assets
        assert "'unsafe-inline'" not in policy


def test_about_says_whether_the_arena_is_simulated(
    client: TestClient, shared_fit_with_truth: Path, store: dict[str, Any]
) -> None:
    about = client.get("/v1/about")
    assert about.status_code == 200, about.text
    document = about.json()
    # the shared fit is of simulated votes, but fitted without the truth: nothing says so
    assert document["simulated"] is False
    assert document["version"] == 1 and document["fit_created"]
    with open_client(service_settings(shared_fit_with_truth, **store)) as demo:
        assert demo.get("/v1/about").json()["simulated"] is True


def test_web_page_and_widgets(client: TestClient, busiest_user: str) -> None:
    for path in ("/", "/widget/leaderboard", f"/widget/user/{busiest_user}"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert page.headers["content-type"].startswith("text/html")
        assert "<html" in page.text.lower()
        assert "content-security-policy" in page.headers
    assert client.get("/static/app.js").status_code == 200

    badge = client.get("/widget/badge.svg")
    assert badge.status_code == 200
    assert badge.headers["content-type"].startswith("image/svg+xml")
    root = ET.fromstring(badge.text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    # "best model" only at even odds, else "likeliest: X (NN%)" (service.web.badge_words)
    board = client.get("/v1/leaderboard").json()["models"]
    assert root.get("aria-label") == ": ".join(badge_words(board, personal=False))

    assert_error(client.get("/widget/badge.svg", params={"user_id": busiest_user}), 401, "token")
    assert_error(
        client.get("/widget/badge.svg", params={"user_id": busiest_user, "token": "nope"}), 403
    )
    token = client.get(f"/v1/admin/users/{busiest_user}/token", headers=ADMIN).json()["token"]
    own = client.get("/widget/badge.svg", params={"user_id": busiest_user, "token": token})
    assert own.status_code == 200
    own_best = client.get(f"/v1/users/{busiest_user}/leaderboard", headers=ADMIN).json()
    label = ET.fromstring(own.text).get("aria-label")
    assert label == ": ".join(badge_words(own_best["models"], personal=True))
    # the admin key reads the badge from the Authorization header only, never as ?token=
    admin_in_query = {"user_id": busiest_user, "token": ADMIN_KEY}
    assert_error(client.get("/widget/badge.svg", params=admin_in_query), 403, "does not belong")
    by_admin = client.get("/widget/badge.svg", params={"user_id": busiest_user}, headers=ADMIN)
    assert by_admin.status_code == 200 and by_admin.text == own.text


def test_errors_are_json_details(client: TestClient) -> None:
    assert_error(client.get("/v1/nothing-here"), 404)
    assert_error(client.delete("/v1/leaderboard"), 405)
    not_json = client.post(
        "/v1/battles", content=b"{not json", headers={**INGEST, "content-type": "application/json"}
    )
    assert not_json.status_code == 422 and "detail" in not_json.json()
    not_a_list = client.post("/v1/battles", json={"battles": "a vote"}, headers=INGEST)
    assert not_a_list.status_code == 422 and "detail" in not_a_list.json()


# -- writes --------------------------------------------------------------------------------


def test_ingest_needs_the_ingest_key(client: TestClient) -> None:
    body = {"battles": [vote("pico-3b", "lyra-mini")]}
    assert_error(client.post("/v1/battles", json=body), 401, "ingest key")
    wrong = client.post("/v1/battles", json=body, headers=bearer("not-the-ingest-key-at-all"))
    assert_error(wrong, 403, "ingest key")
    assert ingest(client, body["battles"])["accepted"] == 1
    assert ingest(client, body["battles"], key=ADMIN_KEY)["accepted"] == 1  # the admin's too


def test_ingest_reports_each_record(client: TestClient, fit_battles: Any) -> None:
    fitted_id = str(fit_battles["battle_id"].iloc[0])
    battles: list[Any] = [
        vote("pico-3b", "lyra-mini", battle_id="b-1", user_id="ingest-user"),  # accepted
        "not a record",  # rejected: not an object
        vote("pico-3b", "lyra-mini", "the best one", battle_id="b-2"),  # rejected: winner
        vote("pico-3b", "lyra-mini", "model_b", battle_id="b-1"),  # duplicate in the batch
        vote("pico-3b", "pico-3b", battle_id="b-3"),  # rejected: same model
        vote("pico-3b", "lyra-mini", battle_id=fitted_id),  # duplicate of the fitted log
        {"model_b": "lyra-mini", "winner": "tie"},  # rejected: model_a missing
        vote("lyra-mini", "sage-1.2", "tie (bothbad)", topic="math"),  # accepted, no id
        vote("brand-new-model", "pico-3b", battle_id="b-4"),  # accepted: a registered model
        vote("pico-3b", "gpt-17-ultra", battle_id="b-5"),  # rejected: an unknown model
    ]
    registered = client.post(
        "/v1/admin/models", json={"models": ["brand-new-model"]}, headers=ADMIN
    )
    assert registered.status_code == 200, registered.text
    result = ingest(client, battles)
    assert result["accepted"] == 3
    assert result["duplicates"] == 2
    rejected = {r["index"]: r["error"] for r in result["rejected"]}
    assert sorted(rejected) == [1, 2, 4, 6, 9]
    assert "not a JSON object" in rejected[1]
    assert "'winner'" in rejected[2] and "'the best one'" in rejected[2]
    assert "'model_b'" in rejected[4] and "same model" in rejected[4]
    assert "'model_a'" in rejected[6] and "missing" in rejected[6]
    assert "'model_b'" in rejected[9] and "'gpt-17-ultra'" in rejected[9]
    assert "not a registered model" in rejected[9]
    assert result["version"] == 1

    again = ingest(client, [vote("pico-3b", "lyra-mini", battle_id="b-1"), battles[-2]])
    assert (again["accepted"], again["duplicates"], again["rejected"]) == (0, 2, [])

    # the new model joins the live Elo leaderboard at once, as provisional (one vote)
    elo = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    check_leaderboard(elo, "elo")
    provisional = {m["model"]: m for m in elo["provisional"]}
    assert provisional["brand-new-model"]["battles"] == 1
    assert "brand-new-model" not in ratings(elo) and "gpt-17-ultra" not in provisional
    assert elo["n_battles"] == len(fit_battles) + 3


def test_ingest_limits_the_batch(shared_fit: Path, store: dict[str, Any]) -> None:
    with open_client(service_settings(shared_fit, max_battles=3, **store)) as client:
        body = {"battles": [vote("pico-3b", "lyra-mini")] * 4}
        assert_error(client.post("/v1/battles", json=body, headers=INGEST), 422, "4", "3")


def test_tokens_for_a_new_users_first_vote_only(client: TestClient, busiest_user: str) -> None:
    first = ingest(client, [vote("pico-3b", "lyra-mini", user_id="fresh-user")] * 2)
    assert first["accepted"] == 2
    assert set(first["tokens"]) == {"fresh-user"}
    token = first["tokens"]["fresh-user"]
    assert ingest(client, [vote("sage-1.2", "pico-3b", user_id="fresh-user")])["tokens"] == {}
    # a user of the fitted log is not new: the admin hands out their token
    assert ingest(client, [vote("sage-1.2", "pico-3b", user_id=busiest_user)])["tokens"] == {}

    response = client.get("/v1/users/fresh-user/leaderboard", params={"token": token})
    assert response.status_code == 200, response.text
    document = response.json()
    check_leaderboard(document, "bt")
    assert document["user_id"] == "fresh-user"
    assert document["n_battles"] == 3
    own = rows_by_model(document)
    assert own["pico-3b"]["battles"] == 3 and own["lyra-mini"]["battles"] == 2
    assert own["pico-3b"]["wins"] == 2 and own["sage-1.2"]["wins"] == 1
    assert client.get("/v1/admin/users/fresh-user/token", headers=ADMIN).json()["token"] == token
    assert_error(client.get(f"/v1/users/{busiest_user}/leaderboard", params={"token": token}), 403)


def test_a_vote_moves_the_users_leaderboard_at_once(client: TestClient, busiest_user: str) -> None:
    path = f"/v1/users/{busiest_user}/leaderboard"
    before = client.get(path, headers=ADMIN).json()
    top, bottom = before["models"][0]["model"], before["models"][-1]["model"]
    votes = [vote(bottom, top, user_id=busiest_user, prompt="Which is better?")] * 8
    assert ingest(client, votes)["accepted"] == 8

    after = client.get(path, headers=ADMIN).json()
    check_leaderboard(after, "bt")
    assert after["n_battles"] == before["n_battles"] + 8
    assert ratings(after)[bottom] > ratings(before)[bottom]
    assert ratings(after)[top] < ratings(before)[top]
    assert rows_by_model(after)[bottom]["wins"] == rows_by_model(before)[bottom]["wins"] + 8
    assert after["version"] == before["version"] == 1

    elo_before = client.get(path, headers=ADMIN, params={"method": "elo"}).json()
    ingest(client, [vote(bottom, top, user_id=busiest_user)] * 2)
    elo_after = client.get(path, headers=ADMIN, params={"method": "elo"}).json()
    assert ratings(elo_after)[bottom] > ratings(elo_before)[bottom]


def test_live_elo_then_refit(client: TestClient, fit_battles: Any) -> None:
    bt_before = client.get("/v1/leaderboard").json()
    elo_before = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    top, bottom = elo_before["models"][0]["model"], elo_before["models"][-1]["model"]
    votes = [vote(bottom, top, user_id="elo-voter") for _ in range(5)]
    assert ingest(client, votes)["accepted"] == 5

    # Elo moves at once, by exactly FastChat's update from the state served before
    elo_after = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    check_leaderboard(elo_after, "elo")
    assert elo_after["n_battles"] == elo_before["n_battles"] + 5
    assert ratings(elo_after)[bottom] > ratings(elo_before)[bottom]
    # ... and counts every new vote in the models' counts, as in n_battles
    for model, extra in ((bottom, (5, 5, 0)), (top, (5, 0, 5))):
        row, old = rows_by_model(elo_after)[model], rows_by_model(elo_before)[model]
        assert (row["battles"], row["wins"], row["losses"]) == (
            old["battles"] + extra[0],
            old["wins"] + extra[1],
            old["losses"] + extra[2],
        )
    expected = elo_update(ratings(elo_before), votes)
    for model, rating in ratings(elo_after).items():
        assert rating == pytest.approx(expected[model], abs=0.05), model
    assert elo_after["version"] == 1

    # the Bradley-Terry aggregate is the published version's until a refit
    assert client.get("/v1/leaderboard").json() == bt_before
    assert_error(client.post("/v1/admin/refit"), 401, "admin key")
    assert_error(client.post("/v1/admin/refit", headers=INGEST), 403, "admin key")
    refit = client.post("/v1/admin/refit", headers=ADMIN)
    assert refit.status_code == 200, refit.text
    assert refit.json() == {"version": 2}

    bt_after = client.get("/v1/leaderboard").json()
    check_leaderboard(bt_after, "bt")
    assert bt_after["version"] == 2
    assert bt_after["n_battles"] == len(fit_battles) + 5
    rows_before, rows_after = rows_by_model(bt_before), rows_by_model(bt_after)
    assert rows_after[bottom]["wins"] == rows_before[bottom]["wins"] + 5
    assert rows_after[bottom]["rating"] > rows_before[bottom]["rating"]
    assert client.get("/healthz").json() == {"status": "ok", "version": 2}
    elo_refit = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    assert elo_refit["version"] == 2 and elo_refit["n_battles"] == len(fit_battles) + 5
    # the user's leaderboard follows the new version
    token = client.get("/v1/admin/users/elo-voter/token", headers=ADMIN).json()["token"]
    mine = client.get("/v1/users/elo-voter/leaderboard", params={"token": token}).json()
    assert mine["version"] == 2 and mine["n_battles"] == 5


def test_metrics(client: TestClient, busiest_user: str) -> None:
    client.get("/v1/leaderboard")
    client.get(f"/v1/users/{busiest_user}/leaderboard", headers=ADMIN)
    ingest(client, [vote("pico-3b", "lyra-mini", battle_id=f"m-{i}") for i in range(3)])
    ingest(client, [vote("pico-3b", "lyra-mini", battle_id="m-0"), "junk"])
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert 'plb_requests_total{method="GET",route="/v1/leaderboard",status="200"} 1.0' in text
    assert 'route="/v1/users/{user_id}/leaderboard",status="200"' in text
    assert busiest_user not in text  # route templates, never raw paths
    assert "plb_votes_ingested_total 3.0" in text
    assert "plb_votes_duplicate_total 1.0" in text
    assert "plb_votes_rejected_total 1.0" in text
    assert "plb_model_version 1.0" in text
    assert "plb_request_seconds_bucket" in text


def test_metrics_count_files_under_their_mount(client: TestClient) -> None:
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/no-such-file.js").status_code == 404
    assert client.get("/docs/assets/swagger-ui.css").status_code == 200
    assert client.get("/nothing/here/at/all").status_code == 404
    text = client.get("/metrics").text
    counted = re.findall(
        r'plb_requests_total\{method="GET",route="([^"]*)",status="(\d+)"\} 1\.0', text
    )
    assert ("/static", "200") in counted and ("/static", "404") in counted
    assert ("/docs/assets", "200") in counted
    # a path no route or mount serves is unmatched, never its raw path (bounded labels)
    assert ("unmatched", "404") in counted
    assert not any("no-such-file" in route or "nothing" in route for route, _ in counted)


def test_logs_hold_no_key_or_token(
    client: TestClient, busiest_user: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="plb.access")
    caplog.set_level(logging.INFO, logger="service")
    result = ingest(client, [vote("pico-3b", "lyra-mini", user_id="log-user")])
    token = result["tokens"]["log-user"]
    wrong = "wrong-key-that-must-not-be-logged"
    client.get("/v1/users/log-user/leaderboard", params={"token": token})
    client.get("/v1/users/log-user/leaderboard", headers=bearer(token))
    client.get(f"/v1/users/{busiest_user}/leaderboard", headers=ADMIN)
    client.get(f"/v1/users/{busiest_user}/leaderboard", params={"token": wrong})
    client.get("/widget/badge.svg", params={"user_id": "log-user", "token": token})
    client.post("/v1/battles", json={"battles": []}, headers=bearer(wrong))
    client.get(f"/v1/admin/users/{busiest_user}/token", headers=ADMIN)
    assert client.post("/v1/admin/refit", headers=ADMIN).status_code == 200

    records = [r for r in caplog.records if r.name == "plb.access" or r.name.startswith("service")]
    routes = {getattr(r, "fields", {}).get("route") for r in records}
    assert "/v1/users/{user_id}/leaderboard" in routes and "/v1/battles" in routes
    logged = caplog.text + "\n".join(f"{r.getMessage()} {vars(r)!r}" for r in records)
    for secret in (INGEST_KEY, ADMIN_KEY, token, wrong):
        assert secret not in logged


# -- a fit without features ----------------------------------------------------------------


def test_fit_without_features(shared_fit_no_features: Path, store: dict[str, Any]) -> None:
    secret = "token-secret-0123456789abcdef"
    settings = service_settings(
        shared_fit_no_features,
        ingest_key=None,
        admin_key=None,
        token_secret=SecretStr(secret),
        **store,
    )
    with open_client(settings) as client:
        assert_error(client.post("/v1/recommend", json={"queries": QUERIES}), 404, "predictor")
        assert_error(client.get("/v1/topics"), 404, "topic model")
        assert_error(
            client.post("/v1/battles", json={"battles": []}, headers=INGEST), 403, "PLB_INGEST_KEY"
        )
        assert_error(client.post("/v1/admin/refit", headers=ADMIN), 403, "PLB_ADMIN_KEY")

        check_leaderboard(client.get("/v1/leaderboard").json(), "bt")
        assert len(client.get("/v1/models").json()["models"]) == 15
        users = load_fit(shared_fit_no_features).agreement["user_id"]
        user = str(users.iloc[0])
        token = user_token(secret.encode(), user)
        response = client.get(f"/v1/users/{user}/leaderboard", params={"token": token})
        assert response.status_code == 200, response.text
        assert response.json()["source"] == "fitted"  # no predictor: no prior from queries


# -- the model catalogue and public boards (issue 15) ----------------------------------


def badge_best(client: TestClient) -> str:
    label = ET.fromstring(client.get("/widget/badge.svg").text).get("aria-label")
    assert label is not None and label.startswith(("best model: ", "likeliest: ", "top rated: "))
    return label.split(": ", 1)[1].rsplit(" (", 1)[0]  # the model, without its odds


def counted(document: dict[str, Any]) -> int:
    """Battles over every model of a board, ranked or provisional: twice the votes."""
    return sum(m["battles"] for m in document["models"] + document["provisional"])


def test_one_vote_for_a_made_up_model_is_rejected(client: TestClient) -> None:
    """The attack: one vote for a made-up model used to crown it after the next refit."""
    bt_before = client.get("/v1/leaderboard").json()
    elo_before = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    best = badge_best(client)
    result = ingest(client, [vote("gpt-17-ultra", "pico-3b", user_id="attacker")])
    assert result["accepted"] == 0
    (rejected,) = result["rejected"]
    assert rejected["index"] == 0
    assert "'model_a'" in rejected["error"] and "'gpt-17-ultra'" in rejected["error"]
    assert result["tokens"] == {}  # nothing stored, not even the voter

    elo_after = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    assert elo_after == elo_before
    assert client.post("/v1/admin/refit", headers=ADMIN).json() == {"version": 2}
    bt_after = client.get("/v1/leaderboard").json()
    assert bt_after["n_battles"] == bt_before["n_battles"]
    assert ratings(bt_after) == pytest.approx(ratings(bt_before))
    assert badge_best(client) == best
    assert_error(client.get("/v1/users/attacker/leaderboard", headers=ADMIN), 404, "attacker")


def test_registering_models_is_for_the_admin(client: TestClient) -> None:
    path, body = "/v1/admin/models", {"models": ["helios-9", "pico-3b", "helios-9", "nova-2"]}
    assert_error(client.post(path, json=body), 401, "admin key")
    assert_error(client.post(path, json=body, headers=INGEST), 403, "admin key")
    answer = client.post(path, json=body, headers=ADMIN)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"added": ["helios-9", "nova-2"], "known": ["pico-3b"], "version": 1}
    again = client.post(path, json={"models": ["nova-2"]}, headers=ADMIN).json()
    assert (again["added"], again["known"]) == ([], ["nova-2"])
    assert_error(client.post(path, json={"models": ["ok", " "]}, headers=ADMIN), 422, "models[1]")
    assert client.post(path, json={"models": []}, headers=ADMIN).status_code == 422
    assert client.post(path, json={"names": ["x"]}, headers=ADMIN).status_code == 422
    # the registered model's votes are taken from now on
    assert ingest(client, [vote("helios-9", "pico-3b")])["accepted"] == 1


def test_auto_registered_model_stays_provisional_until_it_has_the_votes(
    shared_fit: Path, store: dict[str, Any]
) -> None:
    """With auto-registration a made-up model's vote is taken, and harms nothing."""
    settings = service_settings(shared_fit, **store, auto_register_models=True)
    with open_client(settings) as client:
        bt_before = client.get("/v1/leaderboard").json()
        best = badge_best(client)
        assert bt_before["min_votes"] == 50 and bt_before["provisional"] == []
        assert ingest(client, [vote("gpt-17-ultra", "pico-3b")])["accepted"] == 1
        assert client.post("/v1/admin/refit", headers=ADMIN).status_code == 200
        for method in ("bt", "elo"):
            board = client.get("/v1/leaderboard", params={"method": method}).json()
            check_leaderboard(board, method)
            assert [m["model"] for m in board["models"]][:1] == [bt_before["models"][0]["model"]]
            assert "gpt-17-ultra" not in ratings(board)
            assert board["provisional"] == [
                {"model": "gpt-17-ultra", "battles": 1, "wins": 1, "losses": 0, "ties": 0}
            ]
            assert counted(board) == 2 * board["n_battles"]
        assert badge_best(client) == best
        # what the page and the widget read: the same ranks and ratings as before the vote,
        # so the page's interval axis spans what it spanned
        public = client.get("/v1/leaderboard").json()
        assert [(m["model"], m["rank"]) for m in public["models"]] == [
            (m["model"], m["rank"]) for m in bt_before["models"]
        ]
        assert ratings(public) == pytest.approx(ratings(bt_before), abs=0.01)
        lows, highs = [m["lower"] for m in public["models"]], [m["upper"] for m in public["models"]]
        assert min(lows) == pytest.approx(min(m["lower"] for m in bt_before["models"]), abs=0.01)
        assert max(highs) == pytest.approx(max(m["upper"] for m in bt_before["models"]), abs=0.01)
        pico = rows_by_model(public)["pico-3b"]
        assert pico["losses"] == rows_by_model(bt_before)["pico-3b"]["losses"] + 1


def test_a_vote_for_a_registered_model_is_seen_at_once_and_counted_everywhere(
    shared_fit: Path, store: dict[str, Any], fit_battles: Any
) -> None:
    """The live view agrees with itself: the voter's read, live Elo's counts, intervals."""
    settings = service_settings(shared_fit, **store, min_model_votes=0)
    with open_client(settings) as client:
        client.post("/v1/admin/models", json={"models": ["helios-9"]}, headers=ADMIN)
        elo_before = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        prompt = "Write a haiku about sorting algorithms"  # a prior predicted from it, too
        votes = [
            vote("helios-9", "pico-3b", user_id="fresh-voter", prompt=prompt),
            vote("pico-3b", "helios-9"),
        ]
        result = ingest(client, votes)
        assert result["accepted"] == 2 and result["rejected"] == []
        token = result["tokens"]["fresh-voter"]

        for method in ("bt", "elo"):
            mine = client.get(
                "/v1/users/fresh-voter/leaderboard", params={"token": token, "method": method}
            ).json()
            check_leaderboard(mine, method)
            assert rows_by_model(mine)["helios-9"]["wins"] == 1
            assert mine["n_battles"] == 1
            assert mine["source"] == ("blended" if method == "bt" else "fitted")

        elo = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        check_leaderboard(elo, "elo")
        assert elo["n_battles"] == len(fit_battles) + 2
        assert counted(elo) == 2 * elo["n_battles"]
        new, pico = rows_by_model(elo)["helios-9"], rows_by_model(elo)["pico-3b"]
        assert (new["battles"], new["wins"], new["losses"]) == (2, 1, 1)
        old = rows_by_model(elo_before)["pico-3b"]
        assert pico["battles"] == old["battles"] + 2 and pico["wins"] == old["wins"] + 1
        for board in (elo_before, elo):
            for row in board["models"]:
                assert row["lower"] < row["upper"], row  # never a zero-width interval
        # no fitted interval yet: at least the span of the published ones
        published = rows_by_model(elo_before)
        assert new["lower"] <= min(m["lower"] for m in published.values() if m["battles"])
        assert new["upper"] >= max(m["upper"] for m in published.values() if m["battles"])


def test_the_fits_own_few_vote_models_are_provisional_from_the_first_version(
    shared_fit: Path, store: dict[str, Any], fit_battles: Any
) -> None:
    """The published fit's board is fitted again without its models below the minimum."""
    from ranking.io.frames import pairwise_from_battles
    from ranking.leaderboard import fit_leaderboard

    counts = pd.concat([fit_battles["model_a"], fit_battles["model_b"]]).value_counts()
    least = int(counts.sort_values().iloc[3]) + 1  # the four least-voted models fall below
    settings = service_settings(shared_fit, **store, min_model_votes=least)
    with open_client(settings) as client:
        board = client.get("/v1/leaderboard").json()
        check_leaderboard(board, "bt")
        assert board["version"] == 1 and board["min_votes"] == least
        assert len(board["models"]) == 11 and len(board["provisional"]) == 4
        assert all(m["battles"] < least for m in board["provisional"])
        expected = fit_leaderboard(pairwise_from_battles(fit_battles), min_votes=least)
        assert ratings(board) == pytest.approx(expected.ratings, abs=0.01)
        assert counted(board) == 2 * board["n_battles"] == 2 * len(fit_battles)
        assert badge_best(client) == board["models"][0]["model"]
