"""The typed battle frame: compact dtypes for valid rows, and duplicate ids dropped.

Rows that passed :func:`ranking.io.validation.validate_battles` become the battle frame
every reader returns (:func:`to_battle_frame`: categoricals for models and winner,
``string`` ids, ``float64`` time stamps); :func:`drop_duplicate_ids` drops the rows whose
``battle_id`` was met before.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

import numpy as np
import pandas as pd

from ranking.io.records import bool_mask
from ranking.types import WINNER_OUTCOME

__all__ = [
    "REQUIRED_COLUMNS",
    "WINNERS",
    "concat_battle_frames",
    "drop_duplicate_ids",
    "empty_battle_frame",
    "numbers",
    "to_battle_frame",
]

#: Columns every record must have.
REQUIRED_COLUMNS: tuple[str, ...] = ("model_a", "model_b", "winner")
#: The canonical ``winner`` values, in the order of their categories.
WINNERS: tuple[str, ...] = tuple(WINNER_OUTCOME)


def numbers(column: pd.Series) -> pd.Series:
    """Values as float64; NaN where missing or not a number (booleans are not numbers)."""
    if pd.api.types.is_bool_dtype(column.dtype):
        return pd.Series(np.nan, index=column.index)
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.astype("float64")
    values = column.astype(object)
    flags = bool_mask(values.map(lambda v: isinstance(v, bool | np.bool_), na_action="ignore"))
    try:
        converted = pd.to_numeric(values, errors="coerce")
    except OverflowError:  # an integer past float64 (400 digits): not a number to use
        converted = pd.to_numeric(values.map(_bounded, na_action="ignore"), errors="coerce")
    return converted.astype("float64").mask(flags)


def _bounded(value: Any) -> Any:
    """``value``, or NaN for an integer too large for a float64."""
    if isinstance(value, int) and abs(value) >= 2**1023:
        return np.nan
    return value


def _float_text(value: float) -> str:
    """``17.0`` as ``"17"``; a float past 64 bits as Python writes it (``"1e+308"``, not 309
    digits: an id stays about as short as it was sent)."""
    whole = np.isfinite(value) and abs(value) < 2**63 and value == int(value)
    return str(int(value)) if whole else str(value)


def _string_column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame.columns:
        return pd.Series(pd.NA, index=frame.index, dtype="string")
    values = frame[name]
    if pd.api.types.is_float_dtype(values.dtype):  # ids like 17 read as 17.0
        values = values.map(_float_text, na_action="ignore")
    if not isinstance(values.dtype, pd.StringDtype):
        values = values.astype(object).where(values.notna())
    text = values.astype("string")
    return text.mask(text.eq(""))


def empty_battle_frame() -> pd.DataFrame:
    """A battle frame with no rows and the typed columns of :func:`to_battle_frame`."""
    return to_battle_frame(pd.DataFrame())


def to_battle_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Convert valid, normalised rows into the typed battle frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows that passed :func:`validate_battles` (only an empty frame may lack a column).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`BATTLE_COLUMNS` then the label columns in source order;
        ``battle_id``, ``user_id``, ``prompt`` are ``string`` (NA when absent or empty),
        ``model_a`` and ``model_b`` are categoricals sharing one sorted set of categories,
        ``winner`` is a categorical with exactly :data:`WINNERS` as categories, ``tstamp``
        is ``float64``. The index is a fresh ``RangeIndex``.
    """
    frame = frame.reset_index(drop=True)
    for name in REQUIRED_COLUMNS:
        if name not in frame.columns:
            frame[name] = pd.Series(dtype=object)
    a = pd.Categorical(frame["model_a"])
    b = pd.Categorical(frame["model_b"])
    models = a.categories.union(b.categories).sort_values()
    tstamp = numbers(frame["tstamp"]) if "tstamp" in frame.columns else np.nan
    columns: dict[str, Any] = {
        "battle_id": _string_column(frame, "battle_id"),
        "model_a": a.set_categories(models),
        "model_b": b.set_categories(models),
        "winner": pd.Categorical(frame["winner"], categories=list(WINNERS)),
        "user_id": _string_column(frame, "user_id"),
        "prompt": _string_column(frame, "prompt"),
        "tstamp": tstamp,
    }
    labels = [c for c in frame.columns if c not in columns]
    out = pd.DataFrame(columns, index=frame.index)
    return pd.concat([out, frame[labels]], axis=1) if labels else out


def drop_duplicate_ids(
    frame: pd.DataFrame, seen: set[str], known: Set[str] = frozenset()
) -> tuple[pd.DataFrame, int]:
    """Drop battles whose ``battle_id`` is in ``known``, ``seen`` or earlier in ``frame``.

    Rows without a ``battle_id`` are always kept.

    Parameters
    ----------
    frame : pandas.DataFrame
        A battle frame.
    seen : set of str
        Ids met so far; the ids of the kept rows are added to it.
    known : set of str, optional
        Further ids to treat as seen, left unchanged.

    Returns
    -------
    frame : pandas.DataFrame
        The kept rows, with a fresh index.
    n_duplicates : int
        Number of rows dropped.
    """
    ids = frame["battle_id"]
    present = bool_mask(ids.notna())
    if not present.any():
        return frame, 0
    chunk_ids = set(ids[present].to_numpy(dtype=object))
    repeated = (chunk_ids & seen) | (chunk_ids & known)  # set algebra in C, no row loop
    duplicate = present & bool_mask(ids.duplicated())
    if repeated:
        duplicate |= bool_mask(ids.isin(repeated))
    seen |= chunk_ids - repeated
    n_duplicates = int(duplicate.sum())
    if n_duplicates == 0:
        return frame, 0
    return frame.loc[~duplicate].reset_index(drop=True), n_duplicates


def concat_battle_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate typed chunks, giving the model columns the union of their categories."""
    frames = [f for f in frames if len(f)] or frames[:1]  # an empty file keeps its labels
    if not frames:
        return empty_battle_frame()
    if len(frames) == 1:
        return frames[0]
    names = [f[c].cat.categories for f in frames for c in ("model_a", "model_b")]
    models = names[0].append(names[1:]).unique().sort_values()
    for frame in frames:
        for column in ("model_a", "model_b"):
            frame[column] = frame[column].cat.set_categories(models)
    return pd.concat(frames, ignore_index=True)
