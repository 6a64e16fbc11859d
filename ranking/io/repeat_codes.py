"""A battle frame's prompts as codes, and its votes with repeated prompts thinned.

The frame-side half of :mod:`ranking.repeats`, for ``plb fit``, ``plb leaderboard`` and
the fit pipeline alike: each vote's prompt code in the order of
:func:`ranking.io.frames.pairwise_from_battles`, and the cap applied to those votes.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from ranking.io.frames import vote_order
from ranking.repeats import (
    RepeatEffect,
    RepeatMode,
    auto_cap,
    cap_mask,
    prompt_codes,
    repeat_effect,
    treat_repeats,
)
from ranking.types import IntArray, PairwiseData

__all__ = ["RepeatCap", "battle_prompt_codes", "cap_battles", "thin_repeated"]

#: A cap as the options give it: a number of votes, ``"auto"``, or None (no cap).
RepeatCap = int | Literal["auto"] | None


def battle_prompt_codes(battles: pd.DataFrame) -> IntArray | None:
    """Each vote's normalised prompt code (:func:`ranking.repeats.prompt_codes`), in vote
    order; None when the frame has no prompts."""
    if "prompt" not in battles.columns or battles["prompt"].isna().all():
        return None
    texts = battles["prompt"].to_numpy(dtype=object)[vote_order(battles)]
    return prompt_codes(texts)


def thin_repeated(
    battles: pd.DataFrame,
    data: PairwiseData,
    cap: RepeatCap,
    *,
    mode: RepeatMode = "sample",
    rng: np.random.Generator | int | None = 0,
) -> tuple[PairwiseData, RepeatEffect | None]:
    """``data`` (``pairwise_from_battles(battles)``) with each prompt repeated more than
    ``cap`` times thinned (:func:`ranking.repeats.treat_repeats`).

    Parameters
    ----------
    battles : pandas.DataFrame
        The battle frame ``data`` was made of.
    data : PairwiseData
        Its votes, one row a vote.
    cap : int, "auto" or None
        The threshold; ``"auto"`` for :func:`ranking.repeats.auto_cap`, None for none.
    mode : {"sample", "weight"}
    rng : numpy.random.Generator or int, optional
        The sample's randomness.

    Returns
    -------
    data : PairwiseData
        The votes to fit; ``data`` itself when nothing was thinned.
    effect : RepeatEffect or None
        What was touched; None when ``cap`` is None or the frame has no prompts.
    """
    if cap is None:
        return data, None
    codes = battle_prompt_codes(battles)
    if codes is None:
        return data, None
    threshold = auto_cap(codes) if cap == "auto" else cap
    return treat_repeats(data, codes, threshold, mode=mode, rng=rng)


def cap_battles(
    battles: pd.DataFrame, cap: RepeatCap, *, rng: np.random.Generator | int | None = 0
) -> tuple[pd.DataFrame, RepeatEffect | None]:
    """The rows of ``battles`` a cap keeps: the votes :func:`thin_repeated` keeps in mode
    ``"sample"`` with the same ``rng``, as a frame (for fits that read frames).

    Returns ``battles`` itself, with no effect, when ``cap`` is None or the frame has no
    prompts; with an effect and ``battles`` itself when no prompt is over the cap.
    """
    if cap is None:
        return battles, None
    codes = battle_prompt_codes(battles)
    if codes is None:
        return battles, None
    threshold = auto_cap(codes) if cap == "auto" else cap
    order = vote_order(battles)
    kept = np.ones(len(battles), dtype=bool)
    kept[order] = cap_mask(codes, threshold, rng)
    return (battles if kept.all() else battles[kept]), repeat_effect(codes, threshold)
