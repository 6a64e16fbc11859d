"""users.parquet carries each user's odds (p_best, rank range) beside their ratings."""

from __future__ import annotations

import numpy as np

from ranking.analysis import analyse_users
from service.pipeline.artifacts import analysis_frames
from tests.conftest import simulate_users


def test_users_frame_has_the_odds() -> None:
    data, users, _, _ = simulate_users(20, 30, 5, seed=3)
    names = tuple(f"u{i}" for i in range(20))
    for method in ("bt", "elo"):
        analysis = analyse_users(data, users, names, method=method, shrinkage="cv")  # type: ignore[arg-type]
        ratings, _ = analysis_frames(analysis)
        assert {"p_best", "rank_lower", "rank_upper"} <= set(ratings.columns)
        by_user = ratings.groupby("user_id")["p_best"].sum()
        if method == "bt":
            np.testing.assert_allclose(by_user.to_numpy(), 1.0)
            assert (ratings["rank_lower"] <= ratings["rank_upper"]).all()
        else:  # per-user Elo has no interval, so no odds
            assert ratings[["p_best", "rank_lower", "rank_upper"]].isna().all().all()
