"""The per-user analysis: the users document, and reusing a fitted aggregate."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.analysis import analyse_users
from ranking.leaderboard import fit_leaderboard
from tests.conftest import simulate_users


def test_users_document_and_aggregate_reuse() -> None:
    data, users, _, _ = simulate_users(40, 25, 6, seed=3)
    names = tuple(f"u{u:02d}" for u in range(40))
    fresh = analyse_users(data, users, names, min_battles=10)
    reused = analyse_users(
        data, users, names, min_battles=10, aggregate=fit_leaderboard(data, method="bt", rng=0)
    )
    assert np.allclose(fresh.ratings.ratings, reused.ratings.ratings)
    doc = fresh.to_dict()
    assert (
        doc["summary"]["users"] == len(doc["users"]) == int(np.sum(fresh.ratings.n_battles >= 10))
    )
    entry = doc["users"][0]
    assert set(entry["ratings"]) == set(data.models)  # shrunk: every model is rated
    assert all(entry["lower"][m] <= entry["ratings"][m] <= entry["upper"][m] for m in data.models)
    plain = analyse_users(data, users, names, shrinkage="none", min_battles=10).to_dict()
    seen = {data.models[j] for j in np.unique(data.matchups[users == 0])}
    first = next(u for u in plain["users"] if u["user_id"] == "u00")
    assert set(first["ratings"]) == seen  # plain: only the models the user voted on


def test_aggregate_of_another_method_is_refused() -> None:
    data, users, _, _ = simulate_users(5, 10, 4, seed=4)
    with pytest.raises(ValueError, match="'aggregate' was fitted with method 'elo', not 'bt'"):
        analyse_users(
            data,
            users,
            tuple("abcde"),
            aggregate=fit_leaderboard(data, method="elo", interval="none"),
        )
