"""Each user's p_best and rank ranges, from the posterior behind their intervals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ranking.leaderboard import build_leaderboard
from ranking.pairwise import model_counts
from ranking.users import fit_user_ratings, user_board_odds, user_rank_odds
from tests.conftest import simulate_users


@pytest.fixture(scope="module")
def votes() -> tuple:
    data, users, _, _ = simulate_users(30, 40, 6, seed=4)
    return data, users


def test_shrunk_users_odds_over_every_model(votes: tuple) -> None:
    data, users = votes
    fit = fit_user_ratings(data, users, 30, method="bt", shrinkage="cv")
    p_best, lower, upper = user_rank_odds(fit)
    assert p_best.shape == (30, 6)
    np.testing.assert_allclose(p_best.sum(axis=1), 1.0)
    assert np.all((1 <= lower) & (lower <= upper) & (upper <= 6))
    # A user's odds depend on their own posterior only (one shared table of draws).
    alone = dataclasses.replace(
        fit,
        ratings=fit.ratings[3:4],
        lower=fit.lower[3:4],
        upper=fit.upper[3:4],
        battles=fit.battles[3:4],
        prior=fit.prior[3:4],
    )
    np.testing.assert_array_equal(user_rank_odds(alone)[0][0], p_best[3])


def test_plain_fits_list_the_models_seen(votes: tuple) -> None:
    data, users = votes
    keep = ~((users == 0) & ((data.matchups == 5).any(axis=1)))  # user 0 never sees m5
    fit = fit_user_ratings(data.select(keep), users[keep], 30, method="bt", shrinkage="none")
    p_best, lower, upper = user_rank_odds(fit)
    assert np.isnan(p_best[0, 5]) and np.isnan(lower[0, 5]) and np.isnan(upper[0, 5])
    assert np.nansum(p_best[0]) == pytest.approx(1.0)
    assert np.nanmax(upper[0]) <= fit.seen[0].sum()


def test_elo_users_have_no_odds(votes: tuple) -> None:
    data, users = votes
    fit = fit_user_ratings(data, users, 30, method="elo", shrinkage="cv")
    assert all(np.isnan(a).all() for a in user_rank_odds(fit))


def test_one_users_board_with_odds(votes: tuple) -> None:
    data, users = votes
    fit = fit_user_ratings(data, users, 30, method="bt", shrinkage="cv")
    odds = user_board_odds(fit, 3)
    assert odds is not None
    np.testing.assert_array_equal(odds.p_best, user_rank_odds(fit)[0][3])
    board = build_leaderboard(
        "bt",
        data.models,
        fit.ratings[3],
        fit.lower[3],
        fit.upper[3],
        model_counts(data.select(users == 3)),
        n_battles=int((users == 3).sum()),
        interval="laplace",
        odds=odds,
    )
    assert sum(r["p_best"] for r in board.to_dict()["models"]) == pytest.approx(1.0, abs=1e-3)
    elo = fit_user_ratings(data, users, 30, method="elo", shrinkage="cv")
    assert user_board_odds(elo, 3) is None
