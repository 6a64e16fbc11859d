"""``service.live.served``: a published version as readers use it, and its live Elo board."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from service.live.served import LiveWindow, live_elo_leaderboard, served_version
from service.pipeline.snapshot import Snapshot


def row(model: str, rating: float, half: float, battles: int) -> dict[str, Any]:
    return {
        "model": model,
        "rating": rating,
        "lower": rating - half,
        "upper": rating + half,
        "rank": 1,
        "battles": battles,
        "wins": battles // 2,
        "losses": battles // 2,
        "ties": battles % 2,
    }


SNAPSHOT = {
    "models": ["a", "b"],
    "store_battles": 10,
    "leaderboards": {
        "bt": {
            "method": "bt",
            "models": [row("a", 1010.0, 5.0, 7), row("b", 990.0, 5.0, 7)],
            "n_battles": 7,
        },
        "elo": {
            "method": "elo",
            "models": [row("a", 1004.0, 3.0, 7), row("b", 996.0, 4.0, 7)],
            "n_battles": 7,
            "interval": "bootstrap",
            "confidence": 0.95,
        },
    },
}


def test_served_version_orders_ratings_and_encodes_the_bt_board_once() -> None:
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None)
    assert served.models == ("a", "b") and served.version == 3
    np.testing.assert_array_equal(served.aggregate["bt"], [1010.0, 990.0])
    assert served.ratings("elo") == {"a": 1004.0, "b": 996.0}
    public = json.loads(served.bt_json)
    assert public["version"] == 3 and [m["model"] for m in public["models"]] == ["a", "b"]
    assert public["min_votes"] == 0 and public["provisional"] == []
    assert served.boards is not None and served.boards["bt"]["models"] == public["models"]


def test_public_boards_list_models_below_the_minimum_apart() -> None:
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None, min_votes=8)
    public = json.loads(served.bt_json)
    assert public["models"] == [] and [m["model"] for m in public["provisional"]] == ["a", "b"]
    assert set(public["provisional"][0]) == {"model", "battles", "wins", "losses", "ties"}
    assert served.aggregate["bt"].tolist() == [1010.0, 990.0]  # personal fits keep them all


def test_live_elo_moves_points_keeps_widths_and_counts_new_votes() -> None:
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None)
    live = {"a": 1001.0, "b": 999.0, "c": 1000.0}
    since = {"a": (3, 1, 2, 0), "c": (3, 2, 1, 0)}  # c beat a twice, lost once, since
    board = live_elo_leaderboard(served, LiveWindow(live, since, 3))
    rows = {r["model"]: r for r in board["models"]}
    assert rows["a"]["rating"] == pytest.approx(1001.0)
    assert rows["a"]["upper"] - rows["a"]["lower"] == pytest.approx(6.0)
    assert rows["b"]["upper"] - rows["b"]["lower"] == pytest.approx(8.0)
    # every vote since counts in the models' counts, as in n_battles
    assert board["n_battles"] == 7 + 3  # the version's battles and the 3 counted since
    assert (rows["a"]["battles"], rows["a"]["wins"], rows["a"]["losses"]) == (10, 4, 5)
    assert (rows["c"]["battles"], rows["c"]["wins"], rows["c"]["losses"]) == (3, 2, 1)
    assert rows["b"]["battles"] == 7
    # c has no fitted interval: a wide one, never zero-width
    assert rows["c"]["lower"] <= 1000.0 - 400.0 and rows["c"]["upper"] >= 1000.0 + 400.0


def test_live_elo_lists_a_model_below_the_minimum_as_provisional() -> None:
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None, min_votes=5)
    live = {"a": 1001.0, "b": 999.0, "c": 1000.0}
    board = live_elo_leaderboard(served, LiveWindow(live, {"c": (3, 2, 1, 0)}, 3))
    assert [m["model"] for m in board["models"]] == ["a", "b"]
    assert board["provisional"] == [{"model": "c", "battles": 3, "wins": 2, "losses": 1, "ties": 0}]
    # the ranks are the version's intervals': [1001, 1007] above [992, 1000]
    assert [m["rank"] for m in board["models"]] == [1, 2]


def test_live_elo_moves_within_the_versions_intervals() -> None:
    """Issue 31: one made-up voter's 300 wins took the weakest model from 8th to 1st on
    live Elo. Between refits a rating moves within its published interval: a rank the
    version's intervals do not already allow waits for the refit and its screen."""
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None)
    live = {"a": 1004.0, "b": 1290.0}
    board = live_elo_leaderboard(served, LiveWindow(live, {"b": (300, 300, 0, 0)}, 300))
    rows = {r["model"]: r for r in board["models"]}
    assert rows["b"]["rating"] == pytest.approx(1000.0)  # 996 + 4, its published upper
    assert (rows["b"]["lower"], rows["b"]["upper"]) == (992.0, 1000.0)  # the version's
    assert board["models"][0]["model"] == "a" and rows["b"]["rank"] == 2
    unbounded = live_elo_leaderboard(
        served, LiveWindow(live, {"b": (300, 300, 0, 0)}, 300), within_intervals=False
    )
    assert unbounded["models"][0]["model"] == "b"


def test_live_elo_ranks_only_the_models_the_version_ranks() -> None:
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None, min_votes=5)
    live = {"a": 1001.0, "b": 999.0, "c": 1300.0}
    board = live_elo_leaderboard(served, LiveWindow(live, {"c": (60, 60, 0, 0)}, 60))
    assert [m["model"] for m in board["models"]] == ["a", "b"]
    assert [m["model"] for m in board["provisional"]] == ["c"]


def test_live_elo_rows_carry_odds_among_the_ranked_models() -> None:
    """Issue 32: the live Elo rows lacked ``p_best`` and the rank range. They are read
    off the Gaussians of their intervals, among the ranked models only, the range
    holding each row's rank."""
    served = served_version(3, Snapshot.from_dict(SNAPSHOT), predictor=None, min_votes=5)
    live = {"a": 1001.0, "b": 999.0, "c": 1300.0}
    board = live_elo_leaderboard(served, LiveWindow(live, {"c": (60, 60, 0, 0)}, 60))
    rows = {r["model"]: r for r in board["models"]}
    assert set(rows) == {"a", "b"} and "p_best" not in board["provisional"][0]
    assert rows["a"]["p_best"] + rows["b"]["p_best"] == pytest.approx(1.0)
    # a at 1001 in [1001, 1007], b at 999 in [992, 1000]: a likelier the best, b can be
    assert rows["a"]["p_best"] > 0.5 > rows["b"]["p_best"] > 0.0
    for r in rows.values():
        assert r["rank_lower"] <= r["rank"] <= r["rank_upper"]
    assert (rows["a"]["rank_lower"], rows["a"]["rank_upper"]) == (1, 2)
    assert (rows["b"]["rank_lower"], rows["b"]["rank_upper"]) == (1, 2)
