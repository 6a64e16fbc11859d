"""Style-controlled Bradley-Terry: known answers, a reference, the raw board beside it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from ranking.bt import fit_bt
from ranking.intervals.sandwich import moderated_covariance
from ranking.leaderboard import fit_leaderboard
from ranking.pairwise import ELO_PER_NAT
from ranking.style_control.board import fit_style_leaderboard
from ranking.style_control.fit import fit_style_bt, style_covariance, style_log_loss
from ranking.types import PairwiseData, RankedRating

FEATURES = ("length", "bold")


def length_arena(
    n: int = 4000, seed: int = 1, verbose_by: float = 0.6
) -> tuple[PairwiseData, np.ndarray]:
    """Five models; ``m4`` is no better than ``m2`` but writes 4x longer answers, and
    voters reward length: ``verbose_by`` natural-log odds per doubling."""
    rng = np.random.default_rng(seed)
    k = 5
    strength = np.array([0.5, 0.25, 0.0, -0.25, 0.0])
    matchups = np.array([rng.choice(k, 2, replace=False) for _ in range(n)], dtype=np.intp)
    doublings = np.where(np.arange(k) == 4, 2.0, 0.0)
    a = doublings[matchups[:, 0]] + rng.normal(0.0, 0.5, n)
    b = doublings[matchups[:, 1]] + rng.normal(0.0, 0.5, n)
    x = np.column_stack([a - b, rng.normal(0.0, 0.3, n)])
    logit = strength[matchups[:, 0]] - strength[matchups[:, 1]] + verbose_by * x[:, 0]
    outcomes = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    models = tuple(f"m{j}" for j in range(k))
    return PairwiseData(models, matchups, outcomes, np.ones(n)), x


def test_a_model_that_wins_by_length_alone_drops_under_control() -> None:
    data, x = length_arena()
    result = fit_style_leaderboard(data, x, FEATURES, min_votes=0)
    assert result.raw.models[0].model == "m4"  # length carries it to the top
    assert result.board.models[0].model == "m0"
    assert result.board["m4"].rating < result.board["m1"].rating
    # Its interval holds its true strength, centred as the board is (the mean is 0.1).
    truth = 1000.0 + ELO_PER_NAT * (0.0 - 0.1)
    assert result.board["m4"].lower < truth < result.board["m4"].upper
    raw_gap = result.raw["m4"].rating - result.raw["m2"].rating
    assert result.board["m4"].rating - result.board["m2"].rating < raw_gap / 4
    length = result.coefficients[0]
    assert length.feature == "length"
    assert length.lower < 0.6 * ELO_PER_NAT < length.upper  # the true points per doubling
    bold = result.coefficients[1]
    assert bold.lower < 0.0 < bold.upper  # it does not matter


def test_same_conventions_as_the_raw_board() -> None:
    data, x = length_arena(n=1500)
    result = fit_style_leaderboard(data, x, FEATURES, min_votes=0)
    board = result.board
    assert board.method == "bt" and board.interval == "sandwich"
    assert np.mean([m.rating for m in board.models]) == pytest.approx(1000.0)
    assert all(isinstance(m, RankedRating) for m in board.models)
    assert sum(m.p_best for m in board.models) == pytest.approx(1.0)  # type: ignore[attr-defined]
    for m in board.models:
        assert m.lower <= m.rating <= m.upper
        assert m.rank_lower <= m.rank <= m.rank_upper  # type: ignore[attr-defined]
    assert [m.rank for m in board.models] == sorted(m.rank for m in board.models)
    raw = fit_leaderboard(data, min_votes=0)
    assert result.raw.to_dict() == raw.to_dict()  # the raw twin is the plain board
    assert board.n_battles == raw.n_battles
    assert {m.model: m.battles for m in board.models} == {m.model: m.battles for m in raw.models}


def test_without_style_differences_the_boards_agree() -> None:
    data, _ = length_arena(n=800)
    zero = np.zeros((800, 2))
    result = fit_style_leaderboard(data, zero, FEATURES, min_votes=0)
    assert result.coefficients == ()  # nothing varies: nothing to estimate
    for row in result.raw.models:
        assert result.board[row.model].rating == pytest.approx(row.rating, abs=1e-6)
        assert result.board[row.model].lower == pytest.approx(row.lower, abs=1e-6)
    theta, beta = fit_style_bt(5, data.matchups, data.outcomes, np.zeros((800, 0)))
    np.testing.assert_allclose(
        theta, fit_bt(5, data.matchups, data.outcomes, data.weights), atol=1e-6
    )


def test_agrees_with_an_unpenalised_logistic_regression() -> None:
    data, x = length_arena(n=600, seed=3)
    theta, beta = fit_style_bt(5, data.matchups, data.outcomes, x, alpha=1e-9, beta_alpha=1e-9)
    n = len(data.outcomes)
    design = np.zeros((n, 5 + 2))
    design[np.arange(n), data.matchups[:, 0]] = 1.0
    design[np.arange(n), data.matchups[:, 1]] = -1.0
    design[:, 5:] = x
    model = LogisticRegression(C=1e9, fit_intercept=False, tol=1e-12, max_iter=100_000)
    coef = model.fit(design, data.outcomes).coef_[0]
    np.testing.assert_allclose(beta, coef[5:], atol=1e-4)
    np.testing.assert_allclose(theta, coef[:5] - coef[:5].mean(), atol=1e-4)


def test_ties_count_half_a_win() -> None:
    # Two wins and two ties for a, no style difference: odds 3, as on the raw board.
    m = np.array([[0, 1]] * 4)
    theta, beta = fit_style_bt(
        2, m, np.array([1.0, 1.0, 0.5, 0.5]), np.array([[1.0], [-1.0], [1.0], [-1.0]]), alpha=1e-9
    )
    assert theta[0] - theta[1] == pytest.approx(math.log(3.0), abs=1e-5)
    assert beta[0] == pytest.approx(0.0, abs=1e-6)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_swapping_a_and_b_flips_nothing(seed: int) -> None:
    data, x = length_arena(n=300, seed=seed)
    theta, beta = fit_style_bt(5, data.matchups, data.outcomes, x)
    swapped_theta, swapped_beta = fit_style_bt(5, data.matchups[:, ::-1], 1.0 - data.outcomes, -x)
    np.testing.assert_allclose(theta, swapped_theta, atol=1e-6)
    np.testing.assert_allclose(beta, swapped_beta, atol=1e-6)


def test_covariance_matches_the_raw_sandwich_without_style() -> None:
    data, _ = length_arena(n=700)
    theta = fit_bt(5, data.matchups, data.outcomes, data.weights)
    joint = style_covariance(
        theta, np.zeros(0), data.matchups, data.outcomes, np.zeros((700, 0)), data.weights
    )
    raw = moderated_covariance(theta, data.matchups, data.outcomes, data.weights)
    np.testing.assert_allclose(joint, raw, rtol=1e-6, atol=1e-12)


def test_bootstrap_intervals_hold_the_truth() -> None:
    data, x = length_arena(n=2000, seed=5)
    result = fit_style_leaderboard(
        data, x, FEATURES, interval="bootstrap", rounds=40, rng=0, min_votes=0
    )
    length = result.coefficients[0]
    assert length.lower < 0.6 * ELO_PER_NAT < length.upper
    assert result.board.interval == "bootstrap"
    assert result.board.models[0].model == "m0"


def test_control_fits_held_out_votes_better() -> None:
    data, x = length_arena(n=3000, seed=7)
    train = np.arange(3000) < 2000
    test = ~train
    theta, beta = fit_style_bt(5, data.matchups[train], data.outcomes[train], x[train])
    plain = fit_bt(5, data.matchups[train], data.outcomes[train], data.weights[train])
    controlled = style_log_loss(theta, beta, data.matchups[test], data.outcomes[test], x[test])
    raw = style_log_loss(plain, np.zeros(2), data.matchups[test], data.outcomes[test], x[test])
    assert controlled.mean() < raw.mean() - 0.01


def test_min_votes_anchor_and_provisional() -> None:
    data, x = length_arena(n=1000)
    extra = PairwiseData(
        data.models + ("rare",),
        np.vstack([data.matchups, [[5, 0], [0, 5]]]).astype(np.intp),
        np.concatenate([data.outcomes, [1.0, 0.0]]),
        np.ones(1002),
    )
    xx = np.vstack([x, [[1.0, 0.0], [-1.0, 0.0]]])
    result = fit_style_leaderboard(extra, xx, FEATURES, min_votes=20, anchor=("m2", 1200.0))
    assert "rare" not in {m.model for m in result.board.models}
    assert [m.model for m in result.board.provisional or ()] == ["rare"]
    assert result.board["m2"].rating == pytest.approx(1200.0)
    assert result.raw["m2"].rating == pytest.approx(1200.0)
    document = result.to_dict()
    assert document["style_control"]["coefficients"][0]["feature"] == "length"
    assert {r["model"] for r in document["style_control"]["raw"]} == set(data.models)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"differences": np.zeros((3, 2))}, "differences"),
        ({"features": ("length",)}, "differences"),
        ({"interval": "laplace"}, "interval"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    data, x = length_arena(n=100)
    arguments = {"differences": x, "features": FEATURES, **kwargs}
    with pytest.raises(ValueError, match=message):
        fit_style_leaderboard(data, **arguments)


def test_non_finite_covariates_are_refused() -> None:
    with pytest.raises(ValueError, match="differences"):
        fit_style_bt(2, np.array([[0, 1]]), np.array([1.0]), np.array([[np.nan]]))
