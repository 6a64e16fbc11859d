"""Reading battle logs from files (docs/SPEC.md section 1).

Formats are chosen by suffix (:data:`ranking.io.formats.SUFFIXES`): JSON Lines, JSON
arrays (FastChat ``clean_battle_*.json`` included), CSV and Parquet, each optionally
gzip-compressed. Each file is read by :class:`ranking.io.file_reader.FileReader`: by the
columnar fast path where its format has one, by rows only where that one cannot decide.
Either way memory follows the compact typed frame rather than the raw text; repeated
ids are dropped at the end, in one hash pass over all the files. A log in its own shape
is read through a :class:`ranking.io.column_map.ColumnMap` (both paths rename its
columns by :meth:`~ranking.io.column_map.ColumnMap.plan`), its prompt ids joined to
:class:`ranking.io.prompt_texts.PromptTexts`. An id column whose repeats carry
different votes is not a battle id: the read is refused
(:class:`~ranking.io.chunks.NotABattleIdError`) rather than dropping real votes as
repeats; exact repeats are dropped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ranking.io.chunks import Chunk, PathArg, row_numbers
from ranking.io.column_map import ColumnMap
from ranking.io.file_reader import FileReader, size
from ranking.io.prompt_texts import PromptTexts
from ranking.progress import Progress, start

__all__ = ["IngestResult", "read_battles", "read_frame"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestResult:
    """The battles read by :func:`read_battles` and what was left out.

    Attributes
    ----------
    battles : pandas.DataFrame
        The typed battle frame (see :func:`ranking.io.battle_frame.to_battle_frame`).
    n_read : int
        Records read from the files, including skipped and duplicate ones.
    n_skipped : int
        Invalid records skipped (only with ``skip_invalid=True``).
    n_duplicates : int
        Valid records dropped because their ``battle_id`` had already been read (with
        the same vote, or in ``seen_ids``).
    skipped_reasons : dict of str to int
        Number of skipped records per reason, e.g.
        ``{"field 'winner': value is not one of model_a, ...": 3}``.
    n_self_battles : int
        Valid records of a model against itself, dropped: they say nothing about
        which model is better (the real Arena log holds ten).
    """

    battles: pd.DataFrame
    n_read: int
    n_skipped: int
    n_duplicates: int
    skipped_reasons: dict[str, int]
    n_self_battles: int = 0


def read_battles(
    paths: PathArg | Sequence[PathArg],
    *,
    skip_invalid: bool = False,
    seen_ids: set[str] | None = None,
    chunksize: int = 100_000,
    progress: Progress | None = None,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
) -> IngestResult:
    """Read, validate and de-duplicate one or more battle logs into one frame.

    Parameters
    ----------
    paths : path or sequence of paths
        Battle logs with a suffix from :data:`ranking.io.formats.SUFFIXES`; read in the order given.
    skip_invalid : bool, default False
        Skip invalid records and count them instead of rejecting the whole read.
    seen_ids : set of str, optional
        Battle ids already ingested elsewhere: records repeating one are dropped as
        duplicates. On success the ids of the battles returned are added to it; a
        failed read leaves it unchanged.
    chunksize : int, default 100_000
        Records converted at a time.
    progress : Progress, optional
        Told of one stage a file, ``"reading FILE"``, in bytes of the file as stored.
    columns : ColumnMap, optional
        Which column holds which field and what the winner values mean, for logs in
        their own shape (by default docs/SPEC.md section 1, aliases included).
    prompts : PromptTexts, optional
        Texts of the prompt ids the logs hold in their ``prompt`` field: each id is
        replaced by its text (an id without one is invalid).

    Returns
    -------
    IngestResult

    Raises
    ------
    BattleLogError
        For a file that cannot be read (missing, unknown suffix, malformed, truncated,
        no required column) and, unless ``skip_invalid``, for the first invalid record.
    ColumnMapError
        When ``columns`` names a column a file lacks (a :class:`BattleLogError`).
    NotABattleIdError
        When rows repeating an id carry different votes (a :class:`BattleLogError`): the
        id column is not a battle id; name the right one, or none, in ``columns``.
    """
    files = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not files:
        raise ValueError("Argument 'paths' must name at least one battle log, not none.")
    if chunksize < 1:
        raise ValueError(f"Argument 'chunksize' must be a positive integer, not {chunksize!r}.")
    known: set[str] | frozenset[str] = frozenset() if seen_ids is None else seen_ids
    reader = FileReader(skip_invalid, known, columns, prompts)
    for file in files:
        advance = start(progress, _reading(file), size(file), "B")
        reader.read_file(file, chunksize, advance)
    result = _result(reader)
    if seen_ids is not None:
        seen_ids.update(result.battles["battle_id"].dropna().tolist())
    logger.info(
        "read %d battles, skipped %d, %d duplicates",
        len(result.battles),
        result.n_skipped,
        result.n_duplicates,
    )
    return result


def read_frame(
    frame: pd.DataFrame,
    source: PathArg,
    *,
    skip_invalid: bool = False,
    first_row: int = 1,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
) -> IngestResult:
    """Validate, de-duplicate and type battle records already read into a frame.

    What :func:`read_battles` does to each chunk of a file, for records read by someone
    else: a partition of a Parquet dataset read by ``dask.dataframe``, for instance.

    Parameters
    ----------
    frame : pandas.DataFrame
        Raw records, one a row, with the fields of docs/SPEC.md section 1 (aliases allowed).
    source : path or str
        What errors name as the file.
    skip_invalid : bool, default False
        Skip invalid records and count them instead of rejecting the frame.
    first_row : int, default 1
        Record number of the first row, for error messages.
    columns : ColumnMap, optional
        Which column holds which field (see :func:`read_battles`).
    prompts : PromptTexts, optional
        Texts of the frame's prompt ids (see :func:`read_battles`).

    Returns
    -------
    IngestResult
        The frame's battles and what was left out, counted as by :func:`read_battles`.

    Raises
    ------
    BattleLogError
        For a missing required column and, unless ``skip_invalid``, the first invalid
        record.
    """
    reader = FileReader(skip_invalid, frozenset(), columns, prompts)
    rows = row_numbers(first_row - 1, len(frame))
    reader.add(source, Chunk(frame.reset_index(drop=True), rows, []), check_columns=True)
    return _result(reader)


def _result(reader: FileReader) -> IngestResult:
    """What ``reader`` read, settled, and the counts of what was left out."""
    battles, n_duplicates = reader.settled()
    reasons = reader.reasons
    return IngestResult(
        battles,
        reader.n_read,
        sum(reasons.values()),
        n_duplicates,
        dict(reasons),
        reader.n_self,
    )


def _reading(file: PathArg) -> str:
    """The progress stage of reading ``file``."""
    return f"reading {os.path.basename(os.fspath(file))}"
