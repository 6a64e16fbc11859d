"""Boards over time of a battle frame: periods and windows that hold the minimums."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from service.pipeline.history import NotDated, battle_history, window_battles

DAY = 86_400.0
START = 1_704_067_200.0  # 2024-01-01T00:00:00Z


def frame(n_days: int, per_day: int, users_per_day: int, seed: int = 0) -> pd.DataFrame:
    """``per_day`` votes a day between three models, from ``users_per_day`` people a day."""
    rng = np.random.default_rng(seed)
    n = n_days * per_day
    day = np.repeat(np.arange(n_days), per_day)
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(1, 3, n)) % 3
    return pd.DataFrame(
        {
            "model_a": [f"m{i}" for i in a],
            "model_b": [f"m{i}" for i in b],
            "winner": rng.choice(["model_a", "model_b"], n),
            "user_id": [f"u{d}-{i % users_per_day}" for d, i in zip(day, range(n), strict=True)],
            "tstamp": START + day * DAY + rng.uniform(0, DAY, n),
        }
    ).sample(frac=1.0, random_state=1)  # the frame's order is not the votes'


def test_a_window_is_widened_to_whole_periods_holding_the_minimums() -> None:
    battles = frame(10, 30, 5)  # 5 people a day: four days make a period of 20
    found = window_battles(
        battles, START + 1.5 * DAY, START + 2.5 * DAY, min_votes=50, min_users=20
    )
    assert found is not None
    kept, window = found
    assert (window.since, window.until) == (START, START + 4 * DAY)
    assert len(kept) == 4 * 30 and kept["user_id"].nunique() == 20
    # the last two days join the period before them
    last = window_battles(battles, START + 9.5 * DAY, None, min_votes=50, min_users=20)
    assert last is not None and last[1] == type(window)(START + 4 * DAY, START + 10 * DAY)
    assert window_battles(battles, START + 30 * DAY, None, min_votes=50, min_users=20) is None
    assert window_battles(battles, None, None, min_votes=301, min_users=1) is None


def test_a_history_of_merged_periods() -> None:
    battles = frame(62, 20, 10)
    history = battle_history(battles, unit="week", min_votes=100, min_users=20, model_min_votes=5)
    assert history is not None
    assert history.n_battles == len(battles)
    for period in history.periods:
        assert period.board.n_battles >= 100
    assert sum(p.board.n_battles for p in history.periods) == len(battles)
    assert battle_history(battles, min_votes=len(battles) + 1) is None


def test_undated_votes() -> None:
    battles = frame(3, 10, 5).drop(columns="tstamp")
    with pytest.raises(NotDated):
        battle_history(battles)
    with pytest.raises(NotDated):
        window_battles(battles, START, None, min_votes=1, min_users=1)
