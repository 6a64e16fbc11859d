"""Sandwich and bootstrap intervals, and interval-aware ranks."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.bt import fit_bt
from ranking.intervals import elo_bootstrap
from ranking.intervals.bt_bootstrap import bootstrap_bt
from ranking.intervals.elo_bootstrap import bootstrap_elo, bootstrap_elo_batch, elo_bootstrap_plan
from ranking.intervals.sandwich import sandwich_covariance, sandwich_intervals
from ranking.intervals.summary import interval_ranks, percentile_intervals
from ranking.pairwise import collapse
from ranking.types import PairwiseData
from tests.conftest import RecordedProgress, simulate_votes


def test_interval_ranks_known_answer() -> None:
    lower = np.array([10.0, 8.0, 5.0, 1.0])
    upper = np.array([12.0, 11.0, 9.0, 4.0])
    # model 2's upper (9) is below model 0's lower (10) only; model 3 is below all three.
    assert interval_ranks(lower, upper).tolist() == [1, 1, 2, 4]


def test_zero_width_intervals_give_competition_ranks() -> None:
    r = np.array([3.0, 5.0, 5.0, 1.0])
    assert interval_ranks(r, r).tolist() == [3, 1, 1, 4]


def test_percentile_intervals() -> None:
    samples = np.arange(1, 1001, dtype=float)[:, None]
    lo, hi = percentile_intervals(samples, 0.9)
    assert lo[0] == pytest.approx(50.95) and hi[0] == pytest.approx(950.05)


def test_sandwich_equals_inverse_hessian_when_the_model_is_right_and_there_are_no_ties() -> None:
    # With Bernoulli outcomes from the model itself, E[(p - y)^2] = p(1 - p), so the
    # sandwich and the model-based variance agree up to sampling noise.
    data, _ = simulate_votes(5, 20_000, seed=9, tie_share=0.0)
    v = collapse(data)
    theta = fit_bt(5, v.matchups, v.outcomes, v.weights)
    sandwich = np.sqrt(np.diag(sandwich_covariance(theta, v.matchups, v.outcomes, v.weights)))
    from ranking.bt import bt_hessian

    h = bt_hessian(theta, v.matchups, v.outcomes, v.weights)
    centred = np.eye(5) - 1 / 5
    model_based = np.sqrt(np.diag(centred @ np.linalg.inv(h) @ centred))
    assert sandwich == pytest.approx(model_based, rel=0.05)


def test_sandwich_and_bootstrap_agree() -> None:
    data, _ = simulate_votes(6, 6000, seed=10)
    v = collapse(data)
    theta = fit_bt(6, v.matchups, v.outcomes, v.weights)
    lo, hi = sandwich_intervals(theta, v.matchups, v.outcomes, v.weights)
    samples = bootstrap_bt(v, 400, np.random.default_rng(0), initial_params=theta)
    blo, bhi = percentile_intervals(samples)
    assert (hi - lo) == pytest.approx(bhi - blo, rel=0.2)


def test_bootstrap_is_seeded() -> None:
    data, _ = simulate_votes(4, 300, seed=11)
    v = collapse(data)
    one = bootstrap_bt(v, 20, np.random.default_rng(5))
    two = bootstrap_bt(v, 20, np.random.default_rng(5))
    assert np.array_equal(one, two)
    e1 = bootstrap_elo(4, data.matchups, data.outcomes, 5, np.random.default_rng(5))
    e2 = bootstrap_elo(4, data.matchups, data.outcomes, 5, np.random.default_rng(5))
    assert np.array_equal(e1, e2) and e1.shape == (5, 4)


def test_sandwich_intervals_cover_the_truth() -> None:
    hits = total = 0
    for seed in range(40):
        data, truth = simulate_votes(5, 1500, seed=100 + seed, tie_share=0.0)
        v = collapse(data)
        theta = fit_bt(5, v.matchups, v.outcomes, v.weights)
        lo, hi = sandwich_intervals(theta, v.matchups, v.outcomes, v.weights)
        hits += int(np.sum((lo <= truth) & (truth <= hi)))
        total += 5
    assert 0.88 < hits / total <= 1.0


def test_duplicating_votes_narrows_intervals() -> None:
    data, _ = simulate_votes(5, 400, seed=12)
    v = collapse(data)
    doubled = PairwiseData(v.models, v.matchups, v.outcomes, 2 * v.weights)
    theta = fit_bt(5, v.matchups, v.outcomes, v.weights)
    theta2 = fit_bt(5, doubled.matchups, doubled.outcomes, doubled.weights)
    lo, hi = sandwich_intervals(theta, v.matchups, v.outcomes, v.weights)
    lo2, hi2 = sandwich_intervals(theta2, doubled.matchups, doubled.outcomes, doubled.weights)
    assert np.all(hi2 - lo2 < hi - lo)
    assert (hi2 - lo2) == pytest.approx((hi - lo) / np.sqrt(2), rel=0.01)


def test_sparse_cases_give_finite_intervals() -> None:
    m = np.array([[0, 1], [0, 2], [1, 2], [2, 1], [3, 4]])
    y = np.array([1.0, 1.0, 1.0, 0.5, 1.0])
    v = collapse(PairwiseData(tuple("abcde"), m, y, np.ones(5)))
    theta = fit_bt(5, v.matchups, v.outcomes, v.weights)
    lo, hi = sandwich_intervals(theta, v.matchups, v.outcomes, v.weights)
    assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
    samples = bootstrap_bt(v, 30, np.random.default_rng(0))
    assert np.all(np.isfinite(samples))


def test_a_model_with_two_ties_gets_a_wide_sandwich_interval() -> None:
    # Two ties against evenly matched opponents leave residuals near zero: the raw
    # sandwich would claim a few points; the moderated variance stays honest.
    data, _ = simulate_votes(4, 4000, seed=14)
    m = np.vstack([data.matchups, [[4, 0], [1, 4]]])
    y = np.concatenate([data.outcomes, [0.5, 0.5]])
    v = collapse(PairwiseData(tuple("abcde"), m, y, np.ones(len(y))))
    theta = fit_bt(5, v.matchups, v.outcomes, v.weights)
    raw = np.sqrt(sandwich_covariance(theta, v.matchups, v.outcomes, v.weights)[4, 4])
    lo, hi = sandwich_intervals(theta, v.matchups, v.outcomes, v.weights)
    assert hi[4] - lo[4] > 2.5 * (2 * 1.96 * raw)  # far wider than the raw sandwich
    assert hi[4] - lo[4] > 3.0  # more than three nats (520 Elo points)
    # well-measured models (2,000 votes each) keep about their sandwich widths (the sparse
    # model widens everyone a little through the mean the ratings are relative to)
    full = np.sqrt(np.diag(sandwich_covariance(theta, v.matchups, v.outcomes, v.weights)))
    assert (hi - lo)[:4] == pytest.approx(2 * 1.96 * full[:4], rel=0.1)


def test_elo_bootstrap_batches_are_independent_of_their_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each batch draws from its own child generator, so running the batches in another
    # order, or elsewhere (service.scale maps them over a Dask cluster), changes nothing.
    data, _ = simulate_votes(4, 300, seed=13)
    monkeypatch.setattr(elo_bootstrap, "_MAX_ELO_BOOTSTRAP_ROWS", 3 * 300)  # 3 replicates a batch
    whole = bootstrap_elo(4, data.matchups, data.outcomes, 10, np.random.default_rng(5))
    plan = elo_bootstrap_plan(300, 10, np.random.default_rng(5))
    assert [size for size, _ in plan] == [3, 3, 3, 1]
    backwards = [
        bootstrap_elo_batch(4, data.matchups, data.outcomes, size, child)
        for size, child in reversed(plan)
    ]
    assert np.array_equal(whole, np.concatenate(backwards[::-1]))
    # The batches differ from each other, and a batch does not depend on its neighbours.
    assert not np.array_equal(whole[:3], whole[3:6])
    alone = elo_bootstrap_plan(300, 10, np.random.default_rng(5))[2]
    assert np.array_equal(bootstrap_elo_batch(4, data.matchups, data.outcomes, *alone), whole[6:9])
    with pytest.raises(ValueError, match="'rounds'"):
        elo_bootstrap_plan(300, 0, np.random.default_rng(5))


@pytest.mark.parametrize("rounds", [1, 7, 40])
def test_elo_bootstrap_reports_its_rounds_and_draws_the_same_replicates(
    rounds: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, _ = simulate_votes(5, 300, seed=4)
    monkeypatch.setattr(elo_bootstrap, "_MAX_ELO_BOOTSTRAP_ROWS", 300 * 3)  # batches of 3
    plain = bootstrap_elo(5, data.matchups, data.outcomes, rounds, np.random.default_rng(2))
    progress = RecordedProgress()
    told = bootstrap_elo(
        5, data.matchups, data.outcomes, rounds, np.random.default_rng(2), progress=progress
    )
    np.testing.assert_array_equal(told, plain)
    assert [(s.name, s.total, s.unit) for s in progress.stages] == [
        ("Elo bootstrap", rounds, "rounds")
    ]
    progress.assert_complete()
    assert progress.stages[0].calls >= -(-rounds // 3)  # at least once a batch


def test_bt_bootstrap_reports_its_rounds() -> None:
    data, _ = simulate_votes(4, 200, seed=5)
    plain = bootstrap_bt(collapse(data), 12, np.random.default_rng(1))
    progress = RecordedProgress()
    told = bootstrap_bt(collapse(data), 12, np.random.default_rng(1), progress=progress)
    np.testing.assert_array_equal(told, plain)
    assert progress.named() == ["BT bootstrap"]
    progress.assert_complete()
