"""Tests for ``ranking/integrity/``: the daily vote cap and the anomalous-voter tests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.integrity.daily_cap import daily_cap_mask
from ranking.integrity.fdr import benjamini_hochberg
from ranking.integrity.report import FlaggedVoter
from ranking.integrity.voters import detect_anomalous_voters
from ranking.types import PairwiseData

DAY = 86_400.0
K = 8
STRENGTH = np.linspace(1.2, -1.2, K)  # model 0 best, model K-1 weakest


def _votes(
    rng: np.random.Generator, n: int, kind: str, target: int = K - 1
) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, K, n)
    b = (a + rng.integers(1, K, n)) % K
    if kind == "brigade":  # the target in every battle, on either side, always the winner
        other = (target + rng.integers(1, K, n)) % K
        first = rng.random(n) < 0.5
        pairs = np.stack([np.where(first, target, other), np.where(first, other, target)], 1)
        return pairs, first.astype(float)
    if kind == "random":
        return np.stack([a, b], axis=1), rng.integers(0, 2, n).astype(float)
    p = 1.0 / (1.0 + np.exp(-(STRENGTH[a] - STRENGTH[b])))
    y = (rng.random(n) < p).astype(float)
    y[rng.random(n) < 0.15] = 0.5
    return np.stack([a, b], axis=1), y


def _arena(seed: int = 0) -> tuple[PairwiseData, np.ndarray, tuple[str, ...], dict[str, int]]:
    """100 honest users (a few with only 3 votes), one random clicker, one brigader."""
    rng = np.random.default_rng(seed)
    parts, users, roles = [], [], {}
    counts = [3] * 10 + [40] * 90
    for u, n in enumerate(counts):
        parts.append(_votes(rng, n, "honest"))
        users.append(np.full(n, u))
    for role, n in (("random", 400), ("brigade", 60)):
        roles[role] = len(users)
        parts.append(_votes(rng, n, role))
        users.append(np.full(n, roles[role]))
    matchups = np.concatenate([m for m, _ in parts]).astype(np.intp)
    outcomes = np.concatenate([y for _, y in parts])
    data = PairwiseData(
        tuple(f"m{j}" for j in range(K)), matchups, outcomes, np.ones(len(outcomes))
    )
    names = tuple(f"u{u:03d}" for u in range(len(users)))
    return data, np.concatenate(users).astype(np.intp), names, roles


def test_random_clicker_and_brigader_flagged_honest_users_not() -> None:
    data, users, names, roles = _arena()
    report = detect_anomalous_voters(data, users, names)
    by_user = {f.user: f for f in report.flagged}
    assert set(by_user) == {roles["random"], roles["brigade"]}
    clicker, brigader = by_user[roles["random"]], by_user[roles["brigade"]]
    assert isinstance(clicker, FlaggedVoter) and clicker.test == "random"
    assert clicker.user_id == names[roles["random"]] and clicker.n_votes == 400
    assert abs(clicker.statistic) < 0.5 < clicker.expected and clicker.p_value < 1e-3
    assert brigader.test == "brigade" and brigader.model == f"m{K - 1}"
    assert brigader.statistic == 1.0 and brigader.expected < 0.4 and brigader.n_votes == 60
    assert brigader.p_value < 1e-10
    assert report.flagged_users.sum() == 2
    keep = report.vote_mask(users)
    assert not keep[users == roles["brigade"]].any() and keep[users < 100].all()


@pytest.mark.parametrize("seed", range(3))
def test_a_brigade_large_enough_to_bend_the_population_is_still_caught(seed: int) -> None:
    """40 brigaders with 40 votes each beside 60 honest users with 30, nearly half the
    votes: fitted with them, the population rates the weakest model near the top, and a
    test against that model alone finds none of them."""
    honest, brigaders = 60, 40
    rng = np.random.default_rng(seed)
    parts = [_votes(rng, 30, "honest") for _ in range(honest)]
    parts += [_votes(rng, 40, "brigade") for _ in range(brigaders)]
    users = np.concatenate([np.full(len(y), u) for u, (_, y) in enumerate(parts)])
    data = PairwiseData(
        tuple(f"m{j}" for j in range(K)),
        np.concatenate([m for m, _ in parts]).astype(np.intp),
        np.concatenate([y for _, y in parts]),
        np.ones(len(users)),
    )
    report = detect_anomalous_voters(data, users, [f"u{u}" for u in range(len(parts))])
    brigade = {f.user for f in report.flagged if f.test == "brigade"}
    assert brigade == set(range(honest, len(parts)))
    assert {f.model for f in report.flagged if f.test == "brigade"} == {f"m{K - 1}"}
    assert report.flagged_users[:honest].sum() <= 1


def _tastes(seed: int, heavy: int = 200) -> tuple[PairwiseData, np.ndarray, list[str], int, int]:
    """120 honest users whose tastes scatter around the crowd's (60 votes each), a coin
    flipper and an honest user with the crowd's order reversed (``heavy`` votes each)."""
    rng = np.random.default_rng(seed)
    tastes = [STRENGTH + rng.normal(0.0, 0.3, K) for _ in range(120)]
    counts = [60] * 120 + [heavy, heavy]
    parts = []
    for u, n in enumerate(counts):
        a = rng.integers(0, K, n)
        b = (a + rng.integers(1, K, n)) % K
        if u == 120:  # the coin flipper
            y = rng.integers(0, 2, n).astype(float)
        else:
            theta = -STRENGTH if u == 121 else tastes[u]
            y = (rng.random(n) < 1.0 / (1.0 + np.exp(theta[b] - theta[a]))).astype(float)
            y[rng.random(n) < 0.15] = 0.5
        parts.append((np.stack([a, b], axis=1), y))
    data = PairwiseData(
        tuple(f"m{j}" for j in range(K)),
        np.concatenate([m for m, _ in parts]).astype(np.intp),
        np.concatenate([y for _, y in parts]),
        np.ones(sum(counts)),
    )
    users = np.repeat(np.arange(len(counts)), counts).astype(np.intp)
    return data, users, [f"u{u}" for u in range(len(counts))], 120, 121


@pytest.mark.parametrize("seed", range(4))
def test_a_random_clicker_with_many_votes_is_caught(seed: int) -> None:
    data, users, names, clicker, _ = _tastes(seed)
    report = detect_anomalous_voters(data, users, names)
    flags = {f.user: f for f in report.flagged}
    assert clicker in flags and flags[clicker].test == "random"
    assert flags[clicker].p_value < 1e-4
    assert report.strength is not None and report.strength[clicker] < report.honest_strength[0]
    assert flags[clicker].strength == report.strength[clicker]


@pytest.mark.parametrize("seed", range(4))
def test_an_honest_user_with_a_reversed_taste_is_not_flagged(seed: int) -> None:
    data, users, names, _, reversed_taste = _tastes(seed)
    report = detect_anomalous_voters(data, users, names)
    assert not report.flagged_users[reversed_taste]
    assert not report.flagged_users[:120].any()
    # the crowd's order reversed: far from everyone, yet as self-consistent as anyone
    centre, spread = report.honest_slope
    gap = report.slope[reversed_taste] - centre
    assert gap > -2.0 * np.hypot(spread, report.slope_se[reversed_taste])
    # reversing every vote of everyone changes no user's test
    flipped = PairwiseData(data.models, data.matchups, 1.0 - data.outcomes, data.weights)
    again = detect_anomalous_voters(flipped, users, names)
    np.testing.assert_allclose(again.slope, report.slope, rtol=1e-6, atol=1e-8)


def test_bad_user_alpha_is_named() -> None:
    data, users, names, _ = _arena()
    with pytest.raises(ValueError, match="user_alpha"):
        detect_anomalous_voters(data, users, names, user_alpha=0.0)
    report = detect_anomalous_voters(data, users, names, user_alpha=3.0)
    assert report.user_alpha == 3.0


def test_honest_users_with_few_votes_are_never_flagged() -> None:
    rng = np.random.default_rng(5)
    parts = [_votes(rng, 5, "honest") for _ in range(300)]
    data = PairwiseData(
        tuple(f"m{j}" for j in range(K)),
        np.concatenate([m for m, _ in parts]).astype(np.intp),
        np.concatenate([y for _, y in parts]),
        np.ones(1500),
    )
    users = np.repeat(np.arange(300), 5).astype(np.intp)
    report = detect_anomalous_voters(data, users, [f"u{i}" for i in range(300)], min_votes=1)
    assert report.flagged == ()


def test_swapping_sides_with_the_outcome_flipped_changes_nothing() -> None:
    data, users, names, _ = _arena(1)
    rng = np.random.default_rng(2)
    swap = rng.random(len(users)) < 0.5
    matchups = np.where(swap[:, None], data.matchups[:, ::-1], data.matchups)
    outcomes = np.where(swap, 1.0 - data.outcomes, data.outcomes)
    swapped = PairwiseData(data.models, matchups, outcomes, data.weights)
    one = detect_anomalous_voters(data, users, names)
    two = detect_anomalous_voters(swapped, users, names)
    assert [(f.user, f.test, f.model) for f in one.flagged] == [
        (f.user, f.test, f.model) for f in two.flagged
    ]
    np.testing.assert_allclose(one.slope, two.slope, rtol=1e-6, atol=1e-8)
    for f, g in zip(one.flagged, two.flagged, strict=True):
        assert f.p_value == pytest.approx(g.p_value, rel=1e-4)


def test_votes_without_a_user_count_in_the_population_only() -> None:
    data, users, names, roles = _arena(3)
    users = users.copy()
    users[:60] = -1  # the first honest users' votes have no user
    report = detect_anomalous_voters(data, users, names)
    assert {f.user for f in report.flagged} == {roles["random"], roles["brigade"]}
    assert report.vote_mask(users)[:60].all()


def test_bad_arguments_are_named() -> None:
    data, users, names, _ = _arena()
    with pytest.raises(ValueError, match="level"):
        detect_anomalous_voters(data, users, names, level=1.5)
    with pytest.raises(ValueError, match="min_votes"):
        detect_anomalous_voters(data, users, names, min_votes=0)
    with pytest.raises(ValueError, match="users"):
        detect_anomalous_voters(data, users[:-1], names)
    with pytest.raises(ValueError, match="cap"):
        daily_cap_mask(users, np.zeros(len(users)), 0)


def test_cap_keeps_the_earliest_votes_of_each_user_and_day() -> None:
    # user 0: four votes on day 0 (out of order) and two on day 1; user 1: three on day 0
    users = np.array([0, 0, 0, 0, 1, 1, 1, 0, 0])
    t = np.array([30.0, 10.0, 20.0, 40.0, 5.0, 6.0, 7.0, DAY + 1, DAY + 2])
    np.testing.assert_array_equal(
        daily_cap_mask(users, t, 2), [False, True, True, False, True, True, False, True, True]
    )
    np.testing.assert_array_equal(daily_cap_mask(users, t, 10), np.ones(9, dtype=bool))


def test_cap_keeps_votes_without_user_or_time_and_splits_days_at_utc_midnight() -> None:
    users = np.array([-1, -1, 0, 0, 0, 0])
    t = np.array([1.0, 2.0, np.nan, np.nan, DAY - 1, DAY])  # 23:59:59 and 00:00:00 UTC
    np.testing.assert_array_equal(daily_cap_mask(users, t, 1), np.ones(6, dtype=bool))
    same = np.array([0, 0, 0])  # equal timestamps: the earlier row is kept
    np.testing.assert_array_equal(daily_cap_mask(same, np.full(3, 5.0), 2), [True, True, False])


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 60),
    cap=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_cap_property(n: int, cap: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    users = rng.integers(-1, 4, n)
    t = rng.uniform(0, 3 * DAY, n)
    keep = daily_cap_mask(users, t, cap)
    day = np.floor(t / DAY)
    for u in range(4):
        for d in range(3):
            rows = np.flatnonzero((users == u) & (day == d))
            kept = rows[keep[rows]]
            assert kept.size == min(cap, rows.size)
            if kept.size < rows.size:  # every kept vote is earlier than every dropped one
                assert t[kept].max() <= t[np.setdiff1d(rows, kept)].min()
    assert keep[users < 0].all()
    order = rng.permutation(n)  # the mask does not depend on the order of the rows
    np.testing.assert_array_equal(daily_cap_mask(users[order], t[order], cap), keep[order])


def test_benjamini_hochberg_known_answer() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.5, 0.001])
    # sorted 0.001, 0.01, 0.03, 0.04, 0.5 against 0.05 * i / 5: the first four pass
    np.testing.assert_array_equal(benjamini_hochberg(p, 0.05), [True, True, True, False, True])
    np.testing.assert_array_equal(benjamini_hochberg(p, 0.001), [False] * 5)
    assert benjamini_hochberg(np.array([]), 0.05).size == 0
