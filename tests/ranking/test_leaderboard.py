"""Leaderboard assembly: conventions of docs/SPEC.md section 2."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ranking.leaderboard import fit_leaderboard, read_leaderboard
from ranking.pairwise import collapse
from ranking.provisional import split_provisional
from ranking.types import Leaderboard, PairwiseData
from tests.conftest import RecordedProgress, simulate_votes


@pytest.fixture(scope="module")
def votes() -> PairwiseData:
    return simulate_votes(6, 3000, seed=13)[0]


@pytest.mark.parametrize(
    ("method", "interval"),
    [
        ("bt", "sandwich"),
        ("bt", "bootstrap"),
        ("elo", "bootstrap"),
        ("bt", "none"),
        ("elo", "none"),
    ],
)
def test_conventions(votes: PairwiseData, method: str, interval: str) -> None:
    board = fit_leaderboard(votes, method=method, interval=interval, rounds=30, rng=0)  # type: ignore[arg-type]
    ratings = np.array([m.rating for m in board.models])
    assert ratings.mean() == pytest.approx(1000.0, abs=1e-6)
    assert np.all(np.diff(ratings) <= 0)  # best first
    for m in board.models:
        assert m.lower <= m.rating <= m.upper
        assert m.rank == 1 + sum(o.lower > m.upper for o in board.models)
    assert board.n_battles == 3000
    assert sum(m.battles for m in board.models) == 2 * 3000
    if interval == "none":
        assert all(m.lower == m.rating == m.upper for m in board.models)


def test_counts(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, interval="none")
    for j, name in enumerate(votes.models):
        as_a = votes.matchups[:, 0] == j
        as_b = votes.matchups[:, 1] == j
        row = board[name]
        assert row.wins == np.sum(as_a & (votes.outcomes == 1)) + np.sum(
            as_b & (votes.outcomes == 0)
        )
        assert row.ties == np.sum((as_a | as_b) & (votes.outcomes == 0.5))
        assert row.wins + row.losses + row.ties == row.battles == np.sum(as_a | as_b)


def test_anchor_pins_one_model(votes: PairwiseData) -> None:
    free = fit_leaderboard(votes)
    pinned = fit_leaderboard(votes, anchor=("m3", 1200.0))
    assert pinned["m3"].rating == pytest.approx(1200.0)
    shift = 1200.0 - free["m3"].rating
    for m in free.models:
        assert pinned[m.model].rating == pytest.approx(m.rating + shift)
        assert pinned[m.model].upper - pinned[m.model].lower == pytest.approx(m.upper - m.lower)


def test_win_probability(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes, interval="none")
    a, b = board.models[0].model, board.models[-1].model
    p = board.win_probability(a, b)
    assert 0.5 < p < 1 and p + board.win_probability(b, a) == pytest.approx(1.0)
    diff = board[a].rating - board[b].rating
    assert p == pytest.approx(1 / (1 + 10 ** (-diff / 400)))
    assert board.win_matrix()[0, -1] == pytest.approx(p)
    assert board.win_probability(a, a) == pytest.approx(0.5)


def test_json_shape(votes: PairwiseData) -> None:
    doc = fit_leaderboard(votes).to_dict()
    assert doc["method"] == "bt" and doc["n_battles"] == 3000
    keys = {"model", "rating", "lower", "upper", "rank", "battles", "wins", "losses", "ties"}
    assert all(keys <= set(row) for row in doc["models"])


def test_bad_arguments(votes: PairwiseData) -> None:
    with pytest.raises(ValueError, match="sandwich"):
        fit_leaderboard(votes, method="elo", interval="sandwich")
    with pytest.raises(ValueError, match="'nope'"):
        fit_leaderboard(votes, anchor=("nope", 1000.0))
    with pytest.raises(ValueError, match="'method'"):
        fit_leaderboard(votes, method="glicko")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'confidence'"):
        fit_leaderboard(votes, confidence=1.5)
    with pytest.raises(KeyError, match="'nope'"):
        fit_leaderboard(votes)["nope"]


def test_sparse_leaderboard_has_no_infinities() -> None:
    # a never lost, e seen once, {a, b, c} and {d, e} disconnected
    m = np.array([[0, 1], [0, 2], [1, 2], [2, 1], [3, 4]])
    y = np.array([1.0, 1.0, 1.0, 0.5, 1.0])
    data = PairwiseData(tuple("abcde"), m, y, np.ones(5))
    for method, interval in [("bt", "sandwich"), ("bt", "bootstrap"), ("elo", "bootstrap")]:
        board = fit_leaderboard(data, method=method, interval=interval, rounds=20, rng=0)  # type: ignore[arg-type]
        values = [(r.rating, r.lower, r.upper) for r in board.models]
        assert np.all(np.isfinite(values))
    assert fit_leaderboard(data).models[0].model == "a"


@pytest.mark.parametrize("interval", ["sandwich", "bootstrap"])
def test_bt_of_collapsed_counts_equals_bt_of_the_votes(interval: str) -> None:
    # service.scale sums per-partition (model_a, model_b, outcome) counts into one
    # weighted PairwiseData: the Bradley-Terry leaderboard must not tell it from the votes.
    data, _ = simulate_votes(6, 3000, seed=21)
    halves = [collapse(data.select(np.arange(3000) % 2 == part)) for part in (0, 1)]
    summed = collapse(
        PairwiseData(
            data.models,
            np.concatenate([h.matchups for h in halves]),
            np.concatenate([h.outcomes for h in halves]),
            np.concatenate([h.weights for h in halves]),
        )
    )
    raw = fit_leaderboard(data, method="bt", interval=interval, rng=3)
    counted = fit_leaderboard(summed, method="bt", interval=interval, rng=3)
    assert counted == raw


@pytest.mark.parametrize(
    ("method", "interval", "stages"),
    [
        ("elo", None, ["Elo bootstrap"]),  # Elo's default interval is a bootstrap
        ("bt", "bootstrap", ["BT bootstrap"]),
        ("bt", None, []),
        ("elo", "none", []),
    ],
)
def test_a_bootstrap_reports_its_rounds(
    votes: PairwiseData, method: str, interval: str | None, stages: list[str]
) -> None:
    progress = RecordedProgress()
    options: dict[str, Any] = {"method": method, "interval": interval, "rounds": 30, "rng": 1}
    told = fit_leaderboard(votes, progress=progress, **options)
    assert progress.named() == stages
    assert all(s.total == 30 and s.unit == "rounds" for s in progress.stages)
    progress.assert_complete()
    assert told == fit_leaderboard(votes, **options)


# -- a minimum of votes: ranked and provisional models -----------------------------------


def with_one_vote_for(votes: PairwiseData, name: str, beats: int) -> PairwiseData:
    """``votes`` and one more: a new model ``name`` beating model ``beats``."""
    k = votes.n_models
    return PairwiseData(
        (*votes.models, name),
        np.vstack([votes.matchups, [[k, beats]]]).astype(np.intp),
        np.append(votes.outcomes, 1.0),
        np.append(votes.weights, 1.0),
    )


def test_one_vote_for_a_made_up_model_moves_nothing_ranked(votes: PairwiseData) -> None:
    """Without a minimum the one-vote model tops the board; with one it changes nothing."""
    attacked = with_one_vote_for(votes, "gpt-17-ultra", beats=5)
    naive = fit_leaderboard(attacked)
    assert naive.models[0].model == "gpt-17-ultra" and naive.models[0].battles == 1
    before, after = fit_leaderboard(votes), fit_leaderboard(attacked, min_votes=50)
    assert [m.model for m in after.models] == [m.model for m in before.models]
    for old, new in zip(before.models, after.models, strict=True):
        assert (new.rating, new.lower, new.upper, new.rank) == pytest.approx(
            (old.rating, old.lower, old.upper, old.rank)
        )
    assert after.provisional is not None
    (row,) = after.provisional
    assert (row.model, row.battles, row.wins, row.losses) == ("gpt-17-ultra", 1, 1, 0)
    # every vote is counted: n_battles, and the beaten model's losses
    assert after.n_battles == before.n_battles + 1
    assert after[votes.models[5]].losses == before[votes.models[5]].losses + 1
    assert sum(m.battles for m in after.models) + row.battles == 2 * after.n_battles
    doc = after.to_dict()
    assert doc["min_votes"] == 50
    assert doc["provisional"] == [
        {"model": "gpt-17-ultra", "battles": 1, "wins": 1, "losses": 0, "ties": 0}
    ]


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_min_votes_zero_ranks_every_model_as_before(votes: PairwiseData, method: str) -> None:
    plain = fit_leaderboard(votes, method=method, rng=0)
    ranked = fit_leaderboard(votes, method=method, rng=0, min_votes=0)
    assert ranked.models == plain.models and ranked.provisional == ()
    assert "provisional" not in plain.to_dict()  # no minimum asked: the document as before
    assert ranked.to_dict() == {**plain.to_dict(), "min_votes": 0, "provisional": []}


def test_split_provisional_ranks_among_the_ranked_only(votes: PairwiseData) -> None:
    board = fit_leaderboard(with_one_vote_for(votes, "z-new", beats=0))
    assert board["z-new"].rank == 1  # its interval overlaps every other one
    split = split_provisional(board, 2)
    assert [m.model for m in split.models] == [m.model for m in board.models if m.battles >= 2]
    assert split.provisional is not None and [m.model for m in split.provisional] == ["z-new"]
    lower = np.array([m.lower for m in split.models])
    upper = np.array([m.upper for m in split.models])
    assert [m.rank for m in split.models] == (1 + (lower[None, :] > upper[:, None]).sum(1)).tolist()
    assert [m.rating for m in split.models] == [board[m.model].rating for m in split.models]
    # everything provisional: an empty table, never a dropped model
    none_ranked = split_provisional(board, 10**9)
    assert none_ranked.models == () and none_ranked.provisional is not None
    assert len(none_ranked.provisional) == len(board.models) == 7
    battles = [m.battles for m in none_ranked.provisional]
    assert battles == sorted(battles, reverse=True)


def test_from_dict_reads_back_to_dict(votes: PairwiseData) -> None:
    board = fit_leaderboard(votes)
    again = read_leaderboard(board.to_dict())
    assert [m.model for m in again.models] == [m.model for m in board.models]
    assert again.to_dict() == board.to_dict()
    # Leaderboard.from_dict reads the rows of docs/SPEC.md section 3, without the odds.
    plain = Leaderboard.from_dict(board.to_dict()).to_dict()
    odds = {"p_best", "rank_lower", "rank_upper"}
    assert plain["models"] == [
        {k: v for k, v in row.items() if k not in odds} for row in board.to_dict()["models"]
    ]
    with pytest.raises(ValueError, match=r"models\[0\] has no field 'rank'"):
        row = {k: v for k, v in board.models[0].to_dict().items() if k != "rank"}
        Leaderboard.from_dict({"method": "bt", "n_battles": 1, "models": [row]})


@pytest.mark.parametrize("bad", [-1, 2.5, True, "50"])
def test_bad_min_votes(votes: PairwiseData, bad: object) -> None:
    with pytest.raises(ValueError, match="'min_votes'"):
        split_provisional(fit_leaderboard(votes), bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'min_votes'"):
        fit_leaderboard(votes, min_votes=bad)  # type: ignore[arg-type]


def test_an_anchor_must_be_ranked(votes: PairwiseData) -> None:
    attacked = with_one_vote_for(votes, "gpt-17-ultra", beats=5)
    with pytest.raises(ValueError, match="'gpt-17-ultra' has fewer than 50 votes"):
        fit_leaderboard(attacked, min_votes=50, anchor=("gpt-17-ultra", 1200.0))
    pinned = fit_leaderboard(attacked, min_votes=50, anchor=(votes.models[0], 1200.0))
    assert pinned[votes.models[0]].rating == pytest.approx(1200.0)


def test_split_provisional_ranks_only_the_rankable_models() -> None:
    board = fit_leaderboard(_rankable_votes(), method="bt")
    split = split_provisional(board, 0, rankable={"m0", "m1"})
    assert {m.model for m in split.models} == {"m0", "m1"}
    assert {m.model for m in split.provisional} == {"m2"}
    assert {m.model for m in split_provisional(board, 0).models} == {"m0", "m1", "m2"}


def _rankable_votes() -> PairwiseData:
    rng = np.random.default_rng(0)
    matchups = np.array([[0, 1], [1, 2], [0, 2]] * 20)
    return PairwiseData(("m0", "m1", "m2"), matchups, (rng.random(60) < 0.6) * 1.0, np.ones(60))
