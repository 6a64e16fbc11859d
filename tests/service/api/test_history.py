"""``?since=&until=`` on the REST boards, and ``GET /v1/leaderboard/history``: windows
widened to whole periods that hold the segment minimums; bad values are a 422 naming the
field and the value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ranking.windows import format_instant, parse_instant
from service.pipeline.artifacts import load_fit
from tests.service.conftest import ADMIN, assert_error, open_client, service_settings

JUNE_1 = "2024-06-01"


@pytest.fixture(scope="module")
def client(
    shared_fit_no_features: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    store = tmp_path_factory.mktemp("store") / "s.sqlite"
    with open_client(service_settings(shared_fit_no_features, store_path=store)) as c:
        yield c


def test_the_fit_directory_holds_the_history(shared_fit_no_features: Path) -> None:
    history = load_fit(shared_fit_no_features).read_history()
    assert history is not None
    assert history["n_battles"] > 0 and len(history["periods"]) >= 2
    for period in history["periods"]:
        assert period["board"]["models"]


def test_a_window_is_whole_periods_of_its_votes(client: TestClient) -> None:
    every = client.get("/v1/leaderboard").json()
    june = client.get(f"/v1/leaderboard?since={JUNE_1}").json()
    assert 0 < june["n_battles"] < every["n_battles"]
    window = june["window"]
    # widened outward to whole days: it starts at or before June 1, at midnight
    assert parse_instant(window["since"]) <= parse_instant(JUNE_1)
    assert parse_instant(window["since"]) % 86_400 == 0
    assert "window" not in every
    # the same periods are one answer
    again = client.get(f"/v1/leaderboard?since={window['since']}").json()
    assert again == june
    # the window's answer is the board of its votes, by any method, and as a file
    elo = client.get(f"/v1/leaderboard?since={JUNE_1}&method=elo").json()
    assert elo["n_battles"] == june["n_battles"] and elo["method"] == "elo"
    csv = client.get(f"/v1/leaderboard.csv?since={JUNE_1}")
    assert csv.status_code == 200
    assert len(csv.text.strip().splitlines()) == 1 + len(june["models"])


def test_before_and_after_split_the_votes(client: TestClient) -> None:
    june = client.get(f"/v1/leaderboard?since={JUNE_1}").json()
    cut = june["window"]["since"]
    before = client.get(f"/v1/leaderboard?until={cut}").json()
    every = client.get("/v1/leaderboard").json()
    assert before["n_battles"] + june["n_battles"] == every["n_battles"]


def test_a_window_within_a_segment(client: TestClient) -> None:
    both = client.get(f"/v1/leaderboard?where=topic=coding&since={JUNE_1}")
    if both.status_code == 422:  # the segment's periods may be too thin: refused, not sized
        assert_error(both, 422, "since", "distinct users")
        return
    segment = client.get("/v1/leaderboard?where=topic=coding").json()
    assert both.json()["n_battles"] <= segment["n_battles"]


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("since=yesterday", ["since", "'yesterday'", "not a date"]),
        ("until=" + "9" * 400, ["until", "(400 digits)"]),
        ("since=2024-07-01&until=2024-06-01", ["since", "must come before"]),
        ("since=2030-01-01", ["since", "no vote", "20 distinct users"]),
    ],
)
def test_bad_windows_are_refused(client: TestClient, query: str, words: list[str]) -> None:
    for path in ("/v1/leaderboard", "/v1/leaderboard.parquet"):
        assert_error(client.get(f"{path}?{query}"), 422, *words)


def test_the_history_route(client: TestClient) -> None:
    response = client.get("/v1/leaderboard/history")
    assert response.status_code == 200
    history = response.json()
    assert history["version"] >= 1
    periods = history["periods"]
    assert len(periods) >= 2
    for before, after in zip(periods, periods[1:], strict=False):
        assert before["end"] <= after["start"]
    labels = {p["label"] for p in periods}
    for test in history["drift"]:
        assert test["before"] in labels and test["after"] in labels
        assert test["flagged"] == (test["p_adjusted"] <= history["level"])
    assert history["drifting"] == sorted({t["model"] for t in history["drift"] if t["flagged"]})
    weeks = client.get("/v1/leaderboard/history?unit=week").json()
    assert weeks["unit"] == "week" and len(weeks["periods"]) >= len(periods)
    assert sum(p["board"]["n_battles"] for p in weeks["periods"]) == weeks["n_battles"]
    assert_error(client.get("/v1/leaderboard/history?unit=year"), 422, "unit", "'year'")
    assert_error(client.get("/v1/leaderboard/history?unit=0"), 422, "unit", "'0'")


def test_a_service_without_timestamps(tmp_path: Path) -> None:
    from service.cli import main

    log = tmp_path / "plain.jsonl"
    rows = [
        {"model_a": "x", "model_b": "y", "winner": "model_a", "user_id": f"u{i % 30}"}
        for i in range(200)
    ]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    fit = tmp_path / "fit"
    assert main(["-q", "fit", str(log), "--out", str(fit), "--no-features"]) == 0
    assert load_fit(fit).read_history() is None
    with open_client(service_settings(fit, store_path=tmp_path / "s.sqlite")) as c:
        assert_error(c.get(f"/v1/leaderboard?since={JUNE_1}"), 422, "since", "no tstamp")
        assert_error(c.get("/v1/leaderboard/history"), 422, "no tstamp")


def test_a_users_own_board_of_a_window(client: TestClient, shared_fit_no_features: Path) -> None:
    battles = load_fit(shared_fit_no_features).read_battles()
    assert battles is not None
    user = str(battles["user_id"].value_counts().index[0])
    mine = battles[battles["user_id"] == user]
    cut = float(mine["tstamp"].median())
    path = f"/v1/users/{user}/leaderboard"
    whole = client.get(path, headers=ADMIN).json()
    assert "window" not in whole
    later = client.get(f"{path}?since={cut}", headers=ADMIN).json()
    assert later["window"] == {"since": format_instant(cut)}  # the user's own: not widened
    assert later["n_battles"] == int((mine["tstamp"] >= cut).sum()) < whole["n_battles"]
    # not stored: the board of all their votes is unchanged
    assert client.get(path, headers=ADMIN).json() == whole
    csv = client.get(f"{path}.csv?until={cut}", headers=ADMIN)
    assert csv.status_code == 200
    assert_error(client.get(f"{path}?since=2030-01-01", headers=ADMIN), 422, "since", "none")
    assert_error(client.get(f"{path}?until=soon", headers=ADMIN), 422, "until", "'soon'")
    assert client.get(f"{path}?since={cut}").status_code == 401  # still the user's only
