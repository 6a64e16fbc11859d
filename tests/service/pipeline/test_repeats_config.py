"""Tests for the repeated-prompt cap of ``service/pipeline/`` (``FitConfig.repeat_cap``,
``steps.cap_repeats`` and ``steps.repeats_document``)."""

from __future__ import annotations

import pytest

from data.repeated_prompts import with_repeated_prompts
from data.simulate import simulate
from ranking.io.frames import pairwise_from_battles
from service.pipeline.config import FitConfig
from service.pipeline.steps import cap_repeats, fit_aggregates, repeats_document


@pytest.mark.parametrize("cap", [0, -1, True, 2.5, "some"])
def test_a_bad_repeat_cap_is_refused_naming_it(cap: object) -> None:
    with pytest.raises(ValueError, match=f"'repeat_cap' must be .*not {cap!r}"):
        FitConfig(repeat_cap=cap)  # type: ignore[arg-type]


def test_the_recorded_cap_is_read_back_and_defaults_to_auto() -> None:
    assert FitConfig.recorded({}).repeat_cap == "auto"
    assert FitConfig.recorded({"repeats": {"option": 30}}).repeat_cap == 30
    assert FitConfig.recorded({"repeats": {"option": None}}).repeat_cap is None
    assert FitConfig.recorded({"repeats": None}).repeat_cap == "auto"  # the Dask fit's


def test_the_public_boards_stand_on_the_capped_votes_and_the_document_says_how_far() -> None:
    arena = with_repeated_prompts(simulate(40, 20, 5, rng=2), n_bots=1, bot_votes=300, rng=2)
    battles = arena.battles
    data = pairwise_from_battles(battles)
    config = FitConfig(repeat_cap=20, seed=4)
    public, effect = cap_repeats(battles, data, config)
    assert effect is not None and effect.n_repeated == 1
    assert public.outcomes.size == len(battles) - 280
    again, _ = cap_repeats(battles, data, config)  # seeded: the same votes kept
    assert (again.matchups == public.matchups).all()
    boards = fit_aggregates(public, rng=0)
    document = repeats_document(config, effect, data, boards)
    assert document["option"] == 20 and document["checked"] and document["n_touched"] == 300
    assert document["shift"]["largest_move"] > 0
    off = FitConfig(repeat_cap=None)
    assert cap_repeats(battles, data, off) == (data, None)
    assert repeats_document(off, None, data, boards) == {"option": None, "checked": False}
