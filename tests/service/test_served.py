"""``service.served``: a published version as readers use it, and its live Elo board."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from service.served import live_elo_leaderboard, served_version


def row(model: str, rating: float, half: float, battles: int) -> dict[str, Any]:
    return {
        "model": model,
        "rating": rating,
        "lower": rating - half,
        "upper": rating + half,
        "battles": battles,
        "wins": battles // 2,
        "losses": battles // 2,
        "ties": battles % 2,
    }


SNAPSHOT = {
    "models": ["a", "b"],
    "store_battles": 10,
    "leaderboards": {
        "bt": {"models": [row("a", 1010.0, 5.0, 7), row("b", 990.0, 5.0, 7)], "n_battles": 7},
        "elo": {
            "models": [row("a", 1004.0, 3.0, 7), row("b", 996.0, 4.0, 7)],
            "n_battles": 7,
            "interval": "bootstrap",
            "confidence": 0.95,
        },
    },
}


def test_served_version_orders_ratings_and_encodes_the_bt_board_once() -> None:
    served = served_version(3, SNAPSHOT, predictor=None)
    assert served.models == ("a", "b") and served.version == 3
    np.testing.assert_array_equal(served.aggregate["bt"], [1010.0, 990.0])
    assert served.ratings("elo") == {"a": 1004.0, "b": 996.0}
    assert served.bt_json.startswith(b'{"models":') and b'"version":3' in served.bt_json


def test_live_elo_moves_points_keeps_widths_and_counts_new_votes() -> None:
    served = served_version(3, SNAPSHOT, predictor=None)
    board = live_elo_leaderboard(served, {"a": 1001.0, "b": 999.0, "c": 1000.0}, n_stored=13)
    rows = {r["model"]: r for r in board["models"]}
    assert rows["a"]["rating"] == pytest.approx(1001.0)
    assert rows["a"]["upper"] - rows["a"]["lower"] == pytest.approx(6.0)
    assert rows["b"]["upper"] - rows["b"]["lower"] == pytest.approx(8.0)
    assert rows["c"]["battles"] == 0  # a model seen only since the version: no counts yet
    assert board["n_battles"] == 7 + 3  # the version's battles and the 3 stored since
