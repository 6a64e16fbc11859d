"""One odds computation behind every number a person reads of a predicted board (issue 32,
item 5): the next battle quotes the odds the recommend rows show."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from features.prediction import Prediction
from service.live.next_battle import next_battle_document


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), k=st.integers(2, 12))
def test_the_next_battle_quotes_the_boards_odds(seed: int, k: int) -> None:
    """Before, ``plb recommend`` said quill 16% / kestrel 15% and ``plb next-battle`` on
    the same queries 15% / 16%: two draws of the same posterior."""
    rng = np.random.default_rng(seed)
    ratings = rng.normal(1000.0, 30.0, k)
    half = rng.uniform(20.0, 80.0, k)
    prediction = Prediction(
        "predicted",
        np.asarray(["you"], dtype=object),
        tuple(f"model-{j}" for j in range(k)),
        ratings[None, :],
        (ratings - half)[None, :],
        (ratings + half)[None, :],
    )
    rows = prediction.ranking()
    document = next_battle_document({"models": rows, "confidence": 0.95, "source": "predicted"})
    shown = {r["model"]: r["p_best"] for r in rows}
    assert document["p_best_a"] == shown[document["model_a"]]
    assert document["p_best_b"] == shown[document["model_b"]]


def test_a_board_without_odds_gets_the_posteriors() -> None:
    rows = [
        {"model": "a", "rating": 1010.0, "lower": 990.0, "upper": 1030.0},
        {"model": "b", "rating": 1000.0, "lower": 980.0, "upper": 1020.0},
    ]
    document = next_battle_document({"models": rows})
    assert 0.5 < document["p_best_a"] < 1.0
    assert document["p_best_a"] + document["p_best_b"] == pytest.approx(1.0)
