"""Battle logs read column by column with pyarrow: the fast path of the file reader.

CSV (every column read as text, so that ids such as ``"007"`` stay intact), JSON Lines
and Parquet are read into Arrow tables a block at a time (:mod:`ranking.io.arrow_tables`);
:class:`ColumnarFile` checks each block with vectorised masks (models present and
non-empty, a canonical winner, a finite time stamp) and keeps it in compact form (model
and winner codes, Arrow strings), so that memory follows the typed frame, as on the row
path. The fast path only accepts what it can decide exactly: at the first invalid
record, or anything else it does not handle (a parse error, a value of an unexpected
type, a lone surrogate, ragged CSV rows), it raises :class:`Fallback`, and
:mod:`ranking.io.ingest` reads the file again by rows (:mod:`ranking.io.chunks` and
:mod:`ranking.io.validation`), which names the file, row, field and value of each error.
Valid files give the same battle frame either way. Ids met before are found by
:func:`ranking.io.duplicate_ids.repeated_ids`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ranking.io.arrow_tables import NA_TEXT, Fallback, missing
from ranking.io.battle_frame import WINNERS
from ranking.io.column_map import ALIASES, BATTLE_COLUMNS, DEFAULT_MAP, ColumnMap, Renaming

__all__ = ["ColumnarFile"]

_TRUE, _FALSE = ("True", "TRUE", "true"), ("False", "FALSE", "false")
#: Columns kept as text whatever they look like (the CSV row path reads them as ``str``),
#: with those a column map names.
_TEXT = frozenset(c for c in BATTLE_COLUMNS if c != "tstamp").union(*ALIASES.values())
#: One-value fields: a struct or a list there is an error, for the row path to name.
_SCALAR = frozenset(BATTLE_COLUMNS).union(*ALIASES.values())
_WINNERS = pa.array(WINNERS, pa.string())
_IDS = ("battle_id", "user_id", "prompt")


# -- tables to the battle frame ---------------------------------------------------------------


def _flatten(table: pa.Table) -> pa.Table:
    """Struct columns as dotted names, list columns dropped, as on the row path."""
    for field in table.schema:
        nested = pa.types.is_struct(field.type) or pa.types.is_list(field.type)
        if nested and field.name in _SCALAR:
            raise Fallback(f"field {field.name!r} holds an object or a list")
        if pa.types.is_large_list(field.type) or pa.types.is_map(field.type):
            raise Fallback(f"field {field.name!r} holds a map or a large list")
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def _normalise(table: pa.Table, columns: ColumnMap) -> tuple[pa.Table, Renaming]:
    """The columns that hold fields renamed (:meth:`ColumnMap.plan`, returned too), the
    prompt taken from ``conversation_a``, list columns dropped."""
    table = _flatten(table)
    plan = columns.plan(table.column_names)
    if plan.dropped:
        table = table.drop_columns(list(plan.dropped))
    if any(source != name for source, name in plan.renames.items()):
        table = table.rename_columns([plan.renames.get(n, n) for n in table.column_names])
    names = table.column_names
    if plan.prompt_from_conversation and "prompt" not in names and "conversation_a" in names:
        table = table.append_column("prompt", _first_user_turn(table["conversation_a"]))
    lists = [f.name for f in table.schema if pa.types.is_list(f.type)]
    return (table.drop_columns(lists) if lists else table), plan


def _lists(table: pa.Table) -> set[str]:
    """The list columns of a block, which :func:`_normalise` drops."""
    return {f.name for f in _flatten(table).schema if pa.types.is_list(f.type)}


def _first_user_turn(conversations: pa.ChunkedArray) -> pa.Array:
    """The content of the first turn with role ``user`` of each conversation (or null)."""
    if not pa.types.is_list(conversations.type):
        return pa.nulls(len(conversations), pa.string())  # not a conversation: no prompt
    turns = conversations.type.value_type
    if not (pa.types.is_struct(turns) and {"role", "content"} <= {f.name for f in turns}):
        raise Fallback("conversation_a is not a list of {role, content}")
    if not pa.types.is_string(turns.field("content").type):
        raise Fallback("conversation_a holds content that is not text")
    array = conversations.combine_chunks()
    flat = pc.list_flatten(array)
    parents = pc.list_parent_indices(array).to_numpy()
    user = pc.fill_null(pc.equal(pc.struct_field(flat, "role"), "user"), False)
    rows = parents[user.to_numpy(zero_copy_only=False)]
    first_turn = np.flatnonzero(user.to_numpy(zero_copy_only=False))
    rows, firsts = np.unique(rows, return_index=True)
    take = np.full(len(array), -1, dtype=np.int64)
    take[rows] = first_turn[firsts]
    content = pc.struct_field(flat, "content")
    return pc.take(content, pa.array(take, mask=take < 0))


def _text(column: pa.ChunkedArray, name: str, *, numbers: bool = False) -> pa.ChunkedArray:
    """A column as Arrow strings (or large strings, kept); integers too where ``numbers``
    (ids such as 17)."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column
    if pa.types.is_null(kind):
        return column.cast(pa.string())
    if numbers and pa.types.is_integer(kind):
        return column.cast(pa.string())
    if numbers and pa.types.is_floating(kind):  # ids such as 17 stored as 17.0
        values = column.to_numpy()
        whole = values[~np.isnan(values)]
        if (np.abs(whole) < 2**53).all() and (whole == np.round(whole)).all():
            return column.cast(pa.int64()).cast(pa.string())
    raise Fallback(f"field {name!r} is of type {kind}")


def _codes(column: pa.ChunkedArray, name: str) -> pa.DictionaryArray:
    """Text dictionary-encoded (as read, for CSV); :class:`Fallback` if one is missing."""
    if column.null_count:
        raise Fallback(f"field {name!r} is missing")
    if pa.types.is_dictionary(column.type) and pa.types.is_string(column.type.value_type):
        encoded = column.unify_dictionaries().combine_chunks()
        return encoded.cast(pa.dictionary(pa.int32(), pa.string()))
    text = _text(column, name)
    if pa.types.is_large_string(text.type):
        text = text.cast(pa.string())
    return pc.dictionary_encode(text).combine_chunks()  # one dictionary


def _models(
    column: pa.ChunkedArray, name: str, na: frozenset[str] = frozenset()
) -> pa.DictionaryArray:
    """Model names, dictionary-encoded; :class:`Fallback` if one is missing (null, or one
    of the texts ``na``) or empty."""
    encoded = _codes(column, name)
    if any(not v.strip() or v in na for v in encoded.dictionary.to_pylist()):
        raise Fallback(f"field {name!r} is missing or empty")
    return encoded


def _winners(column: pa.ChunkedArray, columns: ColumnMap) -> npt.NDArray[np.int8]:
    """Codes of the canonical winners (as ``columns`` maps the values read);
    :class:`Fallback` if one is missing or not one."""
    encoded = _codes(column, "winner")
    canonical = pa.array(columns.winners(encoded.dictionary.to_pylist()), pa.string())
    codes = pc.index_in(canonical, value_set=_WINNERS)
    if codes.null_count:
        raise Fallback("field 'winner' is not canonical")
    kept = codes.to_numpy(zero_copy_only=False).astype(np.int8)
    return np.take(kept, encoded.indices.to_numpy(zero_copy_only=False))


def _no_empty(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Empty strings as missing (none in CSV: pandas' missing values include "")."""
    empty = pc.equal(pc.binary_length(column), 0)
    return pc.if_else(empty, None, column) if pc.any(empty).as_py() else column


def _finite(column: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    """``column``; :class:`Fallback` when it holds a float that is not finite, which the row
    path refuses by row, field and value (Arrow reads ``NaN`` as a number, not missing)."""
    if pa.types.is_floating(column.type) and pc.any(pc.invert(pc.is_finite(column))).as_py():
        raise Fallback(f"field {name!r} is not finite")
    return column


def _stamps(column: pa.ChunkedArray) -> npt.NDArray[np.float64]:
    kind = column.type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_null(kind)):
            raise Fallback(f"field 'tstamp' is of type {kind}")
    try:
        values = column.cast(pa.float64()).to_numpy()
    except pa.ArrowInvalid:
        raise Fallback("field 'tstamp' holds text that is not a number") from None
    if np.isinf(values).any() or np.count_nonzero(np.isnan(values)) > column.null_count:
        raise Fallback("field 'tstamp' is not finite")
    return values


class ColumnarFile:
    """The valid battles of one file, block by block, in compact columns.

    Parameters
    ----------
    infer_labels : bool
        Give text label columns the types ``pandas.read_csv`` would (CSV), instead of
        keeping the types Arrow read (JSON Lines, Parquet).
    missing_as_nan : bool
        Missing values of label columns of mixed Python values are NaN (CSV, JSON Lines,
        as pandas makes them from text or dicts) rather than None (Parquet).
    missing_text : bool, default False
        Text columns hold what ``pandas.read_csv`` reads as missing as text (CSV, see
        :func:`ranking.io.arrow_tables.missing`): read it as missing.
    columns : ColumnMap, optional
        Which column holds which field, and what the winner values mean (by default
        docs/SPEC.md section 1).
    """

    def __init__(
        self,
        *,
        infer_labels: bool,
        missing_as_nan: bool,
        missing_text: bool = False,
        columns: ColumnMap | None = None,
    ) -> None:
        self.columns = columns or DEFAULT_MAP
        self._text_labels = _TEXT | self.columns.sources  # labels not typed from text
        #: The column the battle ids come from (as the file names it), if any.
        self.id_column: str | None = None
        self.infer_labels = infer_labels
        self.missing_as_nan = missing_as_nan
        self.na = NA_TEXT if missing_text else frozenset()
        self.n_read = self.n_self = 0
        self._models: list[tuple[pa.DictionaryArray, pa.DictionaryArray]] = []
        self._winners: list[npt.NDArray[np.int8]] = []
        self._stamps: list[npt.NDArray[np.float64] | None] = []
        self._text: dict[str, list[pa.ChunkedArray | None]] = {}
        self._labels: dict[str, list[pa.ChunkedArray | None]] = {}
        self._sizes: list[int] = []
        self._dropped: set[str] = set()  # list columns: dropped wherever met

    def add(self, table: pa.Table) -> None:
        """Check one block and keep its valid battles; :class:`Fallback` if any is invalid."""
        self._dropped |= _lists(table)
        table, plan = _normalise(table, self.columns)
        self.id_column = plan.battle_id
        names = table.column_names
        if "winner" not in names or "model_a" not in names or "model_b" not in names:
            raise Fallback("a required field is missing")
        self.n_read += table.num_rows
        a = _models(table["model_a"], "model_a", self.na)
        b = _models(table["model_b"], "model_b", self.na)
        winner = _winners(table["winner"], self.columns)  # (a text read as missing is not a winner)
        stamps = _stamps(table["tstamp"]) if "tstamp" in names else None
        text = {n: _text(table[n], n, numbers=True) for n in _IDS if n in names}
        labels = {n: table[n] for n in names if n not in BATTLE_COLUMNS}
        for name, column in labels.items():  # NaN, -Infinity, a 400-digit integer (inf)
            _finite(column, name)
        if self.na:  # CSV: "NA", "null", an empty string, ... are missing
            text = {n: missing(column) for n, column in text.items()}
            labels = {n: missing(column) for n, column in labels.items()}
        if not self.infer_labels:  # (CSV reads an empty string as missing already)
            text = {n: _no_empty(column) for n, column in text.items()}
        b_in_a = pc.index_in(b.dictionary, value_set=a.dictionary).to_numpy(zero_copy_only=False)
        codes_a = a.indices.to_numpy()
        same = np.nan_to_num(b_in_a, nan=-1)[b.indices.to_numpy()] == codes_a
        n_self = int(same.sum())
        if n_self:
            keep = pa.array(~same)
            a, b = pc.filter(a, keep), pc.filter(b, keep)
            winner = winner[~same]
            stamps = None if stamps is None else stamps[~same]
            text = {n: pc.filter(c, keep) for n, c in text.items()}
            labels = {n: pc.filter(c, keep) for n, c in labels.items()}
        self.n_self += n_self
        index = len(self._sizes)
        self._sizes.append(len(a))
        self._models.append((a, b))
        self._winners.append(winner)
        self._stamps.append(stamps)
        for store, columns in ((self._text, text), (self._labels, labels)):
            for name in columns:
                store.setdefault(name, [None] * index)
            for name, kept in store.items():
                kept.append(columns.get(name))

    def frame(self) -> pd.DataFrame:
        """The typed battle frame of the battles kept, as :func:`to_battle_frame` makes it."""
        if not self.n_read:
            raise Fallback("no records")  # the row path keeps the columns of an empty file
        dictionaries = [d for a, b in self._models for d in (a.dictionary, b.dictionary)]
        models = pd.Index(sorted(set(pa.chunked_array(dictionaries).to_pylist())))
        names = pa.array(models.tolist(), pa.string())
        codes = {"model_a": [], "model_b": []}  # type: dict[str, list[npt.NDArray[Any]]]
        for pair in self._models:
            for name, array in zip(codes, pair, strict=True):
                remap = pc.index_in(array.dictionary, value_set=names).to_numpy()
                remap = remap.astype(np.int32)
                codes[name].append(np.take(remap, array.indices.to_numpy(zero_copy_only=False)))
        n = sum(self._sizes)
        columns: dict[str, Any] = {}
        for name in BATTLE_COLUMNS:
            if name in codes:
                columns[name] = pd.Categorical.from_codes(np.concatenate(codes[name]), models)
            elif name == "winner":
                winners = np.concatenate(self._winners)
                columns[name] = pd.Categorical.from_codes(winners, pd.Index(WINNERS))
            elif name == "tstamp":
                stamps = [np.full(k, np.nan) if s is None else s for s, k in self._parts()]
                columns[name] = np.concatenate(stamps)
            else:
                columns[name] = self._strings(self._text.get(name), n)
        out = pd.DataFrame(columns, index=pd.RangeIndex(n), copy=False)  # arrays made here
        for name in self._dropped.intersection(self._labels):
            if any(p is not None and not pa.types.is_null(p.type) for p in self._labels[name]):
                raise Fallback(f"field {name!r} holds lists and other values")
            del self._labels[name]
        labels = {name: self._label(name, parts) for name, parts in self._labels.items()}
        if self.missing_as_nan:
            for name, label in labels.items():
                if label.dtype == object:
                    labels[name] = label.where(label.notna(), np.nan)
        return pd.concat([out, pd.DataFrame(labels, index=out.index)], axis=1) if labels else out

    def _parts(self) -> Iterator[tuple[npt.NDArray[np.float64] | None, int]]:
        return zip(self._stamps, self._sizes, strict=True)

    def _filled(self, parts: list[pa.ChunkedArray | None], kind: pa.DataType) -> pa.ChunkedArray:
        chunks = [pa.nulls(k, kind) if p is None else p.cast(kind) for p, k in self._pairs(parts)]
        return pa.chunked_array([c for p in chunks for c in _chunks(p)], kind)

    def _pairs(self, parts: list[pa.ChunkedArray | None]) -> Iterator[tuple[Any, int]]:
        return zip(parts, self._sizes, strict=True)

    def _strings(self, parts: list[pa.ChunkedArray | None] | None, n: int) -> pd.Series:
        if parts is None:
            return pd.Series(pd.NA, index=pd.RangeIndex(n), dtype="string")
        column = self._filled(parts, pa.large_string())
        return pd.Series(pd.arrays.ArrowStringArray(column), index=pd.RangeIndex(n))

    def _label(self, name: str, parts: list[pa.ChunkedArray | None]) -> pd.Series:
        if self.infer_labels:  # CSV: text throughout, typed once for the whole column
            text = self._filled(parts, pa.string())
            typed = text if name in self._text_labels else _finite(_infer(text), name)
            return typed.to_pandas()
        kinds = {p.type for p in parts if p is not None and not pa.types.is_null(p.type)}
        if len(kinds) <= 1:  # one type, missing in some blocks
            return self._filled(parts, kinds.pop() if kinds else pa.null()).to_pandas()
        # types that differ from block to block: as pandas concatenates frames
        pieces = [
            pd.Series(np.nan, index=range(k)) if p is None else p.to_pandas()
            for p, k in self._pairs(parts)
        ]
        return pd.concat(pieces, ignore_index=True)


def _chunks(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def _infer(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A text label column as ``pandas.read_csv`` would type it: integers, numbers,
    booleans (``True``, ``false``, ...), else text; all missing as numbers."""
    if column.null_count == len(column):
        return column.cast(pa.float64())
    for kind in (pa.int64(), pa.float64()):
        try:
            return column.cast(kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    present = pc.sum(pc.is_valid(column)).as_py()
    if pc.sum(pc.is_in(column, value_set=pa.array(_TRUE + _FALSE))).as_py() == present:
        return pc.if_else(pc.is_valid(column), pc.is_in(column, value_set=pa.array(_TRUE)), None)
    return column
