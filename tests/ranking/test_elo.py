"""Online Elo against FastChat's compute_elo, written out literally here."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from ranking.elo import online_elo, online_elo_grouped
from tests.conftest import simulate_votes


def fastchat_compute_elo(rows: list[tuple[str, str, str]], k: float = 4) -> dict[str, float]:
    """FastChat's ``compute_elo`` (elo_analysis.py), minus pandas."""
    scale, base, init = 400, 10, 1000
    rating: dict[str, float] = defaultdict(lambda: init)
    for model_a, model_b, winner in rows:
        ra, rb = rating[model_a], rating[model_b]
        ea = 1 / (1 + base ** ((rb - ra) / scale))
        eb = 1 / (1 + base ** ((ra - rb) / scale))
        if winner == "model_a":
            sa = 1.0
        elif winner == "model_b":
            sa = 0.0
        else:
            sa = 0.5
        rating[model_a] += k * (sa - ea)
        rating[model_b] += k * (1 - sa - eb)
    return dict(rating)


def test_two_votes_by_hand() -> None:
    # First vote: equal ratings, a wins, +-2. Second: b (998) beats a (1002).
    ratings = online_elo(2, np.array([[0, 1], [1, 0]]), np.array([1.0, 1.0]))
    expected_shift = 4 * (1 - 1 / (1 + 10 ** ((1002 - 998) / 400)))
    assert ratings[0] == pytest.approx(1002 - expected_shift)
    assert ratings[1] == pytest.approx(998 + expected_shift)


def test_matches_fastchat_compute_elo() -> None:
    data, _ = simulate_votes(6, 2000, seed=7)
    winner = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}
    rows = [
        (data.models[a], data.models[b], winner[y])
        for (a, b), y in zip(data.matchups, data.outcomes, strict=True)
    ]
    reference = fastchat_compute_elo(rows)
    ours = online_elo(6, data.matchups, data.outcomes)
    assert ours == pytest.approx([reference[m] for m in data.models], abs=1e-9)


def test_ratings_average_the_initial_value() -> None:
    data, _ = simulate_votes(9, 500, seed=8)
    assert online_elo(9, data.matchups, data.outcomes).mean() == pytest.approx(1000.0)


def test_order_matters() -> None:
    m = np.array([[0, 1], [0, 1], [1, 0]])
    y = np.array([1.0, 1.0, 1.0])
    forward = online_elo(2, m, y)
    backward = online_elo(2, m[::-1], y[::-1])
    assert not np.allclose(forward, backward)


def test_grouped_equals_one_run_per_group() -> None:
    parts = [simulate_votes(5, n, seed=20 + n)[0] for n in (50, 120, 7)]
    groups = np.concatenate([np.full(len(p.outcomes), g) for g, p in enumerate(parts)])
    rank_in_group = np.concatenate([np.arange(len(p.outcomes)) for p in parts])
    matchups = np.concatenate([p.matchups for p in parts])
    outcomes = np.concatenate([p.outcomes for p in parts])
    # Interleave the groups at random while keeping each group's own order.
    mixed = np.lexsort((np.random.default_rng(2).random(len(groups)), rank_in_group))
    grouped = online_elo_grouped(5, matchups[mixed], outcomes[mixed], groups[mixed], 4)
    for g, p in enumerate(parts):
        assert grouped[g] == pytest.approx(online_elo(5, p.matchups, p.outcomes), abs=1e-9)
    assert grouped[3] == pytest.approx(np.full(5, 1000.0))


@pytest.mark.parametrize("n_votes", [1, 99, 100, 250])
def test_grouped_tells_its_steps_about_a_hundred_times(n_votes: int) -> None:
    data, _ = simulate_votes(4, n_votes, seed=n_votes)
    groups = np.arange(n_votes) % 2  # two groups: ceil(n / 2) steps
    steps: list[int] = []
    told = online_elo_grouped(4, data.matchups, data.outcomes, groups, 2, advance=steps.append)
    plain = online_elo_grouped(4, data.matchups, data.outcomes, groups, 2)
    np.testing.assert_array_equal(told, plain)
    assert sum(steps) == -(-n_votes // 2)
    assert all(s > 0 for s in steps) and len(steps) <= 100


def test_grouped_initial_ratings_per_model() -> None:
    initial = np.array([1000.0, 1100.0, 900.0])
    ratings = online_elo_grouped(
        3, np.array([[0, 1], [1, 2]]), np.array([1.0, 1.0]), np.array([0, 1]), 2, initial=initial
    )
    # group 0: model 0 (1000) beats model 1 (1100); group 1: model 1 beats model 2 (900)
    up = 4 * (1 - 1 / (1 + 10 ** (100 / 400)))
    assert ratings[0] == pytest.approx([1000 + up, 1100 - up, 900])
    down = 4 * (1 - 1 / (1 + 10 ** (-200 / 400)))
    assert ratings[1] == pytest.approx([1000, 1100 + down, 900 - down])


def test_expected_online_elo_follows_the_average_of_simulated_runs() -> None:
    from ranking.elo import expected_online_elo

    rng = np.random.default_rng(0)
    n_users, k, n = 300, 4, 40
    preference = rng.normal(1000.0, 120.0, (n_users, k))
    share = np.ones((k, k)) - np.eye(k)
    share /= share.sum()
    expected = expected_online_elo(preference, np.full(n_users, n), share)
    runs = []
    for seed in range(20):  # the mean of many realised runs
        draw = np.random.default_rng(seed)
        users = np.repeat(np.arange(n_users), n)
        a = draw.integers(0, k, users.size)
        b = (a + draw.integers(1, k, users.size)) % k
        p = 1.0 / (1.0 + 10.0 ** ((preference[users, b] - preference[users, a]) / 400.0))
        y = (draw.random(users.size) < p).astype(float)
        runs.append(online_elo_grouped(k, np.stack([a, b], axis=1), y, users, n_users))
    mean_run = np.mean(runs, axis=0)  # still noisy: a run's sd is ~9 points, 20 runs' ~2
    assert np.corrcoef(expected.ravel(), mean_run.ravel())[0, 1] > 0.9
    assert abs(float(np.mean(np.abs(expected - 1000.0) - np.abs(mean_run - 1000.0)))) < 1.0


def test_expected_online_elo_moves_with_the_number_of_votes() -> None:
    from ranking.elo import expected_online_elo

    preference = np.array([[1100.0, 900.0]] * 3)
    share = np.array([[0.0, 0.5], [0.5, 0.0]])
    ratings = expected_online_elo(preference, [0, 10, 1000], share, initial=1000.0)
    assert ratings[0].tolist() == [1000.0, 1000.0]
    assert 1000.0 < ratings[1, 0] < ratings[2, 0]
    assert ratings[:, 0] + ratings[:, 1] == pytest.approx(2000.0)  # zero-sum updates
    assert ratings[2, 0] - ratings[2, 1] == pytest.approx(200.0, abs=5.0)  # it converges
