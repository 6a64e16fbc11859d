"""Battle logs read as partitions on a Dask cluster, then repartitioned by user.

Each input file is read on a worker by :func:`ranking.io.ingest.read_battles` (the same
validation, error messages and de-duplication as the local path); a directory is read
as a Parquet dataset by ``dask.dataframe``, each of its partitions validated by
:func:`ranking.io.ingest.read_frame`. Every vote gets a global order key, ``_row`` =
(source number, row number), so that the vote order of the local path (by ``tstamp``,
stable, else file order: :func:`ranking.io.frames.vote_order`) can be rebuilt anywhere.

Battle ids repeated across sources are dropped after the first (as ``read_battles``
drops them across files), by a shuffle on ``battle_id``. Then ``dask.dataframe``'s
shuffle on ``user_id`` puts every user's votes in one of ``P`` partitions, each sorted in
vote order and persisted on the cluster: the per-user steps need no more data movement.
"""

from __future__ import annotations

import operator
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.io.battle_frame import WINNERS, empty_battle_frame
from ranking.io.chunks import BattleLogError
from ranking.io.column_map import ColumnMap
from ranking.io.ingest import IngestResult, read_battles, read_frame
from ranking.io.prompt_texts import PromptTexts
from service.scale.cluster import WORKER_TIMEOUT_S, gather, settle

__all__ = ["ROW", "InputError", "ReadReport", "battles_frame", "read_by_user"]

#: The global order key of a vote: source number << 40 | row number in that source.
ROW = "_row"
_SOURCE_BITS = 40
_CORE = ("battle_id", "model_a", "model_b", "winner", "user_id", "prompt", "tstamp")
_WINNER = pd.CategoricalDtype(list(WINNERS))


class InputError(ValueError):
    """A battle log that cannot be read, as :class:`BattleLogError` words it.

    ``BattleLogError`` takes keyword arguments and does not survive pickling, so a worker
    sends its message in this plain error instead.
    """


@dataclass(frozen=True)
class ReadReport:
    """What reading the logs left out, over all sources (as ``plb fit`` reports it)."""

    n_read: int = 0
    n_skipped: int = 0
    n_duplicates: int = 0
    n_self_battles: int = 0
    skipped_reasons: dict[str, int] = field(default_factory=dict)


#: A log's column map and prompt texts (``read_battles``' ``columns`` and ``prompts``).
Shape = tuple[ColumnMap | None, PromptTexts | None]


@dataclass(frozen=True)
class _SourceInfo:
    """One source after reading: its counts and the labels (name to dtype) it has."""

    result: ReadReport
    labels: dict[str, str]
    has_ids: bool


def _keyed(result: IngestResult, index: int) -> tuple[pd.DataFrame, _SourceInfo]:
    frame = result.battles
    frame[ROW] = (np.int64(index) << _SOURCE_BITS) + np.arange(len(frame), dtype=np.int64)
    labels = {str(c): str(frame[c].dtype) for c in frame.columns if c not in (*_CORE, ROW)}
    report = ReadReport(
        result.n_read,
        result.n_skipped,
        result.n_duplicates,
        result.n_self_battles,
        dict(result.skipped_reasons),
    )
    return frame, _SourceInfo(report, labels, bool(frame["battle_id"].notna().any()))


def _read_file(
    path: str, index: int, skip_invalid: bool, shape: Shape = (None, None)
) -> tuple[pd.DataFrame, _SourceInfo]:
    """Task: read one battle log on a worker (``shape``: its column map and prompt texts)."""
    columns, prompts = shape
    try:
        result = read_battles(path, skip_invalid=skip_invalid, columns=columns, prompts=prompts)
        return _keyed(result, index)
    except BattleLogError as error:
        raise InputError(str(error)) from None


def _read_part(
    raw: pd.DataFrame, name: str, index: int, skip_invalid: bool, shape: Shape = (None, None)
) -> tuple[pd.DataFrame, _SourceInfo]:
    """Task: validate one partition of a Parquet dataset on a worker."""
    columns, prompts = shape
    try:
        result = read_frame(raw, name, skip_invalid=skip_invalid, columns=columns, prompts=prompts)
        return _keyed(result, index)
    except BattleLogError as error:
        raise InputError(str(error)) from None


def _submit_reads(
    client: Any, inputs: Sequence[str], skip_invalid: bool, shape: Shape = (None, None)
) -> list[Any]:
    """One read task a file, one a partition of each Parquet dataset (a directory)."""
    futures: list[Any] = []
    for path in inputs:
        if not os.path.isdir(path):
            index = len(futures)
            futures.append(client.submit(_read_file, str(path), index, skip_invalid, shape))
            continue
        import dask
        import dask.dataframe as dd

        try:
            parts = dd.read_parquet(path).to_delayed()
        except Exception as error:  # pyarrow and fsspec raise many kinds
            reason = " ".join(str(error).split())
            raise InputError(f"{path}: not a readable Parquet dataset ({reason})") from None
        tasks = [
            dask.delayed(_read_part, pure=True)(
                part, f"{path} (part {i})", len(futures) + i, skip_invalid, shape
            )
            for i, part in enumerate(parts)
        ]
        futures.extend(client.compute(tasks))
    return futures


def _merge_reports(reports: Sequence[ReadReport], duplicates: int) -> ReadReport:
    reasons: Counter[str] = Counter()
    for report in reports:
        reasons.update(report.skipped_reasons)
    return ReadReport(
        sum(r.n_read for r in reports),
        sum(r.n_skipped for r in reports),
        sum(r.n_duplicates for r in reports) + duplicates,
        sum(r.n_self_battles for r in reports),
        dict(reasons),
    )


def _label_dtypes(infos: Sequence[_SourceInfo]) -> dict[str, str]:
    """One dtype a label column over all sources, as ``pandas.concat`` would make it.

    Mixed values (``object``) become nullable ``string``, as the fit directory writes
    them; text stays text; integers missing from some sources become ``float64`` (NaN
    where missing); any other disagreement, or a boolean missing somewhere, ``string``.
    """
    names = list(dict.fromkeys(name for info in infos for name in info.labels))
    dtypes: dict[str, str] = {}
    for name in names:
        kinds = {info.labels[name] for info in infos if name in info.labels}
        everywhere = all(name in info.labels for info in infos)
        kind = kinds.pop() if len(kinds) == 1 else "string"
        if kind == "object":
            kind = "string"
        elif kind == "str" or kind.startswith("string"):
            pass
        elif not everywhere and kind.startswith(("int", "uint")):
            kind = "float64"
        elif not everywhere and not kind.startswith("float"):
            kind = "string"
        dtypes[name] = kind
    return dtypes


def _conform(
    frame: pd.DataFrame, drop: npt.NDArray[np.int64], labels: Mapping[str, str]
) -> pd.DataFrame:
    """Task: one source's votes in the common schema, its repeated battle ids dropped."""
    if drop.size:
        frame = frame.loc[~frame[ROW].isin(drop)]
    frame = frame.reset_index(drop=True)
    columns: dict[str, Any] = {ROW: frame[ROW].astype(np.int64)}
    for name in _CORE:
        if name == "winner":
            columns[name] = frame[name].astype(_WINNER)
        elif name == "tstamp":
            columns[name] = frame[name].astype(np.float64)
        else:
            columns[name] = frame[name].astype("string")
    for name, kind in labels.items():
        dtype = pd.api.types.pandas_dtype(kind)
        columns[name] = (
            frame[name].astype(dtype)
            if name in frame.columns
            else pd.Series(pd.NA, index=frame.index, dtype=dtype)
        )
    return pd.DataFrame(columns)


def _ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Task: the battle ids of one source, with their order keys."""
    known = frame["battle_id"].notna()
    return pd.DataFrame(
        {
            "battle_id": frame.loc[known, "battle_id"].astype("string"),
            ROW: frame.loc[known, ROW].astype(np.int64),
        }
    )


def _later_repeats(ids: pd.DataFrame) -> pd.Series:
    """Order keys of the votes whose battle id came earlier (by order key) elsewhere."""
    ordered = ids.sort_values(ROW, kind="stable")
    return ordered.loc[ordered["battle_id"].duplicated(), ROW].astype(np.int64)


def _in_vote_order(part: pd.DataFrame) -> pd.DataFrame:
    """Task: a partition sorted as the local path orders votes (``tstamp``, then file order)."""
    stamps = part["tstamp"].to_numpy(dtype=np.float64, na_value=np.inf)
    stamps = np.where(np.isnan(stamps), np.inf, stamps)
    order = np.lexsort((part[ROW].to_numpy(dtype=np.int64), stamps))
    return part.iloc[order].reset_index(drop=True)


def read_by_user(
    client: Any,
    inputs: Sequence[str],
    *,
    skip_invalid: bool,
    n_partitions: int,
    worker_timeout: float = WORKER_TIMEOUT_S,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
) -> tuple[list[Any], ReadReport]:
    """Read the battle logs on the cluster into ``n_partitions`` partitions by user.

    Parameters
    ----------
    client : distributed.Client
    inputs : sequence of str
        Battle log files (docs/SPEC.md section 1), readable by the workers, and directories of
        Parquet datasets.
    skip_invalid : bool
        As ``plb fit --skip-invalid``.
    n_partitions : int
        Partitions by hash of ``user_id``.
    worker_timeout : float
        See :func:`service.scale.cluster.gather`.
    columns : ColumnMap, optional
        Which column holds which field (:func:`ranking.io.ingest.read_battles`).
    prompts : PromptTexts, optional
        Texts of the logs' prompt ids (:func:`ranking.io.ingest.read_battles`).

    Returns
    -------
    parts : list of distributed.Future
        The persisted partitions, each a battle frame in vote order with the order key
        ``_row``; every user's votes lie in exactly one.
    report : ReadReport
        Read, skipped, duplicate and self-battle counts over all sources.

    Raises
    ------
    InputError
        For a log that cannot be read (the message of :class:`BattleLogError`).
    """
    import dask.dataframe as dd

    reads = _submit_reads(client, inputs, skip_invalid, (columns, prompts))
    infos: list[_SourceInfo] = gather(
        client,
        [client.submit(operator.itemgetter(1), f) for f in reads],
        worker_timeout=worker_timeout,
    )
    frames = [client.submit(operator.itemgetter(0), f) for f in reads]
    del reads
    dropped = np.zeros(0, dtype=np.int64)
    if len(frames) > 1 and any(info.has_ids for info in infos):
        meta = pd.DataFrame(
            {"battle_id": pd.Series(dtype="string"), ROW: pd.Series(dtype=np.int64)}
        )
        ids = dd.from_delayed(
            [client.submit(_ids, f) for f in frames], meta=meta, verify_meta=False
        )
        repeats = ids.shuffle(on="battle_id", npartitions=n_partitions).map_partitions(
            _later_repeats, meta=pd.Series(dtype=np.int64, name=ROW)
        )
        (found,) = gather(client, [client.compute(repeats)], worker_timeout=worker_timeout)
        dropped = np.sort(found.to_numpy(dtype=np.int64))
    labels = _label_dtypes(infos)
    source_of = dropped >> _SOURCE_BITS
    conformed = [
        client.submit(_conform, f, dropped[source_of == i], labels) for i, f in enumerate(frames)
    ]
    del frames
    empty = empty_battle_frame()
    empty[ROW] = np.zeros(0, dtype=np.int64)
    meta = _conform(empty, np.zeros(0, dtype=np.int64), labels)
    votes = dd.from_delayed(conformed, meta=meta, verify_meta=False)
    by_user = votes.shuffle(on="user_id", npartitions=n_partitions).map_partitions(
        _in_vote_order, meta=meta
    )
    parts: list[Any] = client.compute(by_user.to_delayed())  # persisted, one future each
    settle(client, parts, worker_timeout=worker_timeout)
    report = _merge_reports([info.result for info in infos], int(dropped.size))
    return parts, report


def battles_frame(
    client: Any,
    parts: Sequence[Any],
    models: Sequence[str],
    *,
    worker_timeout: float = WORKER_TIMEOUT_S,
) -> pd.DataFrame:
    """All votes on the client, in read order, typed as
    :func:`ranking.io.ingest.read_battles` types them."""
    frames = gather(client, list(parts), worker_timeout=worker_timeout)
    frame = pd.concat(frames, ignore_index=True)
    order = np.argsort(frame[ROW].to_numpy(dtype=np.int64), kind="stable")
    frame = frame.iloc[order].drop(columns=ROW).reset_index(drop=True)
    for name in ("model_a", "model_b"):
        frame[name] = pd.Categorical(frame[name].astype(str), categories=list(models))
    for name in ("battle_id", "user_id", "prompt"):
        frame[name] = frame[name].astype("string")
    return frame
