"""Tokens fit to publish (issue 31): share ids for embeds, read tokens that rotate.

Before: the page's embed snippet carried the user's permanent read token
(``/widget/user/{id}?token=...``), which read everything of theirs and could never be
changed. Now a share id, random and revocable, reads the published board's ranking only,
and the read token rotates. Run on both stores.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.live.credentials import SHARED_ROW_KEYS
from tests.service.conftest import (
    ADMIN,
    INGEST,
    assert_error,
    bearer,
    open_client,
    service_settings,
)

USER = "zoë share:user"


@pytest.fixture
def settings(shared_fit: Path, store: dict[str, Any]) -> Any:
    return service_settings(shared_fit, **store)


@pytest.fixture
def client(settings: Any) -> Iterator[TestClient]:
    with open_client(settings) as test_client:
        yield test_client


def vote(user: str, i: int, winner: str = "model_a") -> dict[str, Any]:
    return {
        "battle_id": f"share-{user}-{i}",
        "model_a": "pico-3b",
        "model_b": "lyra-mini",
        "winner": winner,
        "user_id": user,
    }


def new_user(client: TestClient, user: str = USER) -> str:
    """Ingest two votes of ``user``; their read token."""
    battles = [vote(user, 0), vote(user, 1, "model_b")]
    response = client.post("/v1/battles", json={"battles": battles}, headers=INGEST)
    assert response.status_code == 200, response.text
    token: str = response.json()["tokens"][user]
    return token


def user_path(user: str, tail: str) -> str:
    return f"/v1/users/{urllib.parse.quote(user, safe='')}/{tail}"


def make_share(client: TestClient, token: str, user: str = USER) -> dict[str, Any]:
    response = client.post(user_path(user, "share"), headers=bearer(token))
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


# -- a share id reads the published board, and only that -------------------------------


def test_a_share_id_reads_the_ranking_of_the_published_board(client: TestClient) -> None:
    token = new_user(client)
    share = make_share(client, token)
    share_id = share["share_id"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", share_id)
    assert share == {
        "share_id": share_id,
        "board_url": f"/v1/shared/{share_id}",
        "widget_url": f"/widget/shared/{share_id}",
        "badge_url": f"/widget/badge.svg?share={share_id}",
    }
    for method in ("bt", "elo"):
        own = client.get(user_path(USER, "leaderboard"), params={"method": method, "token": token})
        shared = client.get(share["board_url"], params={"method": method})
        assert shared.status_code == 200, shared.text
        body = shared.json()
        assert set(body) == {"method", "version", "models"}
        assert body["method"] == method and body["version"] == own.json()["version"]
        assert body["models"] == [
            {key: row[key] for key in SHARED_ROW_KEYS} for row in own.json()["models"]
        ]
        # not the user, their votes, agreement or explanation
        for hidden in ("zo", "share:user", "battles", "wins", "ties", "spearman", "explanation"):
            assert hidden not in shared.text, hidden
        assert shared.headers["referrer-policy"] == "no-referrer"
    badge = client.get(share["badge_url"])
    assert badge.status_code == 200 and badge.headers["content-type"] == "image/svg+xml"
    assert "for you" in badge.text  # "best model for you" or "likeliest for you"
    widget = client.get(share["widget_url"])
    assert widget.status_code == 200 and "widget.js" in widget.text
    assert widget.headers["referrer-policy"] == "no-referrer"


def test_a_share_id_reads_nothing_else(client: TestClient) -> None:
    token = new_user(client)
    share_id = make_share(client, token)["share_id"]
    other = new_user(client, "someone else")
    reads = [
        ("GET", user_path(USER, "leaderboard"), None),
        ("GET", user_path(USER, "next-battle"), None),
        ("POST", user_path(USER, "token"), None),
        ("POST", user_path(USER, "share"), None),
        ("DELETE", user_path(USER, "share"), None),
        ("GET", "/widget/badge.svg", None),
    ]
    for method, path, _ in reads:
        params = {"user_id": USER} if path == "/widget/badge.svg" else {}
        as_query = client.request(method, path, params={**params, "token": share_id})
        as_bearer = client.request(method, path, params=params, headers=bearer(share_id))
        for response in (as_query, as_bearer):
            assert_error(response, 403, "does not belong")
    # the votes behind the board: recommend and next battle of the user's stored votes
    for path in ("/v1/recommend", "/v1/next-battle"):
        body = {"queries": ["write a haiku"], "user_id": USER, "token": share_id}
        assert_error(client.post(path, json=body), 403, "does not belong")
        body.pop("token")
        assert_error(client.post(path, json=body, headers=bearer(share_id)), 403)
    # and a share id is not any other user's token, nor a key
    assert_error(
        client.get(user_path("someone else", "leaderboard"), params={"token": share_id}), 403
    )
    assert_error(client.post("/v1/battles", json={"battles": []}, headers=bearer(share_id)), 403)
    assert_error(client.post("/v1/admin/refit", headers=bearer(share_id)), 403)
    assert other  # that user's token reads their board, not the shared one
    assert_error(client.post(user_path(USER, "share"), headers=bearer(other)), 403)


def test_making_a_share_needs_the_users_token_or_the_admin_key(client: TestClient) -> None:
    token = new_user(client)
    assert_error(client.post(user_path(USER, "share")), 401, "token")
    assert_error(client.post(user_path(USER, "share"), headers=INGEST), 403)
    assert_error(client.delete(user_path(USER, "share")), 401, "token")
    by_admin = client.post(user_path(USER, "share"), headers=ADMIN)
    assert by_admin.status_code == 201, by_admin.text
    by_query = client.post(user_path(USER, "share"), params={"token": token})
    assert by_query.status_code == 201, by_query.text
    # the newest share replaced the admin's
    assert_error(client.get(by_admin.json()["board_url"]), 404, "revoked")
    assert client.get(by_query.json()["board_url"]).status_code == 200


def test_a_revoked_or_replaced_share_id_is_refused(client: TestClient) -> None:
    token = new_user(client)
    first = make_share(client, token)
    second = make_share(client, token)  # the first stops at once
    assert_error(client.get(first["board_url"]), 404, "no board is shared", "revoked")
    assert_error(client.get(first["badge_url"]), 404, "revoked")
    assert client.get(second["board_url"]).status_code == 200
    revoked = client.delete(user_path(USER, "share"), headers=bearer(token))
    assert revoked.status_code == 200 and revoked.json() == {"revoked": True}
    for url in (second["board_url"], second["badge_url"]):
        assert_error(client.get(url), 404, "revoked")
    again = client.delete(user_path(USER, "share"), headers=bearer(token))
    assert again.json() == {"revoked": False}


@pytest.mark.parametrize(
    "share_id",
    ["x", "A" * 43, "%ED%A0%80", "%00", "a%2Fb", "..", "ü" * 64, "'; DROP TABLE credentials"],
)
def test_an_unknown_share_id_is_a_404_never_a_500(client: TestClient, share_id: str) -> None:
    response = client.get(f"/v1/shared/{share_id}")
    assert response.status_code in (404, 422), response.text
    assert set(response.json()) == {"detail"}
    badge = client.get("/widget/badge.svg", params={"share": urllib.parse.unquote(share_id)})
    assert badge.status_code in (404, 422), badge.text


def test_a_long_share_id_is_refused_unread(client: TestClient) -> None:
    assert_error(client.get(f"/v1/shared/{'a' * 129}"), 422)
    assert_error(client.get("/widget/badge.svg", params={"share": "a" * 129}), 422)
    both = client.get("/widget/badge.svg", params={"share": "a", "user_id": USER})
    assert_error(both, 422, "not both")


def test_a_user_without_votes_has_no_board_to_share(client: TestClient) -> None:
    """Nothing to share: 404, as schemathesis's negative cases expect of a made-up user."""
    assert_error(client.post(user_path("no votes yet", "share"), headers=ADMIN), 404, "no battle")
    assert_error(client.delete(user_path("no votes yet", "share"), headers=ADMIN), 404, "no battle")


# -- the read token rotates -------------------------------------------------------------


def test_rotating_the_token_refuses_the_old_one_at_once(client: TestClient, settings: Any) -> None:
    token = new_user(client)
    share = make_share(client, token)
    rotated = client.post(user_path(USER, "token"), headers=bearer(token))
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["token"]
    assert rotated.json() == {"user_id": USER, "token": new} and new != token
    board = user_path(USER, "leaderboard")
    for path in (board, user_path(USER, "next-battle")):
        assert_error(client.get(path, params={"token": token}), 403, "does not belong")
        assert_error(client.get(path, headers=bearer(token)), 403)
        assert client.get(path, params={"token": new}).status_code == 200
        assert client.get(path, headers=bearer(new)).status_code == 200
    assert_error(client.get("/widget/badge.svg", params={"user_id": USER, "token": token}), 403)
    assert_error(client.post(user_path(USER, "token"), headers=bearer(token)), 403)
    # the admin's copy is the new one; the share id keeps working
    admin_copy = client.get(f"/v1/admin/users/{urllib.parse.quote(USER)}/token", headers=ADMIN)
    assert admin_copy.json()["token"] == new
    assert client.get(share["board_url"]).status_code == 200
    # another replica on the same store refuses the old token too
    with open_client(settings) as replica:
        assert_error(replica.get(board, params={"token": token}), 403)
        assert replica.get(board, params={"token": new}).status_code == 200
        # the admin key rotates it too
        by_admin = replica.post(user_path(USER, "token"), headers=ADMIN)
        assert by_admin.status_code == 200
    assert_error(client.get(board, params={"token": new}), 403)
    newest = by_admin.json()["token"]
    assert client.get(board, headers=bearer(newest)).status_code == 200


def test_a_token_rotated_before_the_first_vote_is_the_one_the_ingest_gives(
    client: TestClient,
) -> None:
    rotated = client.post(user_path("early", "token"), headers=ADMIN).json()["token"]
    assert new_user(client, "early") == rotated


def test_rotating_needs_the_current_token_or_the_admin_key(client: TestClient) -> None:
    new_user(client)
    path = user_path(USER, "token")
    assert_error(client.post(path), 401, "token")
    assert_error(client.post(path, headers=INGEST), 403)
    assert_error(client.post(path, params={"token": "wrong"}), 403)
    assert_error(client.post(user_path("a" * 257, "token"), headers=ADMIN), 422)


# -- the page and the widget publish no token ---------------------------------------------


def test_the_pages_snippets_carry_no_token(client: TestClient) -> None:
    """Before, app.js built ``/widget/user/{id}?token=...`` into the user's snippet."""
    app_js = client.get("/static/app.js").text
    snippets = app_js[app_js.index("Embed snippets") :]
    assert "token=" not in snippets
    assert "widget_url" in snippets and "badge_url" in snippets  # from POST .../share
    widget_js = client.get("/static/widget.js").text
    assert "token=" not in widget_js and "Authorization" not in widget_js
    assert "/v1/shared/" in widget_js
    page = client.get("/").text
    assert "?token=" not in page and "token=…" not in page


def test_the_page_and_the_widget_send_no_referrer(client: TestClient) -> None:
    for path in ("/", "/widget/shared/anything", "/widget/user/someone", "/v1/shared/x"):
        assert client.get(path).headers["referrer-policy"] == "no-referrer", path
