"""Tests for ``ranking/io/repeat_codes.py``: a frame's prompts as codes, the cap applied."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from ranking.io.frames import pairwise_from_battles
from ranking.io.repeat_codes import battle_prompt_codes, cap_battles, thin_repeated


def _battles(prompts: Sequence[object], stamps: list[float] | None = None) -> pd.DataFrame:
    n = len(prompts)
    return pd.DataFrame(
        {
            "model_a": ["a", "b"] * (n // 2) + ["a"] * (n % 2),
            "model_b": ["b", "a"] * (n // 2) + ["b"] * (n % 2),
            "winner": ["model_a"] * n,
            "prompt": prompts,
            "tstamp": stamps if stamps is not None else np.arange(n, dtype=float),
        }
    )


def test_codes_follow_the_vote_order_and_the_normalised_text() -> None:
    frame = _battles(["Hi", "other", " hi ", None], stamps=[3.0, 1.0, 2.0, 0.0])
    # vote order: rows 3, 1, 2, 0 (by tstamp)
    np.testing.assert_array_equal(battle_prompt_codes(frame), [-1, 0, 1, 1])
    assert battle_prompt_codes(frame.drop(columns="prompt")) is None
    assert battle_prompt_codes(frame.assign(prompt=None)) is None


def test_thin_repeated_caps_the_frames_votes_or_leaves_them() -> None:
    frame = _battles(["hi"] * 120 + [f"q{i}" for i in range(30)])
    data = pairwise_from_battles(frame)
    thinned, effect = thin_repeated(frame, data, "auto", rng=1)
    assert effect is not None and effect.cap == 50 and effect.n_repeated == 1
    assert thinned.outcomes.size == 30 + 50
    weighted, _ = thin_repeated(frame, data, 60, mode="weight")
    assert weighted.outcomes.size == 150 and weighted.n_votes == pytest.approx(90.0)
    assert thin_repeated(frame, data, None) == (data, None)
    bare = frame.drop(columns="prompt")
    assert thin_repeated(bare, pairwise_from_battles(bare), "auto")[1] is None


def test_cap_battles_keeps_the_rows_of_the_votes_thin_repeated_keeps() -> None:
    prompts = ["hi"] * 120 + [f"q{i}" for i in range(30)]
    stamps = list(np.random.default_rng(0).permutation(150).astype(float))
    frame = _battles(prompts, stamps)
    kept, effect = cap_battles(frame, 40, rng=7)
    assert effect is not None and effect.n_touched == 120 and effect.weight_removed == 80
    assert len(kept) == 70 and (kept["prompt"] == "hi").sum() == 40
    thinned, _ = thin_repeated(frame, pairwise_from_battles(frame), 40, rng=7)
    np.testing.assert_array_equal(pairwise_from_battles(kept).matchups, thinned.matchups)
    assert cap_battles(frame, 200, rng=7)[0] is frame
    assert cap_battles(frame, None) == (frame, None)
