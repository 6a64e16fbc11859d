"""The compiled Elo loops against the NumPy implementation they replaced (issue 18).

The references are ``online_elo_grouped`` and ``bootstrap_elo_batch`` as they were before
the kernel, kept in :mod:`tests.reference.elo` (benchmark L), which times the two
against each other: every group in step, one vectorised update a step after a stable sort
by position in group, and the whole batch's rows drawn at once. NumPy's ``power`` and the
C library's ``pow`` may differ in the last bit, hence ``rtol=1e-12`` rather than equality.
"""

from __future__ import annotations

import numpy as np
import pytest

from ranking import elo_kernel
from ranking.elo import INITIAL, online_elo_grouped
from ranking.elo_kernel import bootstrap_elo_rows, online_elo_rows
from ranking.intervals import elo_bootstrap
from ranking.intervals.elo_bootstrap import bootstrap_elo, bootstrap_elo_batch, elo_bootstrap_plan
from tests.conftest import simulate_votes
from tests.reference.elo import numpy_bootstrap_elo_batch as reference_bootstrap_batch
from tests.reference.elo import numpy_online_elo_grouped as reference_grouped

RTOL = 1e-12


@pytest.mark.parametrize(
    ("n_models", "n_votes", "size", "seed"),
    # one vote; 150 models: votes coded on 4 bytes, not 2
    [
        (4, 300, 5, 0),
        (6, 1, 3, 1),
        (8, 50, 7, 2),
        (15, 2_000, 4, 3),
        (3, 2, 1, 4),
        (150, 400, 2, 5),
    ],
)
def test_bootstrap_batch_draws_the_replicates_of_the_numpy_implementation(
    n_models: int, n_votes: int, size: int, seed: int
) -> None:
    data, _ = simulate_votes(max(n_models - 2, 2), n_votes, seed=seed, tie_share=0.3)
    # n_models above the models voted on: the last ones are never seen and stay INITIAL.
    ours_rng, ref_rng = np.random.default_rng(seed + 10), np.random.default_rng(seed + 10)
    ours = bootstrap_elo_batch(n_models, data.matchups, data.outcomes, size, ours_rng)
    ref = reference_bootstrap_batch(n_models, data.matchups, data.outcomes, size, ref_rng)
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=0)
    assert np.all(ours[:, max(n_models - 2, 2) :] == INITIAL)
    # The generator is left where the one big draw leaves it.
    assert ours_rng.bit_generator.state == ref_rng.bit_generator.state


def test_bootstrap_chunks_and_general_outcomes_draw_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, _ = simulate_votes(5, 301, seed=7)
    reference = reference_bootstrap_batch(
        5, data.matchups, data.outcomes, 3, np.random.default_rng(1)
    )
    monkeypatch.setattr(elo_kernel, "_DRAW_CHUNK", 7)  # 301 = 43 chunks of 7
    chunked = bootstrap_elo_batch(5, data.matchups, data.outcomes, 3, np.random.default_rng(1))
    np.testing.assert_allclose(chunked, reference, rtol=RTOL, atol=0)
    # Outcomes other than 1, 0.5 and 0 (a vote is then its own table entry).
    soft = np.clip(data.outcomes * 0.9 + 0.05, 0.0, 1.0)
    ours = bootstrap_elo_batch(5, data.matchups, soft, 3, np.random.default_rng(1))
    ref = reference_bootstrap_batch(5, data.matchups, soft, 3, np.random.default_rng(1))
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=0)
    assert not np.allclose(ours, chunked)


def test_bootstrap_over_batches_equals_the_numpy_implementation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, _ = simulate_votes(6, 200, seed=9)
    monkeypatch.setattr(elo_bootstrap, "_MAX_ELO_BOOTSTRAP_ROWS", 4 * 200)  # batches of 4
    ours = bootstrap_elo(6, data.matchups, data.outcomes, 10, np.random.default_rng(3), k=8.0)
    plan = elo_bootstrap_plan(200, 10, np.random.default_rng(3))
    ref = np.concatenate(
        [
            reference_bootstrap_batch(6, data.matchups, data.outcomes, size, child, k=8.0)
            for size, child in plan
        ]
    )
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=0)


def test_bootstrap_batch_edge_cases() -> None:
    empty = bootstrap_elo_batch(
        3, np.empty((0, 2), np.intp), np.empty(0), 2, np.random.default_rng(0)
    )
    assert np.array_equal(empty, np.full((2, 3), INITIAL))
    one = bootstrap_elo_batch(2, np.array([[0, 1]]), np.array([0.5]), 0, np.random.default_rng(0))
    assert one.shape == (0, 2)
    told: list[int] = []
    data, _ = simulate_votes(3, 40, seed=2)
    bootstrap_elo_batch(
        3, data.matchups, data.outcomes, 5, np.random.default_rng(0), advance=told.append
    )
    assert told == [1] * 5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grouped_equals_the_numpy_implementation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_models, n_groups, n = 7, 9, 500
    data, _ = simulate_votes(n_models - 1, n, seed=seed, tie_share=0.25)  # model 6 unseen
    groups = rng.integers(0, n_groups - 1, n)  # the last group has no votes
    initial = rng.normal(1000.0, 50.0, (n_groups, n_models))
    ours = online_elo_grouped(
        n_models, data.matchups, data.outcomes, groups, n_groups, k=6.0, initial=initial
    )
    ref = reference_grouped(
        n_models, data.matchups, data.outcomes, groups, n_groups, k=6.0, initial=initial
    )
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=0)
    assert np.array_equal(ours[-1], initial[-1]) and np.array_equal(ours[:, -1], initial[:, -1])
    steps: list[int] = []
    told = online_elo_grouped(
        n_models,
        data.matchups,
        data.outcomes,
        groups,
        n_groups,
        k=6.0,
        initial=initial,
        advance=steps.append,
    )
    np.testing.assert_array_equal(told, ours)
    assert sum(steps) == np.bincount(groups).max() and len(steps) <= 100


def test_grouped_one_vote_and_none() -> None:
    one = online_elo_grouped(3, np.array([[2, 0]]), np.array([1.0]), np.array([1]), 2)
    np.testing.assert_allclose(
        one, reference_grouped(3, np.array([[2, 0]]), np.array([1.0]), np.array([1]), 2), rtol=RTOL
    )
    assert one[1, 2] > INITIAL > one[1, 0] and np.all(one[0] == INITIAL)
    none = online_elo_grouped(3, np.empty((0, 2), np.intp), np.empty(0), np.empty(0, np.intp), 2)
    assert np.array_equal(none, np.full((2, 3), INITIAL))


def test_kernels_refuse_indices_out_of_range() -> None:
    ratings = np.full((2, 3), INITIAL)
    with pytest.raises(ValueError, match="'matchups'.*3"):
        online_elo_rows(np.array([[0, 3]]), np.array([1.0]), np.array([0]), ratings, k=4.0)
    with pytest.raises(ValueError, match="'groups'.*2"):
        online_elo_rows(np.array([[0, 1]]), np.array([1.0]), np.array([2]), ratings, k=4.0)
    with pytest.raises(ValueError, match="same length"):
        online_elo_rows(np.array([[0, 1]]), np.array([1.0, 0.0]), np.array([0]), ratings, k=4.0)
    with pytest.raises(ValueError, match="'matchups'.*-1"):
        bootstrap_elo_rows(
            np.array([[0, -1]]), np.array([1.0]), ratings, np.random.default_rng(0), k=4.0
        )
    with pytest.raises(ValueError, match="at least one vote"):
        bootstrap_elo_rows(
            np.empty((0, 2), np.intp), np.empty(0), ratings, np.random.default_rng(0), k=4.0
        )
    assert np.all(ratings == INITIAL)


@pytest.mark.parametrize("n", [10, 3 * 2**30, 2**31 + 1])
def test_numpy_draws_bounded_integers_the_same_in_chunks(n: int) -> None:
    # What bootstrap_elo_rows relies on: below 2**32, each value is drawn on its own
    # (with rejections, frequent for 2**31 + 1), so chunks of a draw are the draw.
    whole_rng, chunk_rng = np.random.default_rng(n), np.random.default_rng(n)
    whole = whole_rng.integers(0, n, size=(3, 1_000)).ravel()
    chunks = np.concatenate([chunk_rng.integers(0, n, size=m) for m in (1, 6, 993, 7, 1_993)])
    assert np.array_equal(whole, chunks)
    assert whole_rng.bit_generator.state == chunk_rng.bit_generator.state
