"""One count of votes everywhere (issue 32, item 5): the Bradley-Terry and Elo boards of a
version count the same votes, the live Elo board counts exactly those its next refit
counts, and its rows carry their odds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ranking.odds import interval_odds
from tests.service.conftest import ADMIN, INGEST, check_leaderboard, open_client, service_settings

#: A cap low enough that the simulated fit's voters go over it on some days.
CAP = 4


@pytest.fixture
def client(shared_fit_no_features: Path, tmp_path: Path) -> Iterator[TestClient]:
    settings = service_settings(
        shared_fit_no_features,
        store_path=tmp_path / "store.sqlite",
        min_model_votes=0,
        daily_vote_cap=CAP,
        flag_voters=False,
    )
    with open_client(settings) as client:
        yield client


def boards(client: TestClient) -> dict[str, dict[str, Any]]:
    answers = {m: client.get("/v1/leaderboard", params={"method": m}) for m in ("bt", "elo")}
    assert all(a.status_code == 200 for a in answers.values()), answers
    documents = {m: a.json() for m, a in answers.items()}
    for method, document in documents.items():
        check_leaderboard(document, method)
    return documents


def battles_by_model(document: dict[str, Any]) -> dict[str, int]:
    return {m["model"]: m["battles"] for m in document["models"]}


def test_both_boards_count_the_votes_the_screen_keeps_from_the_first_version(
    client: TestClient,
) -> None:
    """Before issue 32 the first version's Elo board was the fit's, every vote counted
    (over the cap too), while Bradley-Terry counted the votes kept: 18,220 beside 18,144."""
    about = client.get("/v1/about").json()["integrity"]
    assert about["votes_over_cap"] > 0  # the cap bites on this fit
    bt, elo = boards(client).values()
    assert bt["n_battles"] == elo["n_battles"] == about["votes_counted"]
    assert battles_by_model(bt) == battles_by_model(elo)


def test_the_live_elo_board_counts_what_the_next_refit_counts(client: TestClient) -> None:
    before = boards(client)
    models = [m["model"] for m in before["bt"]["models"]]
    # one new voter's 10 votes in one call: one day of the server's clock, so CAP count
    battles = [
        {
            "model_a": models[i % len(models)],
            "model_b": models[(i + 1) % len(models)],
            "winner": ("model_a", "model_b")[i % 2],
            "user_id": "burst",
        }
        for i in range(10)
    ]
    answer = client.post("/v1/battles", json={"battles": battles}, headers=INGEST)
    assert answer.status_code == 200 and answer.json()["accepted"] == 10, answer.text
    live = boards(client)["elo"]
    assert live["n_battles"] == before["elo"]["n_battles"] + CAP
    assert client.post("/v1/admin/refit", headers=ADMIN).status_code == 200
    bt, elo = boards(client).values()
    assert bt["n_battles"] == elo["n_battles"] == live["n_battles"]
    assert battles_by_model(elo) == battles_by_model(live) == battles_by_model(bt)


def test_live_elo_rows_carry_their_odds(client: TestClient) -> None:
    """Every ranked row of the live Elo board has ``p_best`` and a rank range holding its
    rank, the odds of the independent Gaussians its interval stands for."""
    rows = boards(client)["elo"]["models"]
    assert all({"p_best", "rank_lower", "rank_upper"} <= set(r) for r in rows)
    assert sum(r["p_best"] for r in rows) == pytest.approx(1.0, abs=1e-3)
    odds = interval_odds(
        [r["rating"] for r in rows], [r["lower"] for r in rows], [r["upper"] for r in rows]
    )
    assert [r["p_best"] for r in rows] == pytest.approx(odds.p_best.tolist(), abs=2e-3)
    assert rows[0]["p_best"] == max(r["p_best"] for r in rows)
