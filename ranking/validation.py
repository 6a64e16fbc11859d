"""Row-level validation and normalisation of battle records (SPEC section 1).

In-memory frames and records only, no files, so that the file reader
(:mod:`ranking.ingest`) and ``POST /v1/battles`` share one definition of a valid battle:
:func:`normalise_columns` (aliases, prompt, nested columns), :func:`validate_battles`
(one boolean mask per check), :func:`to_battle_frame` (compact dtypes),
:func:`drop_duplicate_ids`, and :func:`battles_from_records` chaining them for dicts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

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

#: Columns of a battle frame, in order; label columns follow them.
BATTLE_COLUMNS = ("battle_id", "model_a", "model_b", "winner", "user_id", "prompt", "tstamp")
#: Columns every record must have.
REQUIRED_COLUMNS: tuple[str, ...] = ("model_a", "model_b", "winner")
#: Canonical column to its aliases, in order of preference; an alias is used only when
#: the canonical column is absent (otherwise it stays a label column).
ALIASES: Mapping[str, tuple[str, ...]] = {
    "battle_id": ("id", "question_id"),
    "user_id": ("judge",),
    "prompt": ("question",),
}
#: The canonical ``winner`` values, in the order of their categories.
WINNERS: tuple[str, ...] = tuple(WINNER_OUTCOME)

_WINNER_REASON = "is not one of " + ", ".join(WINNERS)
_Mask = npt.NDArray[np.bool_]
#: Fields that hold one value: an object or a list there is a wrong type, kept whole (not
#: flattened into dotted columns, nor dropped as a list column) for validation to reject.
_SCALAR_FIELDS = frozenset(BATTLE_COLUMNS).union(*ALIASES.values())
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_TEXT = "is not valid Unicode text (it holds a lone surrogate)"


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


class _Whole:
    """A dict in a one-value field (``model_a``, ``user_id``, ...), kept from flattening."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


class _InvalidText(_Whole):
    """A string, or a field name (``name=True``), holding a lone surrogate (JSON "\\ud800")."""

    __slots__ = ("name",)

    def __init__(self, value: str, name: bool = False) -> None:
        super().__init__(value)
        self.name = name


def _is_text(text: str) -> bool:
    return text.isascii() or _SURROGATE.search(text) is None


def _mark_invalid_text(record: dict[Any, Any]) -> dict[Any, Any]:
    """``record`` with each string holding a lone surrogate wrapped in :class:`_InvalidText`."""
    marked: dict[Any, Any] = {}
    for key, value in record.items():
        if isinstance(key, str) and not _is_text(key):
            marked[key.encode("utf-8", "backslashreplace").decode()] = _InvalidText(key, True)
        elif isinstance(value, str) and not _is_text(value):
            marked[key] = _InvalidText(value)
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
        if not any(_bool(frame[c].map(_is_invalid_text)).any() for c in kept):
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
    nested = [c for c in _objects(frame) if _bool(frame[c].map(_is_dict)).any()]
    if not nested:
        return frame
    whole = [c for c in nested if c in _SCALAR_FIELDS]
    if whole:
        dicts = [
            {k: _Whole(v) if k in whole and _is_dict(v) else v for k, v in d.items()} for d in dicts
        ]
    return pd.json_normalize(dicts, sep=".")


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def normalise_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Rename aliases, extract the prompt and drop list-valued columns (but not lists in
    one-value fields such as ``model_a``: validation rejects those).

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw records with source column names; not modified.

    Returns
    -------
    pandas.DataFrame
        Same rows; values untouched, so that :func:`validate_battles` sees them as read.
    """
    renames: dict[str, str] = {}
    for canonical, aliases in ALIASES.items():
        if canonical not in frame.columns:
            alias = next((a for a in aliases if a in frame.columns), None)
            if alias is not None:
                renames[alias] = canonical
    out = frame.rename(columns=renames) if renames else frame.copy(deep=False)
    if "prompt" not in out.columns and "conversation_a" in out.columns:
        out["prompt"] = out["conversation_a"].map(_first_user_turn)
    listy = [c for c in out.columns if c not in _SCALAR_FIELDS and _is_list_column(out[c])]
    return out.drop(columns=listy) if listy else out


def _first_user_turn(conversation: Any) -> str | _InvalidText | None:
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
            return content if _is_text(content) else _InvalidText(content)
    return None


def _is_list_column(column: pd.Series) -> bool:
    first = column.dropna().iloc[:1].tolist() if column.dtype == object else []
    return bool(first) and isinstance(first[0], list | tuple | np.ndarray)


def _bool(values: Any) -> _Mask:
    """Boolean array from a possibly nullable boolean result, NA counting as False."""
    if isinstance(values, pd.Series):
        return values.astype("boolean").fillna(False).to_numpy(dtype=np.bool_)
    return np.asarray(values, dtype=np.bool_)


def _non_string(column: pd.Series) -> _Mask:
    """True where a present value is not a ``str``."""
    if isinstance(column.dtype, pd.StringDtype):
        return np.zeros(len(column), dtype=bool)
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object:
        column = column.astype(object)
        if pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
            return np.zeros(len(column), dtype=bool)
        return _bool(column.map(lambda v: not isinstance(v, str), na_action="ignore"))
    return _bool(column.notna())


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
    flags = _bool(values.map(lambda v: isinstance(v, bool | np.bool_), na_action="ignore"))
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
        missing = _bool(column.isna())
        wrong_type = ~missing & _non_string(column)
        text = _as_text(column, ~missing & ~wrong_type)
        checks += [
            (name, missing, "is missing"),
            (name, wrong_type, "is not a string"),
            (name, _bool(text.str.strip().eq("")), "is empty"),
        ]
        models[name] = text
    if not allow_self_battles:
        same = _bool(models["model_a"].eq(models["model_b"]))
        checks.append(("model_b", same, "is the same model as model_a"))
    if "winner" in frame.columns:
        winner = frame["winner"]
        missing = _bool(winner.isna())
        text = _as_text(winner, ~missing & ~_non_string(winner))
        checks += [
            ("winner", missing, "is missing"),
            ("winner", ~missing & ~_bool(text.isin(WINNERS)), _WINNER_REASON),
        ]
    else:
        checks.append(("winner", np.ones(n, dtype=bool), "is missing"))
    if "tstamp" in frame.columns:
        stamps = frame["tstamp"]
        bad = _bool(stamps.notna()) & ~np.isfinite(_numbers(stamps).to_numpy())
        checks.append(("tstamp", bad, "is not a finite number (unix seconds)"))
    for name in ("battle_id", "user_id", "prompt"):
        if name in frame.columns:
            checks.append((name, _not_scalar(frame[name]), "is not a string or a number"))
    for name, limit in (max_chars or {}).items():
        if name in frame.columns:
            checks.append((name, _longer(frame[name], limit), f"is longer than {limit} characters"))

    for name in frame.columns:  # an object under an alias kept as a label, e.g. "judge"
        if frame[name].dtype == object:
            whole = _bool(frame[name].map(lambda v: isinstance(v, _Whole)))
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
    return value.value if isinstance(value, _Whole) else value


def _longer(column: pd.Series, limit: int) -> _Mask:
    """True where a value is a string of more than ``limit`` characters."""
    return _bool(column.map(lambda v: isinstance(v, str) and len(v) > limit))


def _not_scalar(column: pd.Series) -> _Mask:
    """True where a present value is neither a string nor a number (booleans are not)."""
    if pd.api.types.is_bool_dtype(column.dtype):
        return _bool(column.notna())
    if column.dtype != object:
        return np.zeros(len(column), dtype=bool)
    return _bool(
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
        for i in np.flatnonzero(_bool(frame[name].map(lambda v: isinstance(v, _InvalidText)))):
            if not flagged[i]:
                mark = values[i]
                if mark.name:
                    reason = f"field name {mark.value!r} {_NOT_TEXT}"
                    errors.append(RowError(int(i), None, None, reason))
                else:
                    errors.append(RowError(int(i), str(name), mark.value, _NOT_TEXT))
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
    present = _bool(ids.notna())
    if not present.any():
        return frame, 0
    chunk_ids = set(ids[present].to_numpy(dtype=object))
    repeated = (chunk_ids & seen) | (chunk_ids & known)  # set algebra in C, no row loop
    duplicate = present & _bool(ids.duplicated())
    if repeated:
        duplicate |= _bool(ids.isin(repeated))
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
        One battle per item, with the fields of SPEC section 1 (aliases allowed).
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
