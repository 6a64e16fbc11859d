"""Boards over time: one board a period, and drift flags on simulated arenas."""

from __future__ import annotations

import numpy as np
import pytest

from ranking.history import fit_history, holm_adjust, read_history
from ranking.types import PairwiseData

START = 1.7e9  # 2023-11-14
DAYS = 120


def arena(
    seed: int, *, drift: float = 0.0, n_models: int = 8, n_votes: int = 4000
) -> tuple[PairwiseData, np.ndarray]:
    """Votes over ``DAYS`` days; model ``m0``'s strength moves by ``drift`` (logits)
    halfway."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(START, START + DAYS * 86_400, n_votes))
    strength = np.tile(rng.normal(0.0, 1.0, n_models), (n_votes, 1))
    strength[t >= START + DAYS * 86_400 / 2, 0] += drift
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    rows = np.arange(n_votes)
    p = 1.0 / (1.0 + np.exp(strength[rows, b] - strength[rows, a]))
    outcomes = (rng.random(n_votes) < p).astype(float)
    models = tuple(f"m{i}" for i in range(n_models))
    return PairwiseData(models, np.stack([a, b], axis=1), outcomes, np.ones(n_votes)), t


def test_flag_fires_for_the_model_that_changed() -> None:
    data, t = arena(5, drift=1.0)
    history = fit_history(data, t, unit=2)
    assert history.drifting == ("m0",)
    (test,) = [x for x in history.tests if x.flagged]
    assert test.change > 100  # 1 logit is 174 points
    assert test.p_adjusted <= 0.05


def test_a_fall_is_flagged_too() -> None:
    data, t = arena(6, drift=-1.0)
    history = fit_history(data, t, unit=2)
    assert "m0" in history.drifting
    assert min(x.change for x in history.tests if x.model == "m0") < -100


def test_stable_arenas_raise_few_false_alarms() -> None:
    alarms = sum(len(fit_history(*arena(100 + seed)).drifting) for seed in range(8))
    assert alarms <= 1  # the family-wise rate is 5% an arena


def test_periods_by_month_hold_every_dated_vote() -> None:
    data, t = arena(1)
    t = t.copy()
    t[:10] = np.nan
    history = fit_history(data, t, unit="month")
    assert history.unit == "month"
    assert [p.label for p in history.periods] == [
        "2023-11",
        "2023-12",
        "2024-01",
        "2024-02",
        "2024-03",
    ]
    assert sum(p.board.n_battles for p in history.periods) == history.n_battles == 3990
    assert history.n_undated == 10
    for before, after in zip(history.periods, history.periods[1:], strict=False):
        assert before.end == after.start
    # tests between consecutive periods only, models ranked in both
    pairs = {(x.before, x.after) for x in history.tests}
    assert pairs == {
        ("2023-11", "2023-12"),
        ("2023-12", "2024-01"),
        ("2024-01", "2024-02"),
        ("2024-02", "2024-03"),
    }


def test_a_few_vote_model_is_provisional_not_tested() -> None:
    data, t = arena(2, n_votes=1200)
    history = fit_history(data, t, unit=3, min_votes=400)
    assert all(not p.board.models for p in history.periods)
    assert history.tests == ()


def test_round_trip() -> None:
    data, t = arena(5, drift=1.0)
    history = fit_history(data, t, unit=2)
    document = history.to_dict()
    again = read_history(document).to_dict()  # ranked rows only, as Leaderboard.from_dict
    assert again["drift"] == document["drift"]
    for read, written in zip(again["periods"], document["periods"], strict=True):
        assert read["board"]["models"] == written["board"]["models"]
        assert read["label"] == written["label"] and read["end"] == written["end"]
    assert read_history(document).drifting == ("m0",)


def test_holm_known_answer() -> None:
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([]).size == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [({"level": 1.5}, "'level'"), ({"min_votes": 0}, "'min_votes'"), ({"unit": "year"}, "'unit'")],
)
def test_bad_arguments_are_named(options: dict, message: str) -> None:
    data, t = arena(4, n_votes=200)
    with pytest.raises(ValueError, match=message):
        fit_history(data, t, **options)


def test_stamps_must_match_the_votes() -> None:
    data, t = arena(4, n_votes=200)
    with pytest.raises(ValueError, match="'stamps'"):
        fit_history(data, t[:-1])
    with pytest.raises(ValueError, match="no timestamp"):
        fit_history(data, np.full(200, np.nan))
