"""Prompt texts kept apart from the votes, joined to them by id.

Some logs name each vote's prompt by an id into a file of prompts (LLMFAO's
``crowd-comparisons.csv`` and ``prompts.jsonl``). :func:`read_prompt_texts` reads such a
file (JSON Lines, a JSON array or CSV, each optionally gzip-compressed) into
:class:`PromptTexts`; :func:`ranking.io.ingest.read_battles` takes it and replaces each
vote's prompt id by its text.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.io.chunks import BattleLogError, PathArg

__all__ = ["PromptTexts", "read_prompt_texts"]


@dataclass(frozen=True)
class PromptTexts:
    """Prompt texts by id.

    Attributes
    ----------
    texts : mapping of str to str
        Prompt id (as text: ``8``, not ``8.0``) to the prompt's text.
    source : str
        Where they were read from, for messages.
    """

    texts: Mapping[str, str] = field(default_factory=dict)
    source: str = "the prompt texts"

    def __hash__(self) -> int:
        return hash((self.source, len(self.texts)))

    def lookup(self, ids: pd.Series) -> tuple[pd.Series, npt.NDArray[np.bool_]]:
        """The texts of prompt ids, and where an id is not among :attr:`texts`.

        Parameters
        ----------
        ids : pandas.Series
            Prompt ids as text (a battle frame's ``prompt`` column); missing ones stay
            missing.

        Returns
        -------
        texts : pandas.Series
            ``string`` dtype, NA where the id is missing or unknown.
        unknown : numpy.ndarray of bool
            True where an id is present but has no text here.
        """
        texts = ids.map(self.texts, na_action="ignore").astype("string")
        unknown = (ids.notna() & texts.isna()).to_numpy(dtype=bool)
        return texts, unknown


def _id_text(value: Any) -> str | None:
    """An id as text (``8`` for 8 and 8.0), or ``None`` for anything else."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return None


def side_records(path: PathArg) -> Iterator[tuple[int, Any]]:
    """The records of a file kept beside a log (prompt texts, answers), with their row
    numbers: JSON Lines, JSON or CSV, optionally gzip-compressed.

    Raises
    ------
    BattleLogError
        Naming the file, when it cannot be found, read or decoded (before any record).
    """
    try:
        with open(path, "rb") as raw:
            data = gzip.decompress(raw.read()) if os.fspath(path).endswith(".gz") else raw.read()
        text = data.decode("utf-8-sig")
    except FileNotFoundError:
        raise BattleLogError(path, "file not found") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BattleLogError(path, "cannot read file", detail=str(exc)) from None
    return _records(path, text)


def _records(file: PathArg, text: str) -> Iterator[tuple[int, Any]]:
    """The file's records with their 1-based row numbers (a CSV header is not a row)."""
    name = os.fspath(file).lower().removesuffix(".gz")
    if name.endswith(".csv"):
        yield from enumerate(csv.DictReader(io.StringIO(text, newline="")), start=1)
    elif name.endswith(".jsonl"):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    detail = f"{exc.msg} at column {exc.colno}"
                    error = BattleLogError(file, "malformed JSON", row=number, detail=detail)
                    raise error from None
    elif name.endswith(".json"):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            detail = f"{exc.msg} at line {exc.lineno}"
            raise BattleLogError(file, "malformed JSON", detail=detail) from None
        if not isinstance(records, list):
            raise BattleLogError(file, "expected a JSON array of prompt records")
        yield from enumerate(records, start=1)
    else:
        raise BattleLogError(file, "unknown file type; accepted: .jsonl, .json, .csv (or .gz)")


def read_prompt_texts(
    path: PathArg, *, id_column: str = "id", text_column: str = "text"
) -> PromptTexts:
    """Read prompt texts by id from a JSON Lines, JSON or CSV file.

    Parameters
    ----------
    path : path
        The file; ``.jsonl``, ``.json`` or ``.csv``, each optionally ``.gz``.
    id_column : str, default "id"
        The field holding each prompt's id (text, or a whole number).
    text_column : str, default "text"
        The field holding each prompt's text.

    Returns
    -------
    PromptTexts

    Raises
    ------
    BattleLogError
        Naming the file (and the row, field and value) for a file that cannot be read,
        a record without an id or a text, or an id given two different texts.
    """
    texts: dict[str, str] = {}
    for row, record in side_records(path):
        if not isinstance(record, dict):
            raise BattleLogError(path, "record is not an object", row=row)
        if id_column not in record or text_column not in record:
            missing = id_column if id_column not in record else text_column
            found = ", ".join(map(str, list(record)[:12]))
            raise BattleLogError(
                path, f"is missing (fields found: {found})", row=row, field=missing
            )
        key, prompt = _id_text(record[id_column]), record[text_column]
        if key is None:
            reason = "is not a prompt id (text or a whole number)"
            raise BattleLogError(path, reason, row=row, field=id_column, value=record[id_column])
        if not isinstance(prompt, str):
            raise BattleLogError(path, "is not text", row=row, field=text_column, value=prompt)
        if texts.setdefault(key, prompt) != prompt:
            reason = "is given two different texts"
            raise BattleLogError(path, reason, row=row, field=id_column, value=key)
    if not texts:
        raise BattleLogError(path, "holds no prompts")
    return PromptTexts(texts, os.fspath(path))
