"""From raw battle records to a raw frame, with what validation must reject kept visible.

:func:`frame_from_records` flattens dict records (the REST body, JSON Lines) into a frame;
:func:`normalise_columns` renames the columns that hold fields (their own names or aliases,
or as a :class:`ranking.io.column_map.ColumnMap` says), extracts the prompt from an Arena
``conversation_a`` and drops list-valued label columns. Neither judges a value: a dict in
a one-value field stays whole (:class:`Whole`) and a string holding a lone surrogate is
marked (:class:`InvalidText`), so that :func:`ranking.io.validation.validate_battles` can
name the field and the value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.io.column_map import ALIASES, BATTLE_COLUMNS, DEFAULT_MAP, ColumnMap
from ranking.io.text_checks import is_text

__all__ = [
    "BadNumber",
    "InvalidText",
    "Whole",
    "bool_mask",
    "frame_from_records",
    "loads_record",
    "mark_bad_numbers",
    "normalise_columns",
]

#: Fields that hold one value: an object or a list there is a wrong type, kept whole (not
#: flattened into dotted columns, nor dropped as a list column) for validation to reject.
_SCALAR_FIELDS = frozenset(BATTLE_COLUMNS).union(*ALIASES.values())


class Whole:
    """A dict in a one-value field (``model_a``, ``user_id``, ...), kept from flattening."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


class InvalidText(Whole):
    """A string, or a field name (``name=True``), holding a lone surrogate (JSON "\\ud800")."""

    __slots__ = ("name",)

    def __init__(self, value: str, name: bool = False) -> None:
        super().__init__(value)
        self.name = name


_CONSTANTS = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}


class BadNumber:
    """A JSON number no field can hold, as read: ``NaN`` or an infinity written out, or an
    integer too long for Python to read (more than 4300 digits)."""

    __slots__ = ("reason", "shown")

    def __init__(self, shown: str, reason: str) -> None:
        self.shown = shown
        self.reason = reason

    def __repr__(self) -> str:
        return self.shown


def _constant(name: str) -> BadNumber:
    return BadNumber(_CONSTANTS.get(name, name), "is not a finite number")


def _integer(digits: str) -> int | BadNumber:
    try:
        return int(digits)
    except ValueError:  # past the interpreter's int_max_str_digits
        shown = f"{digits[:12]}...{digits[-4:]} ({len(digits.lstrip('-'))} digits)"
        return BadNumber(shown, "is an integer outside the 64-bit range")


def loads_record(text: str) -> Any:
    """``json.loads(text)``, with what validation must refuse marked (:class:`BadNumber`):
    ``NaN`` and infinities (which ``json`` reads as floats, NaN then looking missing), and
    integers too long to read (which ``json`` cannot parse at all).

    Raises
    ------
    json.JSONDecodeError, RecursionError
        As ``json.loads``.
    """
    try:
        return json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError:
        raise
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        return json.loads(text, parse_constant=_constant, parse_int=_integer)


def mark_bad_numbers(record: Mapping[Any, Any]) -> dict[Any, Any]:
    """``record`` with each float that is not finite (nested dicts too) marked as a
    :class:`BadNumber`, as :func:`loads_record` marks ``NaN`` and infinities written out.

    For records parsed by another JSON reader (the REST body): Python's ``json`` reads the
    tokens ``NaN``, ``Infinity`` and ``-Infinity`` as floats, and a NaN would then look
    missing; an overlong ``1e400`` reads as an infinity.
    """
    marked: dict[Any, Any] = {}
    for key, value in record.items():
        if isinstance(value, float) and not math.isfinite(value):
            marked[key] = BadNumber(repr(value), "is not a finite number")
        elif isinstance(value, dict):
            marked[key] = mark_bad_numbers(value)
        else:
            marked[key] = value
    return marked


def _is_text(text: str) -> bool:
    return is_text(text)


def _mark_invalid_text(record: dict[Any, Any]) -> dict[Any, Any]:
    """``record`` with each string holding a lone surrogate wrapped in :class:`InvalidText`."""
    marked: dict[Any, Any] = {}
    for key, value in record.items():
        if isinstance(key, str) and not _is_text(key):
            marked[key.encode("utf-8", "backslashreplace").decode()] = InvalidText(key, True)
        elif isinstance(value, str) and not _is_text(value):
            marked[key] = InvalidText(value)
        elif isinstance(value, dict):
            marked[key] = _mark_invalid_text(value)
        else:
            marked[key] = value
    return marked


def frame_from_records(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Build a raw frame from dict records, nested dicts flattened to dotted names.

    ``{"category_tag": {"math_v0": {"math": True}}}`` becomes column
    ``category_tag.math_v0.math``; lists are left as values. Values that
    :func:`validate_battles` must reject are kept whole: a dict in a one-value field such
    as ``model_a``, and a string holding a lone surrogate (not Unicode text, which
    pandas' Arrow strings cannot hold).
    """
    dicts = [r if isinstance(r, dict) else dict(r) for r in records]
    try:
        frame = _records_frame(dicts)
        kept = [c for c in _objects(frame) if c in _SCALAR_FIELDS or not _is_list_column(frame[c])]
        if not any(bool_mask(frame[c].map(_is_invalid_text)).any() for c in kept):
            return frame  # (list columns are dropped: see normalise_columns)
    except UnicodeEncodeError:  # in a text column, or a field name
        pass
    return _records_frame([_mark_invalid_text(d) for d in dicts])  # rare: scan only then


def _objects(frame: pd.DataFrame) -> list[Any]:
    """The columns of mixed values (text columns are text, and are checked as they are made)."""
    return [c for c in frame.columns if frame[c].dtype == object]


def _is_invalid_text(value: Any) -> bool:
    return isinstance(value, str) and not _is_text(value)


def _records_frame(dicts: list[dict[Any, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(dicts, index=pd.RangeIndex(len(dicts)))  # fast for flat records
    nested = [c for c in _objects(frame) if bool_mask(frame[c].map(_is_dict)).any()]
    if not nested:
        return frame
    whole = [c for c in nested if c in _SCALAR_FIELDS]
    if whole:
        dicts = [
            {k: Whole(v) if k in whole and _is_dict(v) else v for k, v in d.items()} for d in dicts
        ]
    return pd.json_normalize(dicts, sep=".")


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def normalise_columns(frame: pd.DataFrame, columns: ColumnMap | None = None) -> pd.DataFrame:
    """Rename the columns that hold fields, extract the prompt and drop list-valued
    columns (but not lists in one-value fields such as ``model_a``: validation rejects
    those).

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw records with source column names; not modified.
    columns : ColumnMap, optional
        Which column holds which field (:meth:`ColumnMap.plan`); by default each field's
        own column, else an alias (docs/SPEC.md section 1).

    Returns
    -------
    pandas.DataFrame
        Same rows; values untouched, so that :func:`validate_battles` sees them as read.

    Raises
    ------
    MissingColumn
        When ``columns`` names a column that ``frame`` lacks.
    """
    plan = (columns or DEFAULT_MAP).plan(frame.columns)
    out = frame.drop(columns=list(plan.dropped)) if plan.dropped else frame
    moved = {s: f for s, f in plan.renames.items() if s != f}
    out = out.rename(columns=moved) if moved else out.copy(deep=False)
    if plan.prompt_from_conversation and "prompt" not in out.columns:
        if "conversation_a" in out.columns:
            out["prompt"] = out["conversation_a"].map(_first_user_turn)
    listy = [c for c in out.columns if c not in _SCALAR_FIELDS and _is_list_column(out[c])]
    return out.drop(columns=listy) if listy else out


def _first_user_turn(conversation: Any) -> str | InvalidText | None:
    """Content of the first turn with role ``user`` in a list of ``{role, content}``
    (marked when it is not Unicode text, for :func:`validate_battles` to reject)."""
    if not isinstance(conversation, list | tuple | np.ndarray):
        return None
    for turn in conversation:
        if isinstance(turn, Mapping) and turn.get("role") == "user":
            content = turn.get("content")
            if isinstance(content, list | tuple | np.ndarray) and len(content) > 0:
                content = content[0]  # multimodal turns: [text, images]
            if not isinstance(content, str):
                return None
            return content if _is_text(content) else InvalidText(content)
    return None


def _is_list_column(column: pd.Series) -> bool:
    first = column.dropna().iloc[:1].tolist() if column.dtype == object else []
    return bool(first) and isinstance(first[0], list | tuple | np.ndarray)


def bool_mask(values: Any) -> npt.NDArray[np.bool_]:
    """Boolean array from a possibly nullable boolean result, NA counting as False."""
    if isinstance(values, pd.Series):
        return values.astype("boolean").fillna(False).to_numpy(dtype=np.bool_)
    return np.asarray(values, dtype=np.bool_)
