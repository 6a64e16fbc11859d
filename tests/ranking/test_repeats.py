"""Tests for ``ranking/repeats.py``: prompts repeated too often, capped or down-weighted."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.bt import fit_bt
from ranking.pairwise import collapse
from ranking.repeats import (
    FLOOR,
    auto_cap,
    board_shift,
    cap_mask,
    normalise_prompt,
    prompt_codes,
    repeat_effect,
    repeat_weights,
    treat_repeats,
)
from ranking.types import PairwiseData

K = 6
STRENGTH = np.linspace(1.0, -1.0, K)  # model 0 best


def test_prompts_are_compared_stripped_case_folded_and_with_whitespace_collapsed() -> None:
    assert normalise_prompt("  Hi\n\tTHERE  ") == "hi there"
    codes = prompt_codes(
        ["hi there", "  HI   there\n", "Hello", None, float("nan"), "   ", "hello"]
    )
    np.testing.assert_array_equal(codes, [0, 0, 1, -1, -1, -1, 1])


def test_auto_cap_is_the_floor_on_distinct_prompts_and_never_fires_on_even_repeats() -> None:
    distinct = np.arange(1000)
    assert auto_cap(distinct) == FLOOR
    assert auto_cap(np.array([], dtype=np.intp)) == FLOOR
    # 13 prompts asked about 690 times each (LLMFAO's design): nothing is over the cap
    even = np.repeat(np.arange(13), np.arange(680, 693))
    cap = auto_cap(even)
    assert cap == int(np.ceil(10 * 686)) and np.bincount(even).max() < cap
    # one prompt 5,000 times among 2,000 distinct ones: the floor, which it exceeds
    spiked = np.concatenate([np.arange(2000), np.full(5000, 2000)])
    assert auto_cap(spiked) == FLOOR
    with pytest.raises(ValueError, match="'floor' must be an integer >= 1, not 0"):
        auto_cap(distinct, floor=0)
    with pytest.raises(ValueError, match="'ratio'"):
        auto_cap(distinct, ratio=0.5)


def test_a_cap_of_n_keeps_exactly_n_votes_of_each_prompt_over_it_the_same_for_a_seed() -> None:
    rng = np.random.default_rng(0)
    codes = np.concatenate([np.full(40, 0), np.full(7, 1), np.full(25, 2), [-1, -1], [3]])
    codes = codes[rng.permutation(codes.size)]
    keep = cap_mask(codes, 10, rng=5)
    kept = np.bincount(codes[keep & (codes >= 0)], minlength=4)
    np.testing.assert_array_equal(kept, [10, 7, 10, 1])
    assert keep[codes == -1].all()  # votes without a prompt are kept
    np.testing.assert_array_equal(cap_mask(codes, 10, rng=5), keep)
    assert not np.array_equal(cap_mask(codes, 10, rng=6), keep)
    assert cap_mask(codes, 40).all()
    with pytest.raises(ValueError, match="'cap' must be an integer >= 1, not 0"):
        cap_mask(codes, 0)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(-1, 5), min_size=1, max_size=80),
    st.integers(1, 12),
    st.integers(0, 2**16),
)
def test_the_cap_keeps_min_of_count_and_cap_of_every_prompt(
    codes: list[int], cap: int, seed: int
) -> None:
    arr = np.array(codes)
    keep = cap_mask(arr, cap, rng=seed)
    for code in set(codes):
        n = int((arr == code).sum())
        expected = n if code < 0 else min(n, cap)
        assert int(keep[arr == code].sum()) == expected


def test_down_weighting_gives_a_prompt_over_the_cap_the_weight_of_cap_votes() -> None:
    codes = np.array([0] * 40 + [1] * 5 + [-1])
    w = repeat_weights(codes, 10)
    np.testing.assert_allclose(w[codes == 0], 0.25)
    np.testing.assert_allclose(w[codes != 0], 1.0)
    assert w[codes == 0].sum() == pytest.approx(10.0)
    half = repeat_weights(codes, 10, power=0.5)
    assert half[codes == 0].sum() == pytest.approx(np.sqrt(10 * 40))
    with pytest.raises(ValueError, match="'power' must be in"):
        repeat_weights(codes, 10, power=0.0)


def _votes(rng: np.random.Generator, n: int, strength: np.ndarray) -> tuple[np.ndarray, ...]:
    a = rng.integers(0, K, n)
    b = (a + rng.integers(1, K, n)) % K
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(strength[b] - strength[a]))).astype(float)
    return np.stack([a, b], axis=1), y


def _arena(seed: int) -> tuple[PairwiseData, np.ndarray]:
    """3,000 votes on distinct prompts with the true strengths, and 6,000 votes of one
    prompt whose voters prefer the models in the reverse order."""
    rng = np.random.default_rng(seed)
    m1, y1 = _votes(rng, 3000, STRENGTH)
    m2, y2 = _votes(rng, 6000, -STRENGTH)
    matchups, outcomes = np.concatenate([m1, m2]), np.concatenate([y1, y2])
    order = rng.permutation(outcomes.size)
    codes = np.concatenate([np.arange(3000), np.full(6000, 3000)])[order]
    models = tuple(f"m{j}" for j in range(K))
    return PairwiseData(models, matchups[order], outcomes[order], np.ones(order.size)), codes


def _strengths(data: PairwiseData) -> np.ndarray:
    v = collapse(data)
    return fit_bt(v.n_models, v.matchups, v.outcomes, v.weights)


@pytest.mark.parametrize("mode", ["sample", "weight"])
def test_the_board_moves_toward_the_distinct_prompt_truth(mode: str) -> None:
    data, codes = _arena(1)
    raw = _strengths(data)
    assert np.corrcoef(raw, STRENGTH)[0, 1] < 0  # the repeated prompt sets the raw board
    treated, effect = treat_repeats(data, codes, auto_cap(codes), mode=mode, rng=0)  # type: ignore[arg-type]
    capped = _strengths(treated)
    assert list(np.argsort(-capped)) == list(range(K))
    assert np.abs(capped - STRENGTH).max() < 0.25
    assert effect.cap == FLOOR and effect.n_repeated == 1 and effect.n_touched == 6000
    assert effect.n_prompts == 3001 and effect.largest == 6000 and effect.n_votes == 9000
    assert effect.weight_removed == pytest.approx(6000 - FLOOR)
    if mode == "sample":
        assert treated.outcomes.size == 3000 + FLOOR
    else:
        assert treated.outcomes.size == 9000 and treated.n_votes == pytest.approx(3000 + FLOOR)


def test_nothing_over_the_cap_returns_the_votes_untouched() -> None:
    data, codes = _arena(2)
    treated, effect = treat_repeats(data, codes, 6000)
    assert treated is data
    assert effect.n_repeated == 0 and effect.n_touched == 0 and effect.weight_removed == 0.0
    assert effect.to_dict()["mode"] == "sample"


def test_treat_repeats_rejects_a_bad_mode_and_codes_of_the_wrong_length() -> None:
    data, codes = _arena(3)
    with pytest.raises(ValueError, match="'mode' must be 'sample' or 'weight', not 'drop'"):
        treat_repeats(data, codes, 10, mode="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'codes' must have one entry a vote"):
        treat_repeats(data, codes[:-1], 10)


def test_board_shift_measures_rank_agreement_and_the_largest_centred_move() -> None:
    before = {"a": 1100.0, "b": 1000.0, "c": 900.0}
    shifted = {m: r + 50.0 for m, r in before.items()}  # the whole board moved: no move
    same = board_shift(before, shifted)
    assert same.spearman == pytest.approx(1.0) and same.largest_move == pytest.approx(0.0)
    after = {"a": 950.0, "b": 1000.0, "c": 1050.0, "d": 1234.0}
    shift = board_shift(before, after)
    assert shift.spearman == pytest.approx(-1.0)
    assert shift.model in ("a", "c") and shift.largest_move == pytest.approx(150.0)
    assert shift.to_dict() == {"spearman": -1.0, "largest_move": 150.0, "model": shift.model}
    assert board_shift({}, after).model is None


def test_repeat_effect_counts_before_the_cap_is_applied() -> None:
    codes = np.array([0] * 30 + [1] * 12 + [2] * 3 + [-1] * 5)
    effect = repeat_effect(codes, 10)
    assert (effect.n_prompts, effect.n_repeated, effect.n_touched) == (3, 2, 42)
    assert effect.weight_removed == 22 and effect.largest == 30 and effect.n_votes == 50
    with pytest.raises(ValueError, match="'mode' must be 'sample' or 'weight'"):
        repeat_effect(codes, 10, mode="cut")  # type: ignore[arg-type]
