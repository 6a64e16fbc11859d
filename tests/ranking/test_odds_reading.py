"""Ranks a person can read (issue 32, item 3): rows in rank order, each rank inside the
range its row reports, on every board (aggregate, split, live, predicted)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.intervals.summary import interval_ranks
from ranking.leaderboard import build_leaderboard, fit_leaderboard, with_interval_odds
from ranking.odds import (
    RankOdds,
    gaussian_draws,
    interval_odds,
    rank_odds,
    rank_range,
    reading_order,
)
from ranking.pairwise import ModelCounts
from ranking.provisional import split_provisional
from ranking.types import Interval, Leaderboard, Method, RankedRating
from tests.conftest import simulate_votes

#: Four models whose interval ranks, read by rating, go 1, 2, 1, 3: C's wide interval
#: shares the top with A though B is rated above it.
NAMES = ("A", "B", "C", "D")
POINT = np.array([1100.0, 1090.0, 1080.0, 1070.0])
LOWER = np.array([1096.0, 1086.0, 1000.0, 1066.0])
UPPER = np.array([1104.0, 1094.0, 1160.0, 1074.0])


def counts(k: int, battles: int = 100) -> ModelCounts:
    full = np.full(k, battles, dtype=np.int64)
    return ModelCounts(full, full // 2, full // 2, np.zeros(k, dtype=np.int64))


def check_readable(board: Leaderboard) -> None:
    """The invariants a person relies on, down the rows."""
    rows = board.models
    ranks = [m.rank for m in rows]
    assert ranks == sorted(ranks), f"the rank column goes back: {ranks}"
    for above, below in zip(rows, rows[1:], strict=False):
        if above.rank == below.rank:
            assert above.rating >= below.rating
    if rows:
        assert rows[0].rating == max(m.rating for m in rows)
    for m in rows:
        if isinstance(m, RankedRating):
            assert 1 <= m.rank_lower <= m.rank <= m.rank_upper <= len(rows), m


def test_the_rank_column_no_longer_goes_back() -> None:
    assert interval_ranks(LOWER, UPPER).tolist() == [1, 2, 1, 3]
    board = build_leaderboard(
        "bt", NAMES, POINT, LOWER, UPPER, counts(4), n_battles=200, interval="sandwich"
    )
    assert [m.model for m in board.models] == ["A", "C", "B", "D"]
    assert [m.rank for m in board.models] == [1, 1, 2, 3]
    check_readable(board)
    # and the same order once written and read back
    assert [m["model"] for m in board.to_dict()["models"]] == ["A", "C", "B", "D"]


def test_rank_two_with_range_three_to_four_is_widened() -> None:
    """The issue's row: the draws put it 3rd or 4th, its interval rank says 2."""
    odds = RankOdds(
        np.array([0.6, 0.0, 0.4, 0.0]),
        np.array([1, 3, 1, 2], dtype=np.int64),
        np.array([2, 4, 2, 4], dtype=np.int64),
    )
    board = build_leaderboard(
        "bt", NAMES, POINT, LOWER, UPPER, counts(4), n_battles=200, interval="sandwich", odds=odds
    )
    b = board["B"]
    assert isinstance(b, RankedRating)
    assert (b.rank, b.rank_lower, b.rank_upper) == (2, 2, 4)
    d = board["D"]
    assert isinstance(d, RankedRating)
    assert (d.rank, d.rank_lower, d.rank_upper) == (3, 2, 4)  # already held: unchanged
    check_readable(board)


def test_rank_range_holds_the_rank_and_nothing_more() -> None:
    low, high = rank_range([2, 1, 5], [3, 1, 2], [4, 3, 4])
    assert low.tolist() == [2, 1, 2]
    assert high.tolist() == [4, 3, 5]


def test_reading_order_is_rank_then_rating_and_refuses_bad_shapes() -> None:
    assert reading_order([2, 1, 1, 3], [5.0, 1.0, 2.0, 9.0]).tolist() == [2, 1, 0, 3]
    with pytest.raises(ValueError, match="'rank' and 'rating'"):
        reading_order([1, 2], [1.0])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), k=st.integers(1, 9), spread=st.floats(1.0, 200.0))
def test_random_boards_are_readable(seed: int, k: int, spread: float) -> None:
    """For random boards, with odds from random draws: every rank lies in its row's
    range, the rank column never goes back, and the best rated leads."""
    rng = np.random.default_rng(seed)
    point = np.round(rng.normal(1000.0, spread, k), 1)  # rounding makes ties likely
    half = rng.exponential(spread / 2, k)
    lower, upper = point - half * rng.uniform(0.2, 1.0, k), point + half
    draws = gaussian_draws(point, np.diag(rng.uniform(0.5, 2.0, k) * half**2))
    board = build_leaderboard(
        "bt",
        tuple(f"m{j}" for j in range(k)),
        point,
        lower,
        upper,
        counts(k),
        n_battles=100 * k,
        interval="sandwich",
        odds=rank_odds(draws),
    )
    check_readable(board)
    assert sum(m.p_best for m in board.models) == pytest.approx(1.0)  # type: ignore[attr-defined]
    # the same invariants once the board's few-vote models are set apart
    cut = split_provisional(board, 0, rankable={f"m{j}" for j in range(k) if rng.uniform() < 0.7})
    check_readable(cut)
    check_readable(with_interval_odds(cut))


FITS: list[tuple[Method, Interval]] = [
    ("bt", "sandwich"),
    ("bt", "bootstrap"),
    ("elo", "bootstrap"),
]


@pytest.mark.parametrize(("method", "interval"), FITS)
@pytest.mark.parametrize("seed", [3, 11])
def test_fitted_boards_are_readable(method: Method, interval: Interval, seed: int) -> None:
    """Few votes on many models: wide, overlapping intervals of unequal widths."""
    votes = simulate_votes(12, 400, seed=seed)[0]
    for least in (None, 60):
        board = fit_leaderboard(
            votes, method=method, interval=interval, rounds=30, rng=seed, min_votes=least
        )
        check_readable(board)


def test_interval_odds_are_those_of_the_intervals_gaussians() -> None:
    odds = interval_odds(POINT, LOWER, UPPER)
    assert odds.p_best.sum() == pytest.approx(1.0)
    # C's wide interval gives it a real chance of the top; D, well below A, none
    assert odds.p_best[2] > 0.2 and odds.p_best[3] == 0.0
    again = interval_odds(POINT, LOWER, UPPER)  # fixed seed: the same odds every time
    np.testing.assert_array_equal(again.p_best, odds.p_best)
    with pytest.raises(ValueError, match="one shape"):
        interval_odds(POINT, LOWER[:2], UPPER)
    with pytest.raises(ValueError, match="'confidence'"):
        interval_odds(POINT, LOWER, UPPER, confidence=1.0)


def test_with_interval_odds_gives_every_ranked_row_its_odds() -> None:
    board = build_leaderboard(
        "elo", NAMES, POINT, LOWER, UPPER, counts(4), n_battles=200, interval="bootstrap"
    )
    assert not any(isinstance(m, RankedRating) for m in board.models)
    odds = with_interval_odds(board)
    expected = interval_odds(
        [m.rating for m in board.models],
        [m.lower for m in board.models],
        [m.upper for m in board.models],
    )
    rows = odds.to_dict()["models"]
    assert [r["model"] for r in rows] == [m.model for m in board.models]
    assert [r["p_best"] for r in rows] == [round(float(p), 4) for p in expected.p_best]
    check_readable(odds)
    plain = build_leaderboard(
        "elo", NAMES, POINT, POINT, POINT, counts(4), n_battles=200, interval="none"
    )
    assert with_interval_odds(plain) == plain
