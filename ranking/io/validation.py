"""Row-level validation of battle records (docs/SPEC.md section 1).

In-memory frames and records only, no files, so that the file reader
(:mod:`ranking.io.ingest`) and ``POST /v1/battles`` share one definition of a valid battle:
:func:`validate_battles` (one boolean mask per check), and :func:`battles_from_records`
chaining it for dicts with :func:`ranking.io.records.normalise_columns` (aliases, prompt,
nested columns), :func:`ranking.io.battle_frame.to_battle_frame` (compact dtypes) and
:func:`ranking.io.battle_frame.drop_duplicate_ids`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.io.battle_frame import (
    WINNERS,
    drop_duplicate_ids,
    numbers,
    to_battle_frame,
)
from ranking.io.column_map import BATTLE_COLUMNS, DEFAULT_MAP, ColumnMap
from ranking.io.records import (
    BadNumber,
    InvalidText,
    Whole,
    bool_mask,
    frame_from_records,
    mark_bad_numbers,
    normalise_columns,
)
from ranking.io.text_checks import (
    MAX_ANSWER_CHARS,
    MAX_LABEL_CHARS,
    MAX_NAME_CHARS,
    MAX_PROMPT_CHARS,
    NOT_TEXT,
    number_problem,
    short_repr,
    text_problem,
)

__all__ = ["RowError", "battles_from_records", "validate_battles"]

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
            shown = "" if self.value is None else f"{short_repr(self.value)} "
            text = f"field {self.field!r}: value {shown}{self.reason}"
        return f"{text} ({self.detail})" if self.detail else text

    @property
    def summary(self) -> str:
        """The message without value or detail, for counting reasons."""
        return RowError(self.index, self.field, None, self.reason).message

    def to_dict(self) -> dict[str, Any]:
        """The error as the REST service reports it: ``{"index": i, "error": "..."}``."""
        return {"index": self.index, "error": self.message}


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


def validate_battles(
    frame: pd.DataFrame,
    *,
    allow_self_battles: bool = False,
    max_chars: Mapping[str, int] | None = None,
    columns: ColumnMap | None = None,
    strict_text: bool = False,
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
        Output of :func:`ranking.io.records.normalise_columns`.
    allow_self_battles : bool, default False
        Let ``model_b`` equal ``model_a`` pass (a file reader drops and counts such
        votes, which carry no information, instead of rejecting the file).
    max_chars : mapping of str to int, optional
        Longest string allowed in a field, e.g. ``{"user_id": 256}``.
    columns : ColumnMap, optional
        The map the frame was normalised with: a winner must then be one of its
        ``winner_values`` (when it has any), as read (:meth:`ColumnMap.winners` makes
        them canonical).
    strict_text : bool, default False
        Also refuse, in every field and field name, what the service does not store
        (:func:`ranking.io.text_checks.text_problem`): control characters (a prompt may
        hold tabs and line breaks), and strings longer than ``max_chars`` says, else
        256 characters (a model, a user or battle id, a field name), 20,000 (a prompt)
        or 1,000 (a label).

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
        shape = columns or DEFAULT_MAP
        accepted = bool_mask(text.isin(list(shape.accepted_winners)))
        reason = shape.unmapped_reason() if shape.winner_values else _WINNER_REASON
        checks += [("winner", missing, "is missing"), ("winner", ~missing & ~accepted, reason)]
    else:
        checks.append(("winner", np.ones(n, dtype=bool), "is missing"))
    checks += _number_checks(frame)  # before tstamp's: a 400-digit stamp is named as such
    if "tstamp" in frame.columns:
        stamps = frame["tstamp"]
        bad = bool_mask(stamps.notna()) & ~np.isfinite(numbers(stamps).to_numpy())
        checks.append(("tstamp", bad, "is not a finite number (unix seconds)"))
    for name in ("battle_id", "user_id", "prompt"):  # a numeric prompt: an id of its text
        if name in frame.columns:
            checks.append((name, _not_scalar(frame[name]), "is not a string or a number"))
    for name, limit in (max_chars or {}).items():
        if name in frame.columns:
            checks.append((name, _longer(frame[name], limit), f"is longer than {limit} characters"))
    if strict_text:
        checks += _text_checks(frame, max_chars or {})

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


_DEFAULT_CHARS = {"model_a": MAX_NAME_CHARS, "model_b": MAX_NAME_CHARS, "prompt": MAX_PROMPT_CHARS}
_DEFAULT_CHARS |= {"battle_id": MAX_NAME_CHARS, "user_id": MAX_NAME_CHARS}
_DEFAULT_CHARS |= {"answer_a": MAX_ANSWER_CHARS, "answer_b": MAX_ANSWER_CHARS}
#: Free-text fields, in which tab, line feed and carriage return are allowed.
_LINES = frozenset(("prompt", "answer_a", "answer_b"))


def _number_reason(value: Any) -> str | None:
    if isinstance(value, BadNumber):
        return value.reason
    return number_problem(value)


def _grouped(name: Any, reasons: pd.Series) -> list[tuple[Any, _Mask, str]]:
    """One check a distinct reason of ``reasons`` (``None`` where the value passes)."""
    found = reasons.dropna()
    return [(name, bool_mask(reasons.eq(r)), str(r)) for r in found.unique()]


def _number_checks(frame: pd.DataFrame) -> list[tuple[str, _Mask, str]]:
    """Numbers no field can hold (:func:`number_problem`, :class:`BadNumber`), by field;
    in a column of floats, an infinity (``1e400`` as JSON reads it, ``inf`` in a CSV)."""
    checks: list[tuple[str, _Mask, str]] = []
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object:
            reasons = column.map(_number_reason, na_action="ignore").astype(object)
            checks += _grouped(str(name), reasons)
        elif pd.api.types.is_float_dtype(column.dtype):
            infinite = np.isinf(column.to_numpy(dtype="float64", na_value=np.nan))
            if infinite.any():
                checks.append((str(name), infinite, "is not a finite number"))
    return checks


def _text_checks(frame: pd.DataFrame, max_chars: Mapping[str, int]) -> list[Any]:
    """Strings, and field names, the service does not store (``strict_text``)."""
    checks: list[Any] = []
    for name in frame.columns:
        column = frame[name]
        problem = text_problem(str(name), MAX_NAME_CHARS)
        if problem is not None:
            checks.append((None, bool_mask(column.notna()), f"field name {str(name)!r} {problem}"))
        if not (column.dtype == object or isinstance(column.dtype, pd.StringDtype)):
            continue
        limit = max_chars.get(name, _DEFAULT_CHARS.get(name, MAX_LABEL_CHARS))
        lines = name in _LINES
        reasons = column.astype(object).map(
            lambda v, n=limit, f=lines: text_problem(v, n, lines=f) if isinstance(v, str) else None
        )
        checks += _grouped(str(name), reasons.astype(object))
    return checks


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


def battles_from_records(
    records: Sequence[Any],
    *,
    seen_ids: set[str] | None = None,
    known_ids: Set[str] = frozenset(),
    max_chars: Mapping[str, int] | None = None,
    strict_text: bool = False,
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
    strict_text : bool, default False
        Refuse what the service does not store (see :func:`validate_battles`).

    Returns
    -------
    battles : pandas.DataFrame
        The accepted battles, typed as by :func:`ranking.io.battle_frame.to_battle_frame`.
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
    marked = [mark_bad_numbers(records[i]) for i in objects]  # NaN would look missing
    frame = normalise_columns(frame_from_records(marked))
    row_errors = validate_battles(frame, max_chars=max_chars, strict_text=strict_text)
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
