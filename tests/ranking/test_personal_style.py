"""Per-user style coefficients: the sign of a user's taste is recovered where they voted
enough, a sparse user stays at the aggregate, and per-user taste falls back to the
aggregate's where no one differs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import check_grad
from scipy.special import expit

from ranking.personal_style.alpha import user_style_alpha
from ranking.personal_style.fit import earlier_votes, fit_user_style, style_under_prior
from ranking.personal_style.posterior import fit_user_style_posterior
from ranking.personal_style.predict import style_log_loss, style_win_probability, taste_strengths
from ranking.personal_style.results import StyleAlphaMethod, StylePrior


def taste_arena(
    votes: list[int], taste: list[float], seed: int = 0, n_models: int = 8
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Votes where user ``u`` casts ``votes[u]`` votes and prefers long answers by
    ``taste[u]`` nats per unit of the first covariate (the log length ratio); the second
    covariate (say, headers) moves no one. Returns ``(x, outcomes, offsets, users)``."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 0.8, n_models)
    users = np.repeat(np.arange(len(votes)), votes)
    n = users.size
    pairs = np.array([rng.choice(n_models, 2, replace=False) for _ in range(n)])
    offsets = theta[pairs[:, 0]] - theta[pairs[:, 1]]
    x = rng.normal(0.0, 1.0, (n, 2))
    p = expit(offsets + x[:, 0] * np.asarray(taste)[users])
    u = rng.random(n)
    outcomes = np.where(u < 0.15, 0.5, (rng.random(n) < p).astype(float))
    return x, outcomes, offsets, users


def aggregate_of(
    x: np.ndarray, y: np.ndarray, offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Everyone's coefficients as one group with an almost flat prior, and their covariance."""
    beta, covariance = fit_user_style_posterior(
        x, y, offsets, np.zeros(y.size, dtype=int), 1, np.zeros(x.shape[1]), 1e-8
    )
    return beta[0], covariance[0]


def test_taste_recovered_for_heavy_voters_and_shrunk_for_sparse_ones() -> None:
    # 20 heavy voters (300 votes), half preferring long answers, half short; 20 sparse
    # ones (4 votes) with the same split.
    votes = [300] * 20 + [4] * 20
    taste = ([1.0] * 10 + [-1.0] * 10) * 2
    x, y, offsets, users = taste_arena(votes, taste, seed=1)
    aggregate, covariance = aggregate_of(x, y, offsets)
    assert abs(aggregate[0]) < 0.2  # the two groups cancel out in the aggregate
    fit = fit_user_style(
        x, y, offsets, users, 40, aggregate, features=("length", "headers"),
        aggregate_covariance=covariance,
    )  # fmt: skip
    assert fit.personal and fit.held_out is not None
    assert fit.held_out.gain > 2 * fit.held_out.se > 0
    heavy = fit.coefficients[:20, 0]
    assert (np.sign(heavy) == np.sign(taste[:20])).all()
    assert fit.distinct[:20, 0].all()  # every heavy voter's length taste is told apart
    assert not fit.distinct[:, 1].any()  # and no one's taste for headers, which is nil
    sparse = fit.coefficients[20:, 0] - aggregate[0]
    # a sparse user moves from the aggregate by far less than a heavy one, and by far
    # less than their true taste (1 nat away)
    assert np.abs(sparse).mean() < 0.4 * np.abs(heavy - aggregate[0]).mean()
    assert np.abs(sparse).max() < 0.75
    assert not fit.distinct[20:].any()
    # the learnt prior sd is near the spread of the tastes (1 nat) on the length axis
    assert 0.4 < fit.prior_sd < 2.0
    assert (fit.lower <= fit.coefficients).all() and (fit.coefficients <= fit.upper).all()
    assert fit.n_battles.tolist() == votes


def test_no_one_differs_falls_back_to_the_aggregate() -> None:
    votes = [120] * 30
    x, y, offsets, users = taste_arena(votes, [0.5] * 30, seed=2)
    aggregate, _ = aggregate_of(x, y, offsets)
    fit = fit_user_style(x, y, offsets, users, 30, aggregate)
    assert not fit.personal
    assert fit.coefficients == pytest.approx(np.tile(aggregate, (30, 1)))
    assert not fit.distinct.any()
    assert fit.alpha > 20  # a departure sd under 0.22 nats per unit


def test_fixed_alpha_skips_the_search_and_keeps_per_user() -> None:
    x, y, offsets, users = taste_arena([50, 50], [1.0, -1.0], seed=3)
    fit = fit_user_style(x, y, offsets, users, 2, np.zeros(2), alpha=1.0)
    assert fit.personal and fit.held_out is None and fit.alpha == 1.0


def test_posterior_mode_is_the_penalised_optimum() -> None:
    x, y, offsets, users = taste_arena([60], [0.7], seed=4)
    mu, alpha = np.array([0.2, -0.1]), 3.0
    beta, covariance = fit_user_style_posterior(x, y, offsets, users, 1, mu, alpha)

    def objective(b: np.ndarray) -> float:
        return float(style_log_loss(offsets, x, b, y).sum() + alpha / 2 * ((b - mu) ** 2).sum())

    def gradient(b: np.ndarray) -> np.ndarray:
        p = style_win_probability(offsets, x, b)
        return x.T @ (p - y) + alpha * (b - mu)

    assert check_grad(objective, gradient, beta[0]) < 1e-5
    assert np.linalg.norm(gradient(beta[0])) < 1e-6
    p = style_win_probability(offsets, x, beta[0])
    hessian = (x * (p * (1 - p))[:, None]).T @ x + alpha * np.eye(2)
    assert covariance[0] == pytest.approx(np.linalg.inv(hessian), rel=1e-6)


def test_a_user_without_votes_keeps_the_prior() -> None:
    x, y, offsets, users = taste_arena([40], [1.0], seed=5)
    mu = np.array([0.3, 0.0])
    beta, covariance = fit_user_style_posterior(x, y, offsets, users, 2, mu, 4.0)
    assert beta[1] == pytest.approx(mu)
    assert covariance[1] == pytest.approx(np.eye(2) / 4.0)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_swapping_a_and_b_changes_nothing(seed: int) -> None:
    x, y, offsets, users = taste_arena([30, 10], [0.8, -0.5], seed=seed)
    mu = np.array([0.1, 0.0])
    straight, _ = fit_user_style_posterior(x, y, offsets, users, 2, mu, 2.0)
    swapped, _ = fit_user_style_posterior(-x, 1 - y, -offsets, users, 2, mu, 2.0)
    assert swapped == pytest.approx(straight, abs=1e-7)


@pytest.mark.parametrize("method", ["cv", "evidence", "later"])
def test_every_way_of_learning_alpha_sees_the_spread(method: StyleAlphaMethod) -> None:
    x, y, offsets, users = taste_arena([200] * 16, [1.0, -1.0] * 8, seed=6)
    earlier = np.tile(np.arange(200) < 100, 16)  # each user's first 100 votes
    alpha, gain = user_style_alpha(
        x, y, offsets, users, 16, np.zeros(2), method=method, earlier=earlier
    )
    assert alpha < 10  # a departure sd above 0.3 nats per unit
    assert gain.n_votes == (1600 if method == "later" else y.size) and gain.gain > 0


def test_later_votes_judge_the_fit_of_the_earlier_ones() -> None:
    # tastes fade between a user's earlier and later votes: what the first votes say of
    # the next is wrong, so "later" shrinks to the aggregate where "cv" does not
    x, y, offsets, users = taste_arena([200] * 16, [1.5, -1.5] * 8, seed=9)
    earlier = np.tile(np.arange(200) < 100, 16)
    faded = taste_arena([200] * 16, [0.0] * 16, seed=9)[1]
    y = np.where(earlier, y, faded)
    cv, _ = user_style_alpha(x, y, offsets, users, 16, np.zeros(2))
    later, gain = user_style_alpha(
        x, y, offsets, users, 16, np.zeros(2), method="later", earlier=earlier
    )
    assert later > 10 * cv and gain.gain < 2 * gain.se
    fit = fit_user_style(x, y, offsets, users, 16, np.zeros(2), method="later", earlier=earlier)
    assert not fit.personal


def test_bad_arguments_are_named() -> None:
    x, y, offsets, users = taste_arena([10], [0.0], seed=7)
    with pytest.raises(ValueError, match="'outcomes'"):
        fit_user_style(x, y[:-1], offsets, users, 1, np.zeros(2))
    with pytest.raises(ValueError, match="'aggregate'"):
        fit_user_style(x, y, offsets, users, 1, np.zeros(3))
    with pytest.raises(ValueError, match="'users'"):
        fit_user_style(x, y, offsets, users + 1, 1, np.zeros(2))
    with pytest.raises(ValueError, match="'method'"):
        fit_user_style(x, y, offsets, users, 1, np.zeros(2), method="bayes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'confidence'"):
        fit_user_style(x, y, offsets, users, 1, np.zeros(2), confidence=1.5)
    with pytest.raises(ValueError, match="'alpha'"):
        fit_user_style_posterior(x, y, offsets, users, 1, np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="'earlier'"):
        fit_user_style(x, y, offsets, users, 1, np.zeros(2), method="later")
    with pytest.raises(ValueError, match="'earlier'"):
        user_style_alpha(
            x, y, offsets, users, 1, np.zeros(2), method="later", earlier=np.ones(10, bool)
        )


def test_one_user_refitted_under_the_prior_of_all_users_matches_their_fit() -> None:
    votes = [150] * 12
    x, y, offsets, users = taste_arena(votes, [1.0, -1.0] * 6, seed=8)
    aggregate, covariance = aggregate_of(x, y, offsets)
    everyone = fit_user_style(x, y, offsets, users, 12, aggregate, aggregate_covariance=covariance)
    prior = StylePrior.from_dict(everyone.prior(covariance).to_dict())
    assert prior.alpha == everyone.alpha and prior.personal == everyone.personal
    assert prior.covariance == pytest.approx(covariance)
    rows = users == 3
    one = style_under_prior(prior, x[rows], y[rows], offsets[rows])
    assert one.coefficients[0] == pytest.approx(everyone.coefficients[3], abs=1e-7)
    assert one.distinct[0].tolist() == everyone.distinct[3].tolist()
    assert one.held_out is None and one.n_battles.tolist() == [150]
    # a prior that fell back gives everyone's coefficients, told apart from no one
    fallen = StylePrior(prior.features, prior.aggregate, covariance, prior.alpha, False)
    same = style_under_prior(fallen, x[rows], y[rows], offsets[rows])
    assert same.coefficients[0] == pytest.approx(aggregate)
    assert not same.personal and not same.distinct.any()


def test_taste_strengths_move_long_answering_models_for_who_likes_them() -> None:
    theta = np.array([0.2, 0.0, -0.2])
    typical = np.array([[1.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])  # model 0 answers longest
    likes_long, likes_short = np.array([0.5, 0.0]), np.array([-0.5, 0.0])
    both = taste_strengths(theta, typical, np.stack([likes_long, likes_short]))
    assert both.shape == (2, 3) and both.sum(axis=1) == pytest.approx([0.0, 0.0])
    assert both[0] == pytest.approx([0.7, 0.0, -0.7])
    assert both[1] == pytest.approx([-0.3, 0.0, 0.3])  # the short answerer now leads
    assert taste_strengths(theta, typical, likes_long) == pytest.approx(both[0])


def test_earlier_votes_are_each_users_first_half() -> None:
    users = np.array([0, 1, 0, 0, 1, 2, 0, 1, 1, 1])
    assert earlier_votes(users, 3).tolist() == [
        True, True, True, False, True, True, False, True, False, False,
    ]  # fmt: skip


def test_a_prior_keeps_the_models_typical_answers_by_name() -> None:
    typical = np.array([[0.5, 0.0], [-0.5, 0.1]])
    prior = StylePrior(
        ("length", "headers"), np.zeros(2), np.eye(2), 2.0, True, "mixed", ("a", "b"), typical
    )
    again = StylePrior.from_dict(prior.to_dict())
    assert again.models == ("a", "b") and again.typical == pytest.approx(typical)
    assert again.typical_of(["b", "new", "a"]) == pytest.approx(
        np.array([[-0.5, 0.1], [0.0, 0.0], [0.5, 0.0]])
    )
    plain = StylePrior(("length",), np.zeros(1), np.eye(1), 2.0, True)
    assert plain.typical_of(["a"]).tolist() == [[0.0]]
    assert StylePrior.from_dict(plain.to_dict()).typical is None
