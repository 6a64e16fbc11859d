"""The style of an answer, as numbers, and the style covariates of a vote.

Style control (LMArena's ``arena-rank`` contextual Bradley-Terry, FastChat's
``fit_contextual_bt``, ComparIA) fits a vote's outcome on the two models' ratings *and*
on how the two answers differ in style, so that a model does not rank high only for
being long or heavily formatted. This module measures an answer
(:func:`answer_style`, one row per answer, one column per name in
:data:`ANSWER_STYLE_FEATURES`) and turns the measures of a vote's two answers into its
covariates (:func:`style_differences`).

========================  =================================================================
``length``                tokens: maximal runs of word characters, and each other
                          non-space character (punctuation, symbols) on its own.
``headers``               markdown header lines (``#`` to ``######`` then a space), outside
                          fenced code.
``lists``                 list items: lines starting with ``-``, ``*``, ``+``, ``•``, ``1.``
                          or ``1)`` then a space, outside fenced code.
``bold``                  bold spans, ``**text**`` or ``__text__`` within a line, outside
                          fenced code.
========================  =================================================================

The covariates use a fixed scaling, the same for every fit and every data set, so that a
coefficient keeps its meaning when a model or a vote is added (standardising the
differences over the whole data set, as FastChat does, moves every coefficient when a
model joins: ComparIA issue 261). Length is compared as ``log2((1 + a) / (1 + b))``, so
its coefficient reads "points per doubling of length"; the counts as
``(a - b) / (a + b + 1)``, bounded by 1 either way (FastChat's ratio with its added one).
:data:`SCALINGS` names the alternatives the choice was measured against (bench
``style_control``, docs/evaluation.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from ranking.io.answer_texts import ANSWER_FIELDS, vote_answers
from ranking.io.frames import pairwise_from_battles, vote_order
from ranking.style_control.board import fit_style_leaderboard
from ranking.style_control.results import StyleControl
from ranking.types import FloatArray

__all__ = [
    "ANSWER_STYLE_FEATURES",
    "DEFAULT_SCALING",
    "SCALINGS",
    "Scaling",
    "NO_ANSWERS",
    "answer_style",
    "coefficient_phrase",
    "fit_style_control",
    "style_differences",
]

#: The measures of an answer, in column order.
ANSWER_STYLE_FEATURES: tuple[str, ...] = ("length", "headers", "lists", "bold")

#: How two answers' measures become a vote's covariate: ``log_ratio`` for length and
#: ``ratio`` for the counts (``"mixed"``, the default), or one rule for every column:
#: ``"ratio"`` (a - b) / (a + b + 1), ``"log_ratio"`` log2((1 + a) / (1 + b)),
#: ``"difference"`` a - b (raw, unbounded; for comparison only).
Scaling = Literal["mixed", "ratio", "log_ratio", "difference"]
SCALINGS: tuple[Scaling, ...] = ("mixed", "ratio", "log_ratio", "difference")
DEFAULT_SCALING: Scaling = "mixed"

#: What a unit of each covariate is, in words, under the default scaling.
_UNITS = {
    "length": "per doubling of length",
    "headers": "for headers in one answer and none in the other",
    "lists": "for list items in one answer and none in the other",
    "bold": "for bold text in one answer and none in the other",
}

#: Why a battle log cannot be fitted with style control.
NO_ANSWERS = (
    f"style control needs each vote's two answers ({' and '.join(ANSWER_FIELDS)}), "
    "and no vote has both"
)

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_TOKEN = re.compile(r"\w+|[^\w\s]")
_HEADER = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_LIST = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+?\*\*|__[^_\n]+?__")


def _measure(text: str) -> tuple[float, float, float, float]:
    prose = _FENCE.sub("\n", text)
    return (
        float(len(_TOKEN.findall(text))),
        float(len(_HEADER.findall(prose))),
        float(len(_LIST.findall(prose))),
        float(len(_BOLD.findall(prose))),
    )


def answer_style(texts: Sequence[str]) -> FloatArray:
    """The style measures of answers, one row per answer.

    Parameters
    ----------
    texts : sequence of str
        The answers; an empty answer (or ``None``) gives a row of zeros.

    Returns
    -------
    numpy.ndarray
        ``(n, k)`` float array of non-negative counts, the columns in the order of
        :data:`ANSWER_STYLE_FEATURES`.

    Examples
    --------
    >>> answer_style(["# Title\\n\\n- **one**\\n- two"]).tolist()
    [[10.0, 1.0, 2.0, 1.0]]
    """
    out = np.zeros((len(texts), len(ANSWER_STYLE_FEATURES)), dtype=np.float64)
    seen: dict[str, tuple[float, float, float, float]] = {}  # an answer shown in many votes
    for i, text in enumerate(texts):
        if text:
            key = str(text)
            if key not in seen:
                seen[key] = _measure(key)
            out[i] = seen[key]
    return out


def _ratio(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.asarray((a - b) / (a + b + 1.0), dtype=np.float64)


def _log_ratio(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.asarray(np.log2((1.0 + a) / (1.0 + b)), dtype=np.float64)


def style_differences(
    style_a: FloatArray, style_b: FloatArray, *, scaling: Scaling = DEFAULT_SCALING
) -> FloatArray:
    """The style covariates of votes: ``model_a``'s answer against ``model_b``'s.

    Parameters
    ----------
    style_a, style_b : numpy.ndarray
        ``(n, k)`` measures of each vote's two answers (:func:`answer_style`), in the
        order of :data:`ANSWER_STYLE_FEATURES`.
    scaling : {"mixed", "ratio", "log_ratio", "difference"}, optional
        How a pair of measures becomes a covariate (:data:`Scaling`); the default
        compares length as ``log2((1 + a) / (1 + b))`` and counts as
        ``(a - b) / (a + b + 1)``. Every rule is fixed: it does not depend on the other
        votes, so a fit's covariates do not move when votes or models are added.

    Returns
    -------
    numpy.ndarray
        ``(n, k)`` float array; swapping ``style_a`` and ``style_b`` flips its sign, and
        equal answers give zeros.

    Raises
    ------
    ValueError
        When the two arrays differ in shape, are not ``(n, k)`` with ``k`` the number of
        features, hold a negative or non-finite measure, or ``scaling`` is unknown.
    """
    a = np.asarray(style_a, dtype=np.float64)
    b = np.asarray(style_b, dtype=np.float64)
    k = len(ANSWER_STYLE_FEATURES)
    if a.ndim != 2 or a.shape[1] != k:
        raise ValueError(f"Argument 'style_a' must have shape (n, {k}), not {a.shape}.")
    if b.shape != a.shape:
        raise ValueError(f"Argument 'style_b' must have shape {a.shape}, not {b.shape}.")
    for name, arr in (("style_a", a), ("style_b", b)):
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError(f"Argument {name!r} must hold finite non-negative measures.")
    if scaling == "mixed":
        out = _ratio(a, b)
        out[:, 0] = _log_ratio(a[:, 0], b[:, 0])
        return out
    if scaling == "ratio":
        return _ratio(a, b)
    if scaling == "log_ratio":
        return _log_ratio(a, b)
    if scaling == "difference":
        return np.asarray(a - b, dtype=np.float64)
    raise ValueError(f"Argument 'scaling' must be one of {', '.join(SCALINGS)}, not {scaling!r}.")


def fit_style_control(
    battles: pd.DataFrame, *, scaling: Scaling = DEFAULT_SCALING, **options: Any
) -> StyleControl:
    """The style-controlled leaderboard of a battle frame, the raw one of the same votes
    beside it.

    Only the votes with both answers (``answer_a``, ``answer_b``) are fitted, on both
    boards.

    Parameters
    ----------
    battles : pandas.DataFrame
        A battle frame (:func:`ranking.io.ingest.read_battles`) with ``answer_a`` and
        ``answer_b``.
    scaling : {"mixed", "ratio", "log_ratio", "difference"}, optional
        How answers' measures become covariates (:func:`style_differences`).
    **options
        :func:`ranking.style_control.board.fit_style_leaderboard`'s ``interval``, ``rounds``,
        ``confidence``, ``anchor``, ``rng``, ``alpha`` and ``min_votes``.

    Returns
    -------
    StyleControl

    Raises
    ------
    ValueError
        When no vote has both answers (:data:`NO_ANSWERS`), or on a bad option.
    """
    answers_a, answers_b, present = vote_answers(battles)
    if not present.any():
        raise ValueError(NO_ANSWERS)
    votes = pairwise_from_battles(battles)
    if not present.all():
        votes = pairwise_from_battles(battles.iloc[_in_file_order(battles, present)])
    differences = style_differences(
        answer_style(answers_a), answer_style(answers_b), scaling=scaling
    )
    return fit_style_leaderboard(
        votes, differences, ANSWER_STYLE_FEATURES, scaling=scaling, **options
    )


def _in_file_order(battles: pd.DataFrame, present: np.ndarray) -> np.ndarray:
    """Row positions of the votes ``present`` marks (in vote order), in file order."""
    return np.sort(vote_order(battles)[present])


def coefficient_phrase(
    feature: str, coefficient: float, lower: float, upper: float, *, scaling: str = "mixed"
) -> str:
    """A style coefficient in words, e.g. ``"length: +12.3 points per doubling of length
    (95% interval +8.1 to +16.5)"``.

    Parameters
    ----------
    feature : str
        A name of :data:`ANSWER_STYLE_FEATURES`.
    coefficient, lower, upper : float
        Elo points per unit of the covariate, and its interval.
    scaling : str
        The scaling the covariates were made with; under another than the default a unit
        is named by its rule.
    """
    if scaling == DEFAULT_SCALING and feature in _UNITS:
        unit = _UNITS[feature]
    else:
        unit = f"per unit of the {scaling} difference in {feature}"
    return f"{feature}: {coefficient:+.1f} points {unit} (interval {lower:+.1f} to {upper:+.1f})"
