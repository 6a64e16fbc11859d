"""Leaderboard rows with their odds, and the Elo point from the bootstrap's replicates."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.elo import online_elo
from ranking.intervals.elo_bootstrap import bootstrap_elo
from ranking.intervals.sandwich import moderated_covariance, sandwich_intervals
from ranking.intervals.summary import percentile_intervals, replicate_summary
from ranking.leaderboard import fit_leaderboard, read_leaderboard
from ranking.pairwise import collapse
from ranking.provisional import split_provisional
from ranking.types import ODDS_FIELDS, Leaderboard, PairwiseData, RankedRating
from tests.conftest import simulate_votes


@pytest.fixture(scope="module")
def votes() -> PairwiseData:
    return simulate_votes(6, 3000, seed=13)[0]


@pytest.mark.parametrize(
    ("method", "interval"), [("bt", "sandwich"), ("bt", "bootstrap"), ("elo", "bootstrap")]
)
def test_every_row_has_odds(votes: PairwiseData, method: str, interval: str) -> None:
    board = fit_leaderboard(votes, method=method, interval=interval, rounds=40, rng=0)  # type: ignore[arg-type]
    rows = board.to_dict()["models"]
    assert all(isinstance(m, RankedRating) for m in board.models)
    assert sum(r["p_best"] for r in rows) == pytest.approx(1.0, abs=1e-3)
    for r in rows:
        assert 1 <= r["rank_lower"] <= r["rank_upper"] <= len(rows)
        assert 0.0 <= r["p_best"] <= 1.0
    # The clear leader of these votes is the likeliest best and can rank first.
    assert rows[0]["p_best"] == max(r["p_best"] for r in rows)
    assert rows[0]["rank_lower"] == 1


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_no_interval_no_odds(votes: PairwiseData, method: str) -> None:
    rows = fit_leaderboard(votes, method=method, interval="none").to_dict()["models"]  # type: ignore[arg-type]
    assert not any(f in r for r in rows for f in ODDS_FIELDS)


def test_elo_point_is_the_median_of_its_replicates(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, method="elo", rounds=50, rng=7)
    samples = bootstrap_elo(
        votes.n_models, votes.matchups, votes.outcomes, 50, np.random.default_rng(7)
    )
    median = np.median(samples, axis=0)
    shift = 1000.0 - median.mean()
    lower, upper = percentile_intervals(samples)
    for j, name in enumerate(votes.models):
        row = board[name]
        assert row.rating == pytest.approx(median[j] + shift, abs=1e-9)
        assert row.lower == pytest.approx(lower[j] + shift, abs=1e-9)
        assert row.upper == pytest.approx(upper[j] + shift, abs=1e-9)
        assert row.lower < row.rating < row.upper  # inside without any widening
    assert np.mean([m.rating for m in board.models]) == pytest.approx(1000.0, abs=1e-9)


def test_elo_without_interval_is_online_elo_in_order(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, method="elo", interval="none")
    point = online_elo(votes.n_models, votes.matchups, votes.outcomes)
    assert [board[m].rating for m in votes.models] == pytest.approx(point.tolist(), abs=1e-9)


def test_replicate_summary_centres_point_and_interval_together() -> None:
    samples = np.random.default_rng(0).gamma(2.0, size=(99, 4)) * 10 + 990
    point, lower, upper = replicate_summary(samples, 0.9, center=1000.0)
    assert point.mean() == pytest.approx(1000.0)
    shift = point - np.median(samples, axis=0)
    np.testing.assert_allclose(shift, shift[0])
    lo, hi = percentile_intervals(samples, 0.9)
    np.testing.assert_allclose(lower - lo, shift)
    np.testing.assert_allclose(upper - hi, shift)
    assert np.all((lower <= point) & (point <= upper))


def test_sandwich_odds_are_reproducible_and_ignore_the_seed(votes: PairwiseData) -> None:
    first = fit_leaderboard(votes, method="bt", rng=1).to_dict()
    assert first == fit_leaderboard(votes, method="bt", rng=2).to_dict()


def test_moderated_covariance_is_the_sandwich_intervals_variance(votes: PairwiseData) -> None:
    from ranking.bt import fit_bt

    data = collapse(votes)
    theta = fit_bt(data.n_models, data.matchups, data.outcomes, data.weights)
    cov = moderated_covariance(theta, data.matchups, data.outcomes, data.weights)
    lower, upper = sandwich_intervals(theta, data.matchups, data.outcomes, data.weights)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)) * 2 * 1.959963984540054, upper - lower)
    assert np.all(np.linalg.eigvalsh(cov) > -1e-12)


def test_anchor_and_min_votes_keep_the_odds(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, method="bt")
    pinned = fit_leaderboard(votes, method="bt", anchor=(votes.models[0], 1200.0))
    for m in board.models:
        assert pinned[m.model].p_best == m.p_best  # type: ignore[attr-defined]
    ranked = fit_leaderboard(votes, method="bt", min_votes=10)
    assert ranked.provisional == ()
    assert ranked.to_dict()["models"] == board.to_dict()["models"]


def test_split_provisional_drops_odds_it_cannot_redo(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, method="bt")
    assert split_provisional(board, 0).to_dict()["models"] == board.to_dict()["models"]
    fewest = min(m.battles for m in board.models)
    split = split_provisional(board, fewest + 1)
    assert split.provisional and split.models
    assert not any(f in r for r in split.to_dict()["models"] for f in ODDS_FIELDS)


def test_read_leaderboard_keeps_the_odds(votes: PairwiseData) -> None:
    document = fit_leaderboard(votes, method="elo", rounds=20, rng=0).to_dict()
    assert read_leaderboard(document).to_dict() == document
    plain = fit_leaderboard(votes, method="bt", interval="none").to_dict()
    assert read_leaderboard(plain).to_dict() == plain
    assert isinstance(read_leaderboard(plain), Leaderboard)
