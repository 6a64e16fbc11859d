"""Tests for ``data/repeated_prompts.py``: a simulated arena with repeated prompts."""

from __future__ import annotations

import numpy as np
import pytest

from data.repeated_prompts import with_repeated_prompts
from data.simulate import simulate
from data.truth import Simulation
from ranking.repeats import prompt_codes


@pytest.fixture(scope="module")
def sim() -> Simulation:
    return simulate(40, 20, 6, rng=0)


def test_bot_and_popular_prompts_are_added_to_the_log_marked_and_in_time_order(
    sim: Simulation,
) -> None:
    arena = with_repeated_prompts(sim, n_bots=2, bot_votes=300, n_popular=1, popular_votes=100)
    b = arena.battles
    assert len(b) == len(sim.battles) + 700 and arena.repeated.sum() == 700
    assert b["tstamp"].is_monotonic_increasing
    assert set(b.columns) == set(sim.battles.columns)
    added = b[arena.repeated]
    assert added["user_id"].nunique() == 700  # one-shot voters
    assert set(added["winner"]) <= {"model_a", "model_b"}
    assert (added["model_a"] != added["model_b"]).all()
    # spelled several ways, one prompt each once normalised
    assert added["prompt"].nunique() > 3
    assert np.unique(prompt_codes(added["prompt"].to_numpy())).size == 3
    assert arena.bot_ratings.shape == (2, 6)
    np.testing.assert_allclose(arena.bot_ratings.mean(axis=1), 1000.0)
    original = b[~arena.repeated].reset_index(drop=True)
    assert original["battle_id"].tolist() == sim.battles["battle_id"].tolist()


def test_a_bot_prompts_votes_follow_its_own_taste(sim: Simulation) -> None:
    arena = with_repeated_prompts(sim, n_bots=1, bot_votes=4000, bot_sd=3.0, rng=1)
    added = arena.battles[arena.repeated]
    taste = arena.bot_ratings.iloc[0]
    best = taste.idxmax()
    shown = (added["model_a"] == best) | (added["model_b"] == best)
    won = ((added["model_a"] == best) & (added["winner"] == "model_a")) | (
        (added["model_b"] == best) & (added["winner"] == "model_b")
    )
    assert won[shown].mean() > 0.7


def test_the_same_seed_gives_the_same_log_and_bad_counts_are_refused(sim: Simulation) -> None:
    one = with_repeated_prompts(sim, bot_votes=50, rng=3).battles
    two = with_repeated_prompts(sim, bot_votes=50, rng=3).battles
    assert one.equals(two)
    with pytest.raises(ValueError, match="'bot_votes' must be an integer >= 0, not -1"):
        with_repeated_prompts(sim, bot_votes=-1)
    with pytest.raises(ValueError, match="'bot_sd'"):
        with_repeated_prompts(sim, bot_sd=float("nan"))
