"""Reading on the client when it can see the logs, and splitting the votes by user.

The client of a distributed fit needs every vote in the end (the fit directory keeps
them, the query features are fitted on them), so reading the logs on the workers and
shipping the frames back costs a read plus a shuffle and a transfer of every row: at
2 million votes, 24-48 s where reading here takes 8 s (bench H). When the client can
open every input, it reads them as the local path does (:func:`read_on_client`, the
same :func:`ranking.io.ingest.read_battles`, so the same frame) and sends the workers
only the compact arrays they fit on (:func:`split_by_user`: every user's votes in one
partition, about 30 bytes a vote). Parquet dataset directories, and paths only the
workers can open, are read on the workers (:mod:`service.scale.partitions`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ranking.io.chunks import BattleLogError
from ranking.io.column_map import ColumnMap
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.io.ingest import IngestResult, read_battles
from ranking.io.prompt_texts import PromptTexts
from service.pipeline.executor import Votes
from service.scale.partitions import InputError, ReadReport
from service.scale.tasks import PartitionVotes

__all__ = ["client_can_read", "read_on_client", "report_of", "split_by_user", "votes_of"]


def client_can_read(inputs: Sequence[str]) -> bool:
    """Whether every input is a file this process can open (not a Parquet directory)."""
    return bool(inputs) and all(
        os.path.isfile(path) and os.access(path, os.R_OK) for path in inputs
    )


def report_of(result: IngestResult) -> ReadReport:
    """What :func:`ranking.io.ingest.read_battles` left out, as the Dask path reports it."""
    return ReadReport(
        result.n_read,
        result.n_skipped,
        result.n_duplicates,
        result.n_self_battles,
        dict(result.skipped_reasons),
    )


def read_on_client(
    inputs: Sequence[str],
    *,
    skip_invalid: bool,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
) -> tuple[pd.DataFrame, ReadReport]:
    """The battles of ``inputs`` read here, as ``plb fit`` reads them, and the report.

    Raises
    ------
    InputError
        For a log that cannot be read (the message of :class:`BattleLogError`), or
        when no battle is left.
    """
    try:
        result = read_battles(
            list(inputs), skip_invalid=skip_invalid, columns=columns, prompts=prompts
        )
    except BattleLogError as error:
        raise InputError(str(error)) from None
    if result.battles.empty:
        raise InputError(
            f"no battles left to fit in {', '.join(inputs)}: read {result.n_read:,} records, "
            f"skipped {result.n_skipped:,} invalid, {result.n_duplicates:,} duplicate and "
            f"{result.n_self_battles:,} self-battles"
        )
    return result.battles, report_of(result)


def votes_of(battles: pd.DataFrame) -> Votes:
    """Every vote of a battle frame in the order they happened, as the local path's arrays.

    Raises
    ------
    ValueError
        When no battle has a ``user_id`` (as the local path).
    """
    codes, names = user_codes(battles)
    return Votes(pairwise_from_battles(battles), codes.astype(np.intp), names)


def split_by_user(votes: Votes, n_partitions: int) -> list[PartitionVotes]:
    """The votes with a user in ``n_partitions`` partitions, each user's in exactly one.

    Users go to partitions in runs of their sorted ids, cut where the votes so far pass
    an equal share, so the partitions hold about as many votes each (a partition may
    be left without users when there are fewer users than partitions: it is dropped).
    Each partition keeps its votes in vote order, its users' codes local to it; its
    ``rows`` are the votes' positions in ``votes`` and its ``stamps`` all zero, so
    :func:`service.scale.tasks.merge_votes` rebuilds ``votes``' order.

    Parameters
    ----------
    votes : Votes
        Every vote (:func:`votes_of`).
    n_partitions : int
        Partitions wanted, at least 1.
    """
    if n_partitions < 1:
        raise ValueError(f"Argument 'n_partitions' must be at least 1, not {n_partitions}.")
    n_users = len(votes.names)
    known = np.flatnonzero(votes.users >= 0)
    per_user = np.bincount(votes.users[known], minlength=n_users)
    # user u goes to the partition of the share its first vote falls in
    before = np.cumsum(per_user) - per_user
    cut = (before * n_partitions) // max(int(per_user.sum()), 1)
    parts = []
    for p in range(n_partitions):
        members = np.flatnonzero(cut == p)
        if not members.size:
            continue
        local = np.full(n_users, -1, dtype=np.intp)
        local[members] = np.arange(members.size, dtype=np.intp)
        rows = known[local[votes.users[known]] >= 0]
        parts.append(
            PartitionVotes(
                votes.data.select(_mask(rows, len(votes.users))),
                local[votes.users[rows]],
                tuple(votes.names[u] for u in members),
                np.zeros(rows.size),
                rows.astype(np.int64),
            )
        )
    return parts


def _mask(rows: np.ndarray, n: int) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    return mask
