"""The live service's refits keep the fit's cap on a prompt's votes
(``service/pipeline/snapshot.py``'s ``refit_snapshot(repeat_cap=...)``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from data.repeated_prompts import with_repeated_prompts
from data.simulate import simulate
from service.pipeline.snapshot import refit_snapshot


@pytest.fixture(scope="module")
def battles() -> pd.DataFrame:
    sim = simulate(40, 20, 5, rng=1)
    return with_repeated_prompts(sim, n_bots=1, bot_votes=300, rng=1).battles


def test_a_refit_caps_the_public_boards_as_the_fit_did(battles: pd.DataFrame) -> None:
    previous: dict[str, Any] = {"min_battles": 10}
    every = refit_snapshot(battles, previous, rng=0, min_votes=1)
    capped = refit_snapshot(battles, previous, rng=0, min_votes=1, repeat_cap=50)
    assert every["leaderboards"]["bt"]["n_battles"] == len(battles)
    for method in ("bt", "elo"):
        assert capped["leaderboards"][method]["n_battles"] == len(battles) - 250
    assert capped["public"]["bt"]["n_battles"] == len(battles) - 250
    assert capped["n_battles"] == len(battles)  # the snapshot still counts every vote
    again = refit_snapshot(battles, previous, rng=0, min_votes=1, repeat_cap=50)
    assert again["leaderboards"]["bt"] == capped["leaderboards"]["bt"]  # seeded
    auto = refit_snapshot(battles, previous, rng=0, repeat_cap="auto")
    assert auto["leaderboards"]["bt"] == capped["leaderboards"]["bt"]  # auto: 50 here
