"""Per-user fits: vectorised equals one-at-a-time, and shrinkage helps sparse users."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.agreement import spearman_per_row
from ranking.bt import fit_bt
from ranking.elo import online_elo
from ranking.pairwise import to_elo_scale
from ranking.shrinkage import learn_alpha
from ranking.users import fit_user_ratings
from tests.conftest import simulate_users


def test_plain_per_user_fit_equals_one_fit_per_user() -> None:
    data, users, _, _ = simulate_users(12, 40, 6, seed=1)
    for method in ("bt", "elo"):
        fitted = fit_user_ratings(data, users, 12, method=method, shrinkage="none")
        for u in range(12):
            rows = users == u
            if method == "bt":
                alone = to_elo_scale(fit_bt(6, data.matchups[rows], data.outcomes[rows]))
            else:
                alone = online_elo(6, data.matchups[rows], data.outcomes[rows])
            assert fitted.ratings[u] == pytest.approx(alone, abs=1e-3)
        assert fitted.battles[3].sum() == 2 * np.sum(users == 3)
        assert fitted.n_battles.tolist() == np.bincount(users, minlength=12).tolist()


@pytest.mark.parametrize("method", ["cv", "evidence"])
def test_learnt_prior_recovers_the_deviation_scale(method: str) -> None:
    data, users, truth, population = simulate_users(300, 80, 8, seed=2, deviation=0.6)
    mu = np.broadcast_to(population - population.mean(), (300, 8))
    alpha = learn_alpha(8, data.matchups, data.outcomes, users, 300, mu, method=method)
    assert 1 / np.sqrt(alpha) == pytest.approx(0.6, rel=0.25)


def test_no_heterogeneity_means_strong_shrinkage() -> None:
    data, users, _, population = simulate_users(200, 40, 6, seed=3, deviation=0.0)
    alpha = learn_alpha(6, data.matchups, data.outcomes, users, 200, population - population.mean())
    assert alpha > 20  # a deviation sd under 0.22 nats (39 Elo points)


def test_shrinkage_beats_plain_and_aggregate_for_sparse_users() -> None:
    data, users, truth, _ = simulate_users(300, 30, 10, seed=0, deviation=0.7, tie_share=0.2)
    plain = fit_user_ratings(data, users, 300, shrinkage="none")
    shrunk = fit_user_ratings(data, users, 300)
    aggregate = shrunk.prior[0]
    rho_plain = np.nanmean(spearman_per_row(plain.ratings, truth))
    rho_shrunk = np.nanmean(spearman_per_row(shrunk.ratings, truth))
    rho_aggregate = np.nanmean(spearman_per_row(np.tile(aggregate, (300, 1)), truth))
    assert rho_shrunk > rho_plain + 0.05
    assert rho_shrunk > rho_aggregate + 0.02
    assert shrunk.prior_sd is not None and 30 < shrunk.prior_sd < 300


def test_intervals_and_unseen_models() -> None:
    data, users, _, _ = simulate_users(30, 10, 12, seed=5)
    shrunk = fit_user_ratings(data, users, 30)
    assert np.all(shrunk.lower <= shrunk.ratings) and np.all(shrunk.ratings <= shrunk.upper)
    unseen = ~shrunk.seen
    assert unseen.any()
    # a model a user never saw keeps the prior (the aggregate), with the prior's width
    assert shrunk.ratings[unseen] == pytest.approx(shrunk.prior[unseen])
    width = (shrunk.upper - shrunk.lower)[unseen]
    assert width == pytest.approx(np.full(width.shape, width[0]))
    assert np.all((shrunk.upper - shrunk.lower)[shrunk.seen] < width[0])


def test_elo_shrinkage_starts_users_from_the_prior() -> None:
    data, users, _, _ = simulate_users(20, 15, 5, seed=6)
    prior = np.array([1100.0, 1050.0, 1000.0, 950.0, 900.0])
    elo = fit_user_ratings(data, users, 20, method="elo", prior=prior)
    for u in range(20):
        if not elo.seen[u].all():
            assert elo.ratings[u][~elo.seen[u]] == pytest.approx(prior[~elo.seen[u]])
    assert not np.allclose(elo.ratings, prior)


def test_bad_arguments() -> None:
    data, users, _, _ = simulate_users(5, 10, 4, seed=7)
    with pytest.raises(ValueError, match="'shrinkage'"):
        fit_user_ratings(data, users, 5, shrinkage="lots")  # type: ignore[arg-type]


def test_expected_user_ratings_move_from_the_prior_toward_the_preferences() -> None:
    from ranking.users import expected_user_ratings

    preference = np.array([[1100.0, 1000.0, 900.0]])
    share = np.ones((3, 3)) - np.eye(3)
    share /= share.sum()
    prior = np.full(3, 1000.0)
    gaps = [
        expected_user_ratings(preference, [n], share, prior=prior, alpha=2.0)[0, 0] - 1000.0
        for n in (0, 10, 100, 100_000)
    ]
    assert gaps[0] == pytest.approx(0.0, abs=1e-6)
    assert 0.0 < gaps[1] < gaps[2] < gaps[3]
    assert gaps[3] == pytest.approx(100.0, abs=0.5)  # many votes: the preferences themselves
