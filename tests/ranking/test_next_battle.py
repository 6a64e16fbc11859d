"""``ranking.next_battle``: the pair whose vote tells most about the best model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import expit
from scipy.stats import norm

from ranking.next_battle import TARGETS, Target, board_posterior, next_battle, pair_information
from ranking.odds import gaussian_draws, z_value
from ranking.pairwise import ELO_PER_NAT


def _entropy(p: np.ndarray) -> float:
    nz = p[p > 0]
    return float(-(nz * np.log2(nz)).sum())


def test_two_tied_top_models_beat_any_clearly_separated_pair() -> None:
    mean = np.array([-3.0, 1.0, -2.5, 1.0, -4.0, 0.2])
    choice = next_battle(mean, np.full(6, 0.05))
    assert {choice.model_a, choice.model_b} == {1, 3}
    # every pair with a model that is surely not the best tells less
    for a, b, bits in choice.ranked(len(choice.pairs)):
        if {a, b} != {1, 3}:
            assert bits < choice.information
    # and two surely-not-best models tell (almost) nothing
    bottom = {tuple(p): i for i, p in enumerate(choice.pairs)}[(0, 4)]
    assert choice.informations[bottom] < 1e-3


def test_a_known_best_leaves_little_to_learn() -> None:
    certain = next_battle(np.array([5.0, 0.0, -0.1, 0.1]), np.full(4, 0.01))
    assert certain.entropy < 1e-6 and certain.information < 1e-6
    assert certain.model_a == 0  # no pair tells anything: the two highest means
    assert certain.model_b == 3
    unsure = next_battle(np.zeros(4) + [0.0, 1e-3, 2e-3, 3e-3], np.full(4, 1.0))
    assert unsure.entropy > 1.9  # near log2(4) = 2 bits


def test_deterministic_and_model_a_is_the_higher_rated() -> None:
    rng = np.random.default_rng(3)
    mean, variance = rng.normal(0, 0.5, 9), rng.uniform(0.05, 0.5, 9)
    first, second = next_battle(mean, variance), next_battle(mean, variance)
    assert (first.model_a, first.model_b, first.information) == (
        second.model_a,
        second.model_b,
        second.information,
    )
    np.testing.assert_array_equal(first.informations, second.informations)
    assert mean[first.model_a] >= mean[first.model_b]
    assert first.information == pytest.approx(float(first.informations.max()))
    assert first.p_best.sum() == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 8), st.sampled_from(TARGETS))
def test_invariant_to_the_order_of_the_models(seed: int, k: int, target: Target) -> None:
    rng = np.random.default_rng(seed)
    mean, variance = rng.normal(0, 0.7, k), rng.uniform(0.02, 0.6, k)
    perm = rng.permutation(k)
    base = next_battle(mean, variance, target=target)
    shuffled = next_battle(mean[perm], variance[perm], target=target)
    assert (perm[shuffled.model_a], perm[shuffled.model_b]) == (base.model_a, base.model_b)
    assert shuffled.information == pytest.approx(base.information, abs=1e-12)
    np.testing.assert_allclose(shuffled.p_best, base.p_best[perm], atol=1e-12)


def test_information_is_the_expected_entropy_drop_of_p_best() -> None:
    """Bayes by reweighting the same draws: H(p_best) - E_y H(p_best | y), pair by pair."""
    mean = np.array([0.6, 0.4, 0.1, -0.5])  # already in the canonical order
    cov = np.array(
        [[0.3, 0.1, 0.0, 0.0], [0.1, 0.2, 0.05, 0.0], [0.0, 0.05, 0.25, 0.0], [0, 0, 0, 0.1]]
    )
    pairs, information, p_first, p_best = pair_information(mean, cov, draws=3000, seed=7)
    draws = gaussian_draws(mean, cov, 3000, 7)
    best = np.argmax(draws, axis=1)
    for (a, b), bits, p_a in zip(pairs, information, p_first, strict=True):
        win = 1.0 / (1.0 + np.exp(draws[:, b] - draws[:, a]))
        expected = 0.0
        for weight in (win, 1.0 - win):
            posterior = np.bincount(best, weights=weight, minlength=4) / weight.sum()
            expected += weight.mean() * _entropy(posterior)
        assert bits == pytest.approx(_entropy(p_best) - expected, abs=1e-9)
        assert p_a == pytest.approx(win.mean())


def test_ranking_information_sums_the_pairs_orders() -> None:
    """``target="ranking"``: sum over pairs (m, n) of I([draw_m > draw_n]; y), by hand."""
    mean, var = np.array([0.5, 0.2, 0.1, -0.4]), np.array([0.2, 0.3, 0.1, 0.4])
    pairs, information, _, _ = pair_information(mean, var, draws=2000, seed=3, target="ranking")
    draws = gaussian_draws(mean, np.diag(var), 2000, 3)

    def h(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, 1e-300, 1 - 1e-16)
        return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))

    for (a, b), bits in zip(pairs, information, strict=True):
        win = 1.0 / (1.0 + np.exp(draws[:, b] - draws[:, a]))
        total = 0.0
        for m, n in pairs:
            above = draws[:, m] > draws[:, n]
            p_o = above.mean()
            if 0 < p_o < 1:
                given_above = win[above].mean()
                given_below = win[~above].mean()
                within = p_o * h(given_above) + (1 - p_o) * h(given_below)
                total += max(float(h(np.array(win.mean())) - within), 0.0)
        assert bits == pytest.approx(total, abs=1e-9)


def test_ranking_target_spreads_votes_beyond_the_contenders() -> None:
    """Two models sure to be below the top but tied with each other: nothing about who is
    best, much about the ranking."""
    mean, var = np.array([3.0, 2.0, 0.0, 0.0]), np.array([0.05, 0.05, 0.3, 0.3])
    best = next_battle(mean, var, target="best")
    ranking = next_battle(mean, var, target="ranking")
    tied = {tuple(p): i for i, p in enumerate(best.pairs)}[(2, 3)]
    assert best.informations[tied] < 1e-3 < ranking.information
    assert (ranking.model_a, ranking.model_b) == (2, 3)


def test_two_models_against_quadrature() -> None:
    """With two models, I(best; y) is a one-dimensional integral over their difference."""
    mu, var = 0.3, 0.8
    sd = math.sqrt(2 * var)

    def h(p: float) -> float:
        return 0.0 if p <= 0 or p >= 1 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))

    def moment(lo: float, hi: float) -> float:
        f = lambda d: norm.pdf(d, mu, sd) * expit(d)  # noqa: E731
        return float(integrate.quad(f, lo, hi)[0])

    p_first_best = float(norm.sf(0, mu, sd))
    win_and_first_best = moment(0, np.inf)
    win = win_and_first_best + moment(-np.inf, 0)
    exact = h(win) - (
        p_first_best * h(win_and_first_best / p_first_best)
        + (1 - p_first_best) * h((win - win_and_first_best) / (1 - p_first_best))
    )
    choice = next_battle([mu, 0.0], [var, var], draws=200_000)
    assert choice.information == pytest.approx(exact, abs=2e-3)
    assert choice.p_a == pytest.approx(win, abs=2e-3)


def test_full_covariance_and_variances_agree_when_independent() -> None:
    mean, variance = np.array([0.2, 0.1, -0.3]), np.array([0.2, 0.3, 0.1])
    a, b = next_battle(mean, variance), next_battle(mean, np.diag(variance))
    assert (a.model_a, a.model_b, a.information) == (b.model_a, b.model_b, b.information)


@pytest.mark.parametrize(
    ("mean", "covariance", "named"),
    [
        ([0.0], [1.0], "mean"),
        ([[0.0, 1.0]], [1.0, 1.0], "mean"),
        ([0.0, np.nan], [1.0, 1.0], "mean"),
        ([0.0, 1.0], [1.0, 1.0, 1.0], "covariance"),
        ([0.0, 1.0], [1.0, -1.0], "covariance"),
        ([0.0, 1.0], [[1.0, 0.0]], "covariance"),
    ],
)
def test_bad_input_names_the_argument(mean: object, covariance: object, named: str) -> None:
    with pytest.raises(ValueError, match=f"'{named}'"):
        next_battle(mean, covariance)  # type: ignore[arg-type]


def test_draws_must_be_positive_and_the_target_known() -> None:
    with pytest.raises(ValueError, match="'draws'"):
        next_battle([0.0, 1.0], [1.0, 1.0], draws=0)
    with pytest.raises(ValueError, match="'target'"):
        next_battle([0.0, 1.0], [1.0, 1.0], target="worst")  # type: ignore[arg-type]


def test_board_posterior_reads_the_intervals() -> None:
    z = z_value(0.9)
    ratings = np.array([1100.0, 1000.0])
    half = np.array([z * 50.0, z * 20.0])
    mean, variance = board_posterior(ratings, ratings - half, ratings + half, 0.9)
    np.testing.assert_allclose(mean, [100.0 / ELO_PER_NAT, 0.0])
    np.testing.assert_allclose(variance, (np.array([50.0, 20.0]) / ELO_PER_NAT) ** 2)
    with pytest.raises(ValueError, match="'lower'"):
        board_posterior(ratings, ratings + 1.0, ratings + 2.0)
    with pytest.raises(ValueError, match="'confidence'"):
        board_posterior(ratings, ratings, ratings, 1.5)
    with pytest.raises(ValueError, match="one shape"):
        board_posterior(ratings, ratings[:1], ratings)


def test_the_pair_just_voted_on_is_not_asked_again() -> None:
    mean = np.array([-3.0, 1.0, -2.5, 1.0, -4.0, 0.6])
    plain = next_battle(mean, np.full(6, 0.05))
    assert {plain.model_a, plain.model_b} == {1, 3} and plain.skipped is None
    for avoid in ((1, 3), (3, 1)):
        again = next_battle(mean, np.full(6, 0.05), avoid=avoid)
        assert {again.model_a, again.model_b} != {1, 3}
        # the best other pair, and the skipped one said with its information
        (a, b, bits), *_ = [r for r in plain.ranked(len(plain.pairs)) if {r[0], r[1]} != {1, 3}]
        assert {again.model_a, again.model_b} == {a, b}
        assert again.information == pytest.approx(bits)
        assert again.skipped == (1, 3, pytest.approx(plain.information))
        assert again.p_best == pytest.approx(plain.p_best)  # same posterior, same odds


def test_avoiding_a_pair_that_is_not_the_best_changes_nothing() -> None:
    mean = np.array([-3.0, 1.0, -2.5, 1.0])
    plain = next_battle(mean, np.full(4, 0.05))
    other = next_battle(mean, np.full(4, 0.05), avoid=(0, 2))
    assert (other.model_a, other.model_b, other.skipped) == (plain.model_a, plain.model_b, None)


def test_with_two_models_the_only_pair_is_asked_again() -> None:
    choice = next_battle(np.array([0.0, 0.1]), np.full(2, 0.2), avoid=(0, 1))
    assert {choice.model_a, choice.model_b} == {0, 1} and choice.skipped is None


@pytest.mark.parametrize("avoid", [(0, 0), (0, 9), (-1, 1), (1,)])
def test_a_bad_avoid_names_the_argument(avoid: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="Argument 'avoid' must be two different model"):
        next_battle(np.zeros(3), np.ones(3), avoid=avoid)  # type: ignore[arg-type]
