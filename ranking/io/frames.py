"""The one place where battle frames become arrays, and where segments are selected.

A battle frame is the normalised table of :func:`ranking.io.ingest.read_battles`: columns
``model_a``, ``model_b``, ``winner`` (canonical values), optionally ``tstamp``,
``user_id`` and label columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ranking.types import WINNER_OUTCOME, PairwiseData

__all__ = [
    "PRIVATE_COLUMNS",
    "check_segment_size",
    "filter_battles",
    "label_columns",
    "pairwise_from_battles",
    "parse_where",
    "user_codes",
    "vote_order",
]

#: Columns that are part of a vote rather than labels of it.
_CORE_COLUMNS = ("battle_id", "model_a", "model_b", "winner", "user_id", "prompt", "tstamp")

#: Columns that identify a person, a text or a single vote, under their names and their
#: aliases (docs/SPEC.md section 1): never labels, so that no segment narrows to one voter, one
#: prompt or one battle.
PRIVATE_COLUMNS = frozenset(
    ("battle_id", "id", "question_id", "user_id", "judge", "prompt", "question")
    + ("conversation_a", "conversation_b", "tstamp")
    + ("answer_a", "answer_b")  # the vote's two answers (ranking.io.answer_texts)
)


def vote_order(battles: pd.DataFrame) -> np.ndarray:
    """Row positions in the order the votes happened: by ``tstamp``, else file order.

    The sort is stable, so votes with equal or missing timestamps keep file order;
    missing timestamps go last.
    """
    if "tstamp" not in battles.columns or battles["tstamp"].isna().all():
        return np.arange(len(battles))
    stamps = battles["tstamp"].to_numpy(dtype=np.float64, na_value=np.inf)
    return np.argsort(stamps, kind="stable")


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Category codes and categories of a column (categorical or not)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), column.cat.categories
    categorical = pd.Categorical(column.astype("string"))
    return categorical.codes, categorical.categories


def _model_codes(battles: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Codes of ``model_a`` and ``model_b`` against one shared index of names."""
    a, b = battles["model_a"], battles["model_b"]
    same = (
        isinstance(a.dtype, pd.CategoricalDtype)
        and isinstance(b.dtype, pd.CategoricalDtype)
        and a.cat.categories.equals(b.cat.categories)
    )
    if same:  # the ingested frame: one sorted category set for both columns
        return a.cat.codes.to_numpy(), b.cat.codes.to_numpy(), a.cat.categories
    names = pd.Index(sorted(set(a.astype(str)) | set(b.astype(str))))
    return (
        names.get_indexer(pd.Index(a.astype(str))),
        names.get_indexer(pd.Index(b.astype(str))),
        names,
    )


def pairwise_from_battles(
    battles: pd.DataFrame, models: Sequence[str] | None = None
) -> PairwiseData:
    """Turn a battle frame into unweighted vote arrays, in the order the votes happened.

    Parameters
    ----------
    battles : pandas.DataFrame
        A battle frame with canonical ``winner`` values.
    models : sequence of str, optional
        The model index to use; by default the models present, sorted by name.

    Returns
    -------
    PairwiseData
        One row per vote, weights all one.
    """
    order = vote_order(battles)
    codes_a, codes_b, names = _model_codes(battles)
    codes_a, codes_b = codes_a[order], codes_b[order]
    if (codes_a < 0).any() or (codes_b < 0).any():
        raise ValueError("Columns 'model_a' and 'model_b' must name a model in every battle.")
    if models is None:
        used = np.zeros(len(names), dtype=bool)
        used[codes_a] = used[codes_b] = True
        target = np.cumsum(used) - 1  # old code -> position among the models present
        keep = tuple(str(name) for name in names[used])
    else:
        keep = tuple(models)
        target = pd.Index(keep).get_indexer(names.astype(str))
        if (target[codes_a] < 0).any() or (target[codes_b] < 0).any():
            present = set(names[np.union1d(codes_a, codes_b)].astype(str))
            missing = sorted(present - set(keep))
            raise ValueError(f"Argument 'models' lacks models present in the votes: {missing[:5]}.")
    winner_codes, winners = _codes(battles["winner"])
    table = np.array([WINNER_OUTCOME.get(str(w), np.nan) for w in winners] + [np.nan])
    outcomes = table[winner_codes[order]]  # code -1 (missing) picks the trailing NaN
    if np.isnan(outcomes).any():
        raise ValueError("Column 'winner' holds values outside the canonical five.")
    matchups = np.stack([target[codes_a], target[codes_b]], axis=1).astype(np.intp)
    return PairwiseData(keep, matchups, outcomes, np.ones(len(outcomes)))


def user_codes(battles: pd.DataFrame) -> tuple[np.ndarray, tuple[str, ...]]:
    """User index of each vote, in the order of :func:`pairwise_from_battles`.

    Returns
    -------
    codes : ndarray of int
        ``(n,)`` index into ``names``; ``-1`` for a vote without ``user_id``.
    names : tuple of str
        The user ids, sorted.

    Raises
    ------
    ValueError
        If no vote has a ``user_id`` (per-user results need one).
    """
    if "user_id" not in battles.columns or battles["user_id"].isna().all():
        raise ValueError(
            "Per-user results need a 'user_id' (or 'judge') field, and no battle has one."
        )
    ids = battles["user_id"].iloc[vote_order(battles)]
    categorical = pd.Categorical(ids.astype("string"))
    names = tuple(str(c) for c in categorical.categories)
    return categorical.codes.astype(np.intp), names


def label_columns(battles: pd.DataFrame) -> list[str]:
    """The label columns of a battle frame: what is neither part of the vote nor private."""
    return [c for c in battles.columns if c not in _CORE_COLUMNS and c not in PRIVATE_COLUMNS]


def parse_where(expression: str) -> tuple[str, str]:
    """Split a ``COL=VALUE`` segment expression.

    Raises
    ------
    ValueError
        If the expression has no ``=`` or an empty column name.
    """
    column, sep, value = expression.partition("=")
    if not sep or not column.strip():
        raise ValueError(f"Segment {expression!r} must look like COLUMN=VALUE, e.g. math=1.")
    return column.strip(), value.strip()


def _matches(series: pd.Series, column: str, value: str) -> pd.Series:
    if pd.api.types.is_bool_dtype(series):
        truth = {"1": True, "true": True, "0": False, "false": False}.get(value.lower())
        if truth is None:
            raise ValueError(f"Segment column {column!r} is true/false, not {value!r}.")
        return series == truth
    if pd.api.types.is_numeric_dtype(series):
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"Segment column {column!r} is numeric, not {value!r}.") from None
        return series == number
    return series.astype("string") == value


def filter_battles(battles: pd.DataFrame, where: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Keep the votes that match every ``(column, value)`` condition.

    Numeric columns compare as numbers (``math=1`` matches ``1`` and ``1.0``), boolean
    ones accept ``1/0/true/false``, any other column compares as text.

    Only label columns filter: the vote's own fields (``model_a``, ``model_b``,
    ``winner``) and the :data:`PRIVATE_COLUMNS` never do.

    Raises
    ------
    ValueError
        If a column is not a label column of the frame (the message lists them) or a
        value does not fit the column's type.
    """
    labels = label_columns(battles)
    named = ", ".join(labels) or "none"
    mask = pd.Series(True, index=battles.index)
    for column, value in where:
        if column in PRIVATE_COLUMNS or column in _CORE_COLUMNS:
            raise ValueError(
                f"Segment column {column!r} cannot be filtered on: only labels can, never "
                f"the vote itself or what identifies a person, a text or a battle; "
                f"labels: {named}."
            )
        if column not in labels:
            raise ValueError(f"Segment column {column!r} is not in the battles; labels: {named}.")
        mask &= _matches(battles[column], column, value).fillna(False).astype(bool)
    return battles.loc[mask]


def check_segment_size(segment: pd.DataFrame, *, min_votes: int, min_users: int) -> None:
    """Refuse a segment too small to keep its voters unrecognisable.

    Parameters
    ----------
    segment : pandas.DataFrame
        The battles of the segment (:func:`filter_battles`).
    min_votes : int
        The fewest votes a segment may hold.
    min_users : int
        The fewest distinct ``user_id`` a segment may hold; votes without one count for
        no user, so with ``min_users > 0`` a log without user ids has no segments.

    Raises
    ------
    ValueError
        If the segment holds fewer votes or distinct users than that; the message gives
        both counts and both minimums.
    """
    n_votes = len(segment)
    n_users = int(segment["user_id"].nunique()) if "user_id" in segment.columns else 0
    if n_votes < min_votes or n_users < min_users:
        raise ValueError(
            f"the segment holds {n_votes:,} votes from {n_users:,} distinct users; a "
            f"segment answers only with at least {min_votes:,} votes and {min_users:,} "
            "users, so that none narrows to a few people."
        )
