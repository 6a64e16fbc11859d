"""Prompts repeated too often: cap or down-weight their votes before the public boards.

A prompt asked thousands of times ("hi", a bot's test question) can hold more votes than
thousands of distinct prompts together, and its voters' taste then sets the public board.
FastChat's ``deduplication.py`` counts each exact prompt (the user turns joined, the
first 10,000 characters), takes the 99.99th percentile of those counts as a cutoff, and
keeps a random subset of that many votes of every prompt above it. Here:

* prompts are compared after a light normalisation (:func:`normalise_prompt`: surrounding
  whitespace stripped, case folded, inner whitespace collapsed), as integer codes
  (:func:`prompt_codes`); no text is kept;
* the threshold is a number of votes, given or chosen by :func:`auto_cap`: ``RATIO``
  times the median votes of a distinct prompt, and at least ``FLOOR``. The median, not a
  percentile of the counts: a log of a few prompts each asked by design many times
  (LLMFAO: 13 prompts, about 690 votes each) has nothing repeated *more than the others*,
  and a percentile would still cut its largest prompt;
* a prompt over it keeps a seeded random ``cap`` of its votes (:func:`cap_mask`, mode
  ``"sample"``, FastChat's), or all of them, each weighted ``(cap / count) ** power``
  (:func:`repeat_weights`, mode ``"weight"``; with ``power`` 1 the prompt weighs as
  ``cap`` votes, as under the sample, without the sample's randomness).

:func:`treat_repeats` does both steps and says what it touched (:class:`RepeatEffect`);
:func:`board_shift` says how far a board moved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.types import BoolArray, FloatArray, IntArray, PairwiseData

__all__ = [
    "FLOOR",
    "MODES",
    "RATIO",
    "BoardShift",
    "RepeatEffect",
    "RepeatMode",
    "auto_cap",
    "board_shift",
    "cap_mask",
    "normalise_prompt",
    "prompt_codes",
    "repeat_effect",
    "repeat_weights",
    "treat_repeats",
]

RepeatMode = Literal["sample", "weight"]
#: The ways a repeated prompt's votes are thinned: a seeded subset, or lighter weights.
MODES: tuple[RepeatMode, ...] = ("sample", "weight")

#: :func:`auto_cap`: the fewest votes a prompt keeps, whatever the log.
FLOOR = 50
#: :func:`auto_cap`: a prompt is repeated too often past this many times the median
#: prompt's votes.
RATIO = 10.0


def normalise_prompt(text: str) -> str:
    """``text`` as prompts are compared: stripped, case-folded, whitespace collapsed.

    >>> normalise_prompt("  Hi\\n  THERE ")
    'hi there'
    """
    return " ".join(text.split()).casefold()


def prompt_codes(prompts: Sequence[Any] | npt.NDArray[Any]) -> IntArray:
    """One integer a distinct normalised prompt, in the order of ``prompts``.

    Parameters
    ----------
    prompts : sequence or ndarray
        Each vote's prompt text; None, NaN, a non-string or a prompt empty once
        normalised counts as no prompt.

    Returns
    -------
    ndarray of int
        ``(n,)`` codes from 0, in order of first appearance; ``-1`` for no prompt.
    """
    # each distinct text normalised once (by hash: two million votes in seconds), then
    # the distinct normalised texts numbered; both in order of first appearance
    raw, distinct = pd.factorize(pd.Series(np.asarray(prompts, dtype=object), dtype=object))
    keys = [normalise_prompt(t) if isinstance(t, str) else "" for t in distinct]
    numbered, _ = pd.factorize(pd.Series([k or None for k in keys], dtype=object))
    by_text = np.append(np.asarray(numbered, dtype=np.intp), -1)  # -1: no text at all
    return by_text[np.where(raw < 0, len(keys), raw)]


def _counts(codes: IntArray) -> IntArray:
    codes = np.asarray(codes, dtype=np.intp)
    if codes.ndim != 1:
        raise ValueError("Argument 'codes' must be one-dimensional: one prompt code a vote.")
    known = codes[codes >= 0]
    return np.bincount(known, minlength=int(known.max()) + 1 if known.size else 0)


def auto_cap(codes: IntArray, *, floor: int = FLOOR, ratio: float = RATIO) -> int:
    """The votes a prompt may hold before it counts as repeated too often.

    ``max(floor, ceil(ratio * median))``, the median over the distinct prompts' vote
    counts: on a log of distinct prompts (median 1) the floor; on a log whose every
    prompt is asked about equally often, ``ratio`` times that, which no prompt reaches.

    Parameters
    ----------
    codes : array of int
        ``(n,)`` prompt code of each vote (:func:`prompt_codes`); ``-1`` for none.
    floor : int
        The smallest cap.
    ratio : float
        Multiple of the median prompt's votes.

    Returns
    -------
    int
        The cap; ``floor`` when no vote has a prompt.
    """
    if isinstance(floor, bool) or not isinstance(floor, int | np.integer) or floor < 1:
        raise ValueError(f"Argument 'floor' must be an integer >= 1, not {floor!r}.")
    if not (math.isfinite(ratio) and ratio >= 1.0):
        raise ValueError(f"Argument 'ratio' must be a finite number >= 1, not {ratio!r}.")
    counts = _counts(codes)
    counts = counts[counts > 0]
    if counts.size == 0:
        return int(floor)
    return max(int(floor), math.ceil(ratio * float(np.median(counts))))


def _check_cap(cap: int) -> int:
    if isinstance(cap, bool) or not isinstance(cap, int | np.integer) or cap < 1:
        raise ValueError(f"Argument 'cap' must be an integer >= 1, not {cap!r}.")
    return int(cap)


def cap_mask(codes: IntArray, cap: int, rng: np.random.Generator | int | None = 0) -> BoolArray:
    """Keep at most ``cap`` votes of each prompt: a seeded random subset of those above.

    Parameters
    ----------
    codes : array of int
        ``(n,)`` prompt code of each vote; ``-1`` for none.
    cap : int
        Votes kept of a prompt that has more (at least 1).
    rng : numpy.random.Generator or int, optional
        Which votes are kept; the same seed keeps the same votes.

    Returns
    -------
    ndarray of bool
        ``(n,)`` true for the votes kept: exactly ``cap`` of each prompt with more, every
        vote of the others and every vote without a prompt.
    """
    cap = _check_cap(cap)
    codes = np.asarray(codes, dtype=np.intp)
    counts = _counts(codes)
    keep = np.ones(codes.size, dtype=bool)
    over = np.flatnonzero(counts > cap)
    if over.size == 0:
        return keep
    generator = np.random.default_rng(rng)
    rows = np.flatnonzero(np.isin(codes, over))
    # a random key per vote; within each prompt the cap smallest keys are kept
    order = np.lexsort((generator.random(rows.size), codes[rows]))
    sorted_codes = codes[rows][order]
    start = np.searchsorted(sorted_codes, sorted_codes, side="left")
    rank = np.arange(order.size) - start
    keep[rows[order[rank >= cap]]] = False
    return keep


def repeat_weights(codes: IntArray, cap: int, power: float = 1.0) -> FloatArray:
    """Each vote's weight: ``(cap / count) ** power`` for a prompt of ``count > cap``
    votes, 1 otherwise.

    Parameters
    ----------
    codes : array of int
        ``(n,)`` prompt code of each vote; ``-1`` for none (weight 1).
    cap : int
        Votes a prompt may hold at full weight (at least 1).
    power : float
        In ``(0, 1]``: 1 makes a prompt over the cap weigh as ``cap`` votes in all;
        0.5 as ``sqrt(cap * count)``.

    Returns
    -------
    ndarray of float
        ``(n,)`` weights in ``(0, 1]``.
    """
    cap = _check_cap(cap)
    if not (math.isfinite(power) and 0.0 < power <= 1.0):
        raise ValueError(f"Argument 'power' must be in (0, 1], not {power!r}.")
    codes = np.asarray(codes, dtype=np.intp)
    counts = _counts(codes)
    scale = np.minimum(1.0, cap / np.maximum(counts, 1)) ** power
    weights = np.ones(codes.size)
    known = codes >= 0
    weights[known] = scale[codes[known]]
    return weights


@dataclass(frozen=True)
class RepeatEffect:
    """What thinning the repeated prompts did to a log.

    Attributes
    ----------
    mode : {"sample", "weight"}
    cap : int
        The threshold used.
    n_prompts : int
        Distinct prompts (normalised).
    n_repeated : int
        Prompts with more than ``cap`` votes.
    n_votes : int
        Votes in the log.
    n_touched : int
        Votes of those prompts: dropped or down-weighted.
    weight_removed : float
        Votes' worth taken away: the votes dropped (``"sample"``), or the weight removed
        (``"weight"``); ``n_votes - weight_removed`` is what the board stands on.
    largest : int
        Votes of the most repeated prompt (0 without prompts).
    """

    mode: RepeatMode
    cap: int
    n_prompts: int
    n_repeated: int
    n_votes: int
    n_touched: int
    weight_removed: float
    largest: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "mode": self.mode,
            "cap": self.cap,
            "n_prompts": self.n_prompts,
            "n_repeated": self.n_repeated,
            "n_votes": self.n_votes,
            "n_touched": self.n_touched,
            "weight_removed": round(self.weight_removed, 3),
            "largest": self.largest,
        }


def treat_repeats(
    data: PairwiseData,
    codes: IntArray,
    cap: int,
    *,
    mode: RepeatMode = "sample",
    power: float = 1.0,
    rng: np.random.Generator | int | None = 0,
) -> tuple[PairwiseData, RepeatEffect]:
    """``data`` with the votes of prompts repeated more than ``cap`` times thinned.

    Parameters
    ----------
    data : PairwiseData
        Unweighted votes, one row a vote.
    codes : array of int
        ``(n,)`` prompt code of each row of ``data`` (:func:`prompt_codes`).
    cap : int
        The threshold (:func:`auto_cap` or given).
    mode : {"sample", "weight"}
        Keep a seeded ``cap`` of each such prompt's votes (:func:`cap_mask`; every board
        then stands on fewer votes), or keep them all, lighter (:func:`repeat_weights`;
        for fits that take weights, as Bradley-Terry's).
    power : float
        The weights' power (mode ``"weight"``).
    rng : numpy.random.Generator or int, optional
        The sample's randomness (mode ``"sample"``).

    Returns
    -------
    data : PairwiseData
        The votes the boards stand on; ``data`` itself when no prompt is over the cap.
    effect : RepeatEffect
    """
    if mode not in MODES:
        raise ValueError(f"Argument 'mode' must be 'sample' or 'weight', not {mode!r}.")
    codes = np.asarray(codes, dtype=np.intp)
    if codes.shape != data.outcomes.shape:
        raise ValueError(
            f"Argument 'codes' must have one entry a vote ({data.outcomes.size}), not {codes.size}."
        )
    effect = repeat_effect(codes, cap, mode=mode)
    if not effect.n_repeated:
        return data, effect
    if mode == "sample":
        treated = data.select(cap_mask(codes, cap, rng))
    else:
        weights = repeat_weights(codes, cap, power)
        treated = PairwiseData(data.models, data.matchups, data.outcomes, data.weights * weights)
        effect = replace(effect, weight_removed=float(np.sum(1.0 - weights)))
    return treated, effect


def repeat_effect(codes: IntArray, cap: int, *, mode: RepeatMode = "sample") -> RepeatEffect:
    """What a cap of ``cap`` does to votes of prompt ``codes``, before it is applied.

    ``weight_removed`` is the votes a sample drops (``count - cap`` of each prompt over
    the cap), which is also the weight the down-weight of power 1 removes.
    """
    if mode not in MODES:
        raise ValueError(f"Argument 'mode' must be 'sample' or 'weight', not {mode!r}.")
    cap = _check_cap(cap)
    counts = _counts(codes)
    over = counts > cap
    return RepeatEffect(
        mode=mode,
        cap=cap,
        n_prompts=int((counts > 0).sum()),
        n_repeated=int(over.sum()),
        n_votes=int(np.asarray(codes).size),
        n_touched=int(counts[over].sum()),
        weight_removed=float((counts[over] - cap).sum()),
        largest=int(counts.max()) if counts.size else 0,
    )


@dataclass(frozen=True)
class BoardShift:
    """How far one board's ratings moved from another's, over the models both rate.

    Attributes
    ----------
    spearman : float
        Rank correlation of the two boards' ratings (NaN with fewer than two models or
        a board of equal ratings).
    largest_move : float
        The largest absolute rating change, in the boards' points.
    model : str or None
        The model that moved most.
    """

    spearman: float
    largest_move: float
    model: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, NaN as None."""
        rho = None if math.isnan(self.spearman) else round(self.spearman, 4)
        return {"spearman": rho, "largest_move": round(self.largest_move, 2), "model": self.model}


def _ranks(x: FloatArray) -> FloatArray:
    """Ranks from 1, ties given their average rank (Spearman's convention)."""
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    first = np.searchsorted(sorted_x, sorted_x, side="left")
    last = np.searchsorted(sorted_x, sorted_x, side="right")
    ranks = np.empty(x.size)
    ranks[order] = (first + last + 1) / 2.0
    return ranks


def board_shift(before: dict[str, float], after: dict[str, float]) -> BoardShift:
    """:class:`BoardShift` from ``before`` to ``after``, each model to its rating.

    Ratings are compared centred on the models both rate, so that a shift of the whole
    board (the centring taking in a model one of them lacks) is no move.
    """
    common = [m for m in before if m in after]
    if not common:
        return BoardShift(float("nan"), 0.0, None)
    x = np.array([before[m] for m in common])
    y = np.array([after[m] for m in common])
    rx, ry = _ranks(x), _ranks(y)
    spread = float(np.sqrt(((rx - rx.mean()) ** 2).sum() * ((ry - ry.mean()) ** 2).sum()))
    rho = float(((rx - rx.mean()) * (ry - ry.mean())).sum() / spread) if spread > 0 else math.nan
    move = np.abs((y - y.mean()) - (x - x.mean()))
    j = int(np.argmax(move))
    return BoardShift(rho, float(move[j]), common[j])
