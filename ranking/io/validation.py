"""Row-level validation and normalisation of battle records (docs/SPEC.md section 1).

In-memory frames and records only, no files, so that the file reader
(:mod:`ranking.io.ingest`) and ``POST /v1/battles`` share one definition of a valid battle:
:func:`normalise_columns` (aliases, prompt, nested columns; from :mod:`ranking.io.records`,
with :func:`frame_from_records`), :func:`validate_battles`
(one boolean mask per check), :func:`to_battle_frame` (compact dtypes),
:func:`drop_duplicate_ids`, and :func:`battles_from_records` chaining them for dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.io.records import (
    ALIASES,
    BATTLE_COLUMNS,
    NOT_TEXT,
    InvalidText,
    Whole,
    bool_mask,
    frame_from_records,
    normalise_columns,
)
from ranking.types import WINNER_OUTCOME

__all__ = [
    "ALIASES",
    "BATTLE_COLUMNS",
    "REQUIRED_COLUMNS",
    "WINNERS",
    "RowError",
    "battles_from_records",
    "drop_duplicate_ids",
    "empty_battle_frame",
    "frame_from_records",
    "normalise_columns",
    "to_battle_frame",
    "validate_battles",
]

#: Columns every record must have.
REQUIRED_COLUMNS: tuple[str, ...] = ("model_a", "model_b", "winner")
#: The canonical ``winner`` values, in the order of their categories.
WINNERS: tuple[str, ...] = tuple(WINNER_OUTCOME)

_WINNER_REASON = "is not one of " + ", ".join(WINNERS)
_Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class RowError:
    """The first problem found in one record.

    Attributes
    ----------
    index : int
        0-based position of the record in the frame or list that was checked.
    field : str or None
        Offending field; ``None`` when the record as a whole is unusable.
    value : object
        Offending value; ``None`` when it is missing (it is then not shown).
    reason : str
        What is wrong, without the value: ``"is not one of model_a, ..."``.
    detail : str
        Optional specifics appended in parentheses (a JSON parser's message).
    """

    index: int
    field: str | None
    value: Any
    reason: str
    detail: str = ""

    @property
    def message(self) -> str:
        """One line: ``field 'winner': value 'foo' is not one of ...`` (then any detail)."""
        text = self.reason
        if self.field is not None:
            shown = "" if self.value is None else f"{_short_repr(self.value)} "
            text = f"field {self.field!r}: value {shown}{self.reason}"
        return f"{text} ({self.detail})" if self.detail else text

    @property
    def summary(self) -> str:
        """The message without value or detail, for counting reasons."""
        return RowError(self.index, self.field, None, self.reason).message

    def to_dict(self) -> dict[str, Any]:
        """The error as the REST service reports it: ``{"index": i, "error": "..."}``."""
        return {"index": self.index, "error": self.message}


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _non_string(column: pd.Series) -> _Mask:
    """True where a present value is not a ``str``."""
    if isinstance(column.dtype, pd.StringDtype):
        return np.zeros(len(column), dtype=bool)
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object:
        column = column.astype(object)
        if pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
            return np.zeros(len(column), dtype=bool)
        return bool_mask(column.map(lambda v: not isinstance(v, str), na_action="ignore"))
    return bool_mask(column.notna())


def _as_text(column: pd.Series, usable: _Mask) -> pd.Series:
    """The usable string values as a ``string`` series, NA elsewhere."""
    if isinstance(column.dtype, pd.StringDtype):  # fast path: no Python objects
        return column.astype("string")
    return column.astype(object).where(usable).astype("string")


def _numbers(column: pd.Series) -> pd.Series:
    """Values as float64; NaN where missing or not a number (booleans are not numbers)."""
    if pd.api.types.is_bool_dtype(column.dtype):
        return pd.Series(np.nan, index=column.index)
    if pd.api.types.is_numeric_dtype(column.dtype):
        return column.astype("float64")
    values = column.astype(object)
    flags = bool_mask(values.map(lambda v: isinstance(v, bool | np.bool_), na_action="ignore"))
    return pd.to_numeric(values, errors="coerce").astype("float64").mask(flags)


def validate_battles(
    frame: pd.DataFrame,
    *,
    allow_self_battles: bool = False,
    max_chars: Mapping[str, int] | None = None,
) -> list[RowError]:
    """Check every row of a normalised frame; report the first problem of each bad row.

    Each check is one vectorised boolean mask over the frame, applied in this order:
    any field holding a string that is not Unicode text (a lone surrogate), or whose
    name is not; ``model_a`` then ``model_b`` (missing, not a string, empty), ``model_b``
    equal to ``model_a``, ``winner`` (missing, not a canonical value), ``tstamp``
    (present but not a finite number), ``battle_id``, ``user_id`` and ``prompt`` (present
    but neither a string nor a number), then the lengths of ``max_chars``. A missing
    required column counts as missing in every row.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`normalise_columns`.
    allow_self_battles : bool, default False
        Let ``model_b`` equal ``model_a`` pass (a file reader drops and counts such
        votes, which carry no information, instead of rejecting the file).
    max_chars : mapping of str to int, optional
        Longest string allowed in a field, e.g. ``{"user_id": 256}``.

    Returns
    -------
    list of RowError
        Sorted by ``index`` (the row's position in ``frame``); empty when all rows pass.
    """
    frame = frame.reset_index(drop=True)
    n = len(frame)
    checks: list[tuple[str, _Mask, str]] = []
    models: dict[str, pd.Series] = {}
    for name in ("model_a", "model_b"):
        column = frame[name] if name in frame.columns else pd.Series([None] * n, dtype=object)
        missing = bool_mask(column.isna())
        wrong_type = ~missing & _non_string(column)
        text = _as_text(column, ~missing & ~wrong_type)
        checks += [
            (name, missing, "is missing"),
            (name, wrong_type, "is not a string"),
            (name, bool_mask(text.str.strip().eq("")), "is empty"),
        ]
        models[name] = text
    if not allow_self_battles:
        same = bool_mask(models["model_a"].eq(models["model_b"]))
        checks.append(("model_b", same, "is the same model as model_a"))
    if "winner" in frame.columns:
        winner = frame["winner"]
        missing = bool_mask(winner.isna())
        text = _as_text(winner, ~missing & ~_non_string(winner))
        checks += [
            ("winner", missing, "is missing"),
            ("winner", ~missing & ~bool_mask(text.isin(WINNERS)), _WINNER_REASON),
        ]
    else:
        checks.append(("winner", np.ones(n, dtype=bool), "is missing"))
    if "tstamp" in frame.columns:
        stamps = frame["tstamp"]
        bad = bool_mask(stamps.notna()) & ~np.isfinite(_numbers(stamps).to_numpy())
        checks.append(("tstamp", bad, "is not a finite number (unix seconds)"))
    for name in ("battle_id", "user_id", "prompt"):
        if name in frame.columns:
            checks.append((name, _not_scalar(frame[name]), "is not a string or a number"))
    for name, limit in (max_chars or {}).items():
        if name in frame.columns:
            checks.append((name, _longer(frame[name], limit), f"is longer than {limit} characters"))

    for name in frame.columns:  # an object under an alias kept as a label, e.g. "judge"
        if frame[name].dtype == object:
            whole = bool_mask(frame[name].map(lambda v: isinstance(v, Whole)))
            checks.append((str(name), whole, "is not a string or a number"))

    errors, flagged = _invalid_text(frame)
    for field, mask, reason in checks:
        fresh = mask & ~flagged
        if fresh.any():
            values = frame[field].to_numpy(dtype=object) if field in frame.columns else None
            for i in np.flatnonzero(fresh):
                value = None if values is None or reason == "is missing" else values[i]
                errors.append(RowError(int(i), field, _unwrap(value), reason))
            flagged |= mask
    errors.sort(key=lambda e: e.index)
    return errors


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, Whole) else value


def _longer(column: pd.Series, limit: int) -> _Mask:
    """True where a value is a string of more than ``limit`` characters."""
    return bool_mask(column.map(lambda v: isinstance(v, str) and len(v) > limit))


def _not_scalar(column: pd.Series) -> _Mask:
    """True where a present value is neither a string nor a number (booleans are not)."""
    if pd.api.types.is_bool_dtype(column.dtype):
        return bool_mask(column.notna())
    if column.dtype != object:
        return np.zeros(len(column), dtype=bool)
    return bool_mask(
        column.map(
            lambda v: (
                isinstance(v, bool | np.bool_) or not isinstance(v, str | int | float | np.number)
            ),
            na_action="ignore",
        )
    )


def _invalid_text(frame: pd.DataFrame) -> tuple[list[RowError], _Mask]:
    """The rows with a string, or a field name, that is not Unicode text; and their mask."""
    errors: list[RowError] = []
    flagged = np.zeros(len(frame), dtype=bool)
    for name in frame.columns:
        if frame[name].dtype != object:  # text read as text is always valid
            continue
        values = frame[name].to_numpy(dtype=object)
        for i in np.flatnonzero(bool_mask(frame[name].map(lambda v: isinstance(v, InvalidText)))):
            if not flagged[i]:
                mark = values[i]
                if mark.name:
                    reason = f"field name {mark.value!r} {NOT_TEXT}"
                    errors.append(RowError(int(i), None, None, reason))
                else:
                    errors.append(RowError(int(i), str(name), mark.value, NOT_TEXT))
                flagged[i] = True
    return errors, flagged


def _float_text(value: float) -> str:
    return str(int(value)) if np.isfinite(value) and value == int(value) else str(value)


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
    tstamp = _numbers(frame["tstamp"]) if "tstamp" in frame.columns else np.nan
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


def battles_from_records(
    records: Sequence[Any],
    *,
    seen_ids: set[str] | None = None,
    known_ids: Set[str] = frozenset(),
    max_chars: Mapping[str, int] | None = None,
) -> tuple[pd.DataFrame, list[RowError], int]:
    """Validate and normalise battles given as dicts, e.g. a REST request body.

    Parameters
    ----------
    records : sequence
        One battle per item, with the fields of docs/SPEC.md section 1 (aliases allowed).
    seen_ids : set of str, optional
        Ids already stored; records repeating one (or an earlier record) are dropped as
        duplicates, and the ids of the accepted records are added to it.
    known_ids : set of str, optional
        More ids already stored, treated like ``seen_ids`` but never added to.
    max_chars : mapping of str to int, optional
        Longest string allowed in a field (see :func:`validate_battles`).

    Returns
    -------
    battles : pandas.DataFrame
        The accepted battles, typed as by :func:`to_battle_frame`.
    errors : list of RowError
        One per rejected record; ``index`` is its position in ``records``.
    n_duplicates : int
        Number of valid records dropped as duplicates.
    """
    objects = [i for i, r in enumerate(records) if isinstance(r, Mapping)]
    errors = [
        RowError(i, None, None, "record is not a JSON object")
        for i, r in enumerate(records)
        if not isinstance(r, Mapping)
    ]
    frame = normalise_columns(frame_from_records([records[i] for i in objects]))
    row_errors = validate_battles(frame, max_chars=max_chars)
    errors += [RowError(objects[e.index], e.field, e.value, e.reason) for e in row_errors]
    errors.sort(key=lambda e: e.index)
    keep = np.ones(len(frame), dtype=bool)
    keep[[e.index for e in row_errors]] = False
    battles = to_battle_frame(frame.loc[keep])
    # the field names of rejected records only: nothing of those records is kept
    unused = [c for c in battles.columns[len(BATTLE_COLUMNS) :] if not battles[c].notna().any()]
    battles = battles.drop(columns=unused)
    seen = seen_ids if seen_ids is not None else set()
    battles, n_duplicates = drop_duplicate_ids(battles, seen, known_ids)
    return battles, errors, n_duplicates
