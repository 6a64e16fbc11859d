"""Collapsing votes into counts, and counting per model."""

from __future__ import annotations

import numpy as np
import pytest

from ranking import pairwise
from ranking.pairwise import collapse, model_counts, position_in_group, to_elo_scale
from ranking.types import PairwiseData
from tests.conftest import simulate_votes


def votes(rows: list[tuple[int, int, float]]) -> PairwiseData:
    m = np.array([(a, b) for a, b, _ in rows])
    return PairwiseData(("x", "y", "z"), m, np.array([y for *_, y in rows]), np.ones(len(rows)))


def test_a_swapped_pair_with_flipped_outcome_is_the_same_row() -> None:
    c = collapse(votes([(0, 1, 1.0), (1, 0, 0.0), (1, 0, 0.5), (0, 1, 0.5), (2, 1, 1.0)]))
    got = {
        (int(a), int(b), float(y)): w
        for (a, b), y, w in zip(c.matchups, c.outcomes, c.weights, strict=True)
    }
    assert got == {(0, 1, 1.0): 2.0, (0, 1, 0.5): 2.0, (1, 2, 0.0): 1.0}


def test_dense_and_sorted_paths_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    data, _ = simulate_votes(9, 2000, seed=3)
    dense = collapse(data)
    monkeypatch.setattr(pairwise, "_MAX_DENSE_KEYS", 0)
    sorted_path = collapse(data)
    assert np.array_equal(dense.matchups, sorted_path.matchups)
    assert np.array_equal(dense.outcomes, sorted_path.outcomes)
    assert np.array_equal(dense.weights, sorted_path.weights)
    assert dense.n_votes == 2000


def test_counts_are_the_same_before_and_after_collapsing() -> None:
    data, _ = simulate_votes(6, 700, seed=4)
    before, after = model_counts(data), model_counts(collapse(data))
    for field in ("battles", "wins", "losses", "ties"):
        assert np.array_equal(getattr(before, field), getattr(after, field))


def test_outcomes_other_than_win_tie_loss_are_refused() -> None:
    with pytest.raises(ValueError, match="'outcomes'"):
        collapse(votes([(0, 1, 0.7)]))


def test_elo_scale() -> None:
    assert to_elo_scale(np.array([0.0, np.log(10.0)])) == pytest.approx([1000.0, 1400.0])


def test_position_in_group() -> None:
    groups = np.array([2, 0, 2, -1, 0, 2, 1])
    assert position_in_group(groups).tolist() == [0, 0, 1, -1, 1, 2, 0]
    assert position_in_group(np.array([], dtype=np.intp)).tolist() == []
