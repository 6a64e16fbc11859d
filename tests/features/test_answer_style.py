"""Tests of features.answer_style: an answer's style measures and a vote's covariates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from features.answer_style import (
    ANSWER_STYLE_FEATURES,
    SCALINGS,
    answer_style,
    fit_style_control,
    style_differences,
)
from tests.style_arena import length_battles


def test_measures_of_a_known_answer() -> None:
    text = "## Plan\n\nIntro, with **bold** and __more__.\n\n- one\n* two\n1. three\n2) four\n"
    row = dict(zip(ANSWER_STYLE_FEATURES, answer_style([text])[0], strict=True))
    assert row["headers"] == 1
    assert row["lists"] == 4
    assert row["bold"] == 2
    # "#" x2, "Plan", "Intro", ",", "with", "*" x4, "bold", "and", "__more__" (one word
    # run), ".", "-", "one", "*", "two", "1", ".", "three", "2", ")", "four"
    assert row["length"] == 24


def test_fenced_code_is_not_markdown() -> None:
    code = "```\n# comment\n- item\n**x**\n```"
    row = answer_style([code])[0]
    assert row[1:].tolist() == [0.0, 0.0, 0.0]
    assert row[0] > 0  # the code still counts as length


def test_empty_and_missing_answers_are_zero() -> None:
    out = answer_style(["", None])  # type: ignore[list-item]
    assert out.shape == (2, len(ANSWER_STYLE_FEATURES))
    assert not out.any()


def test_a_hash_without_a_space_or_a_dash_in_a_sentence_is_not_markdown() -> None:
    row = answer_style(["#hashtag and a well-known fact - really"])[0]
    assert row[1:].tolist() == [0.0, 0.0, 0.0]


def test_default_scaling_reads_length_in_doublings() -> None:
    a = np.array([[15.0, 2.0, 0.0, 3.0]])
    b = np.array([[7.0, 0.0, 0.0, 3.0]])
    d = style_differences(a, b)[0]
    assert d[0] == pytest.approx(1.0)  # (1 + 15) / (1 + 7) = 2: one doubling
    assert d[1] == pytest.approx(2 / 3)
    assert d[2] == 0.0
    assert d[3] == 0.0


def test_scalings_do_not_depend_on_the_other_votes() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, (30, 4)).astype(float)
    b = rng.integers(0, 50, (30, 4)).astype(float)
    for scaling in SCALINGS:
        whole = style_differences(a, b, scaling=scaling)
        part = style_differences(a[:7], b[:7], scaling=scaling)
        np.testing.assert_array_equal(whole[:7], part)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 10_000), min_size=8, max_size=8),
    st.sampled_from(SCALINGS),
)
def test_swapping_the_answers_flips_the_sign(counts: list[int], scaling: str) -> None:
    a = np.array([counts[:4]], dtype=float)
    b = np.array([counts[4:]], dtype=float)
    np.testing.assert_allclose(
        style_differences(a, b, scaling=scaling),  # type: ignore[arg-type]
        -style_differences(b, a, scaling=scaling),  # type: ignore[arg-type]
    )
    assert not style_differences(a, a, scaling=scaling).any()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (np.zeros((2, 3)), np.zeros((2, 3)), "style_a"),
        (np.zeros((2, 4)), np.zeros((3, 4)), "style_b"),
        (np.full((1, 4), -1.0), np.zeros((1, 4)), "style_a"),
        (np.zeros((1, 4)), np.full((1, 4), np.nan), "style_b"),
    ],
)
def test_bad_arrays_name_the_argument(a: np.ndarray, b: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        style_differences(a, b)


def test_an_unknown_scaling_is_named() -> None:
    with pytest.raises(ValueError, match="'zscore'"):
        style_differences(np.zeros((1, 4)), np.zeros((1, 4)), scaling="zscore")  # type: ignore[arg-type]


def test_fit_style_control_of_a_battle_frame() -> None:
    battles = length_battles()
    result = fit_style_control(battles, min_votes=0)
    assert result.raw.models[0].model == "long"
    assert abs(result.board["long"].rating - result.board["mid"].rating) < 40
    length = result.coefficients[0]
    assert length.feature == "length" and length.coefficient > 50
    assert result.scaling == "mixed"


def test_fit_style_control_fits_only_the_votes_with_both_answers() -> None:
    battles = length_battles(300)
    battles.loc[:99, "answer_b"] = None
    result = fit_style_control(battles, min_votes=0)
    assert result.board.n_battles == 200 and result.raw.n_battles == 200
    with pytest.raises(ValueError, match="no vote has both"):
        fit_style_control(battles.drop(columns="answer_a"))
