"""The work a Dask worker does: pure functions of one partition by user, or of one batch.

A partition (:func:`service.scale.partitions.read_by_user`) is a battle frame in vote
order holding all the votes of its users. :func:`partition_votes` turns it into arrays
with the global model order once; the other functions call the same ``ranking`` code as
the local path on them. Nothing here depends on which worker runs it, or how often, so
Dask may rerun any of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.analysis import fit_user_agreement
from ranking.intervals.elo_bootstrap import bootstrap_elo_batch
from ranking.io.frames import pairwise_from_battles
from ranking.pairwise import ELO_PER_NAT, collapse
from ranking.shrinkage import learn_alpha
from ranking.types import CENTER, FloatArray, IntArray, Method, PairwiseData
from ranking.users import Shrinkage, UserRatings
from service.pipeline.executor import Votes
from service.scale.partitions import ROW

T = TypeVar("T")

__all__ = [
    "PartitionUsers",
    "PartitionVotes",
    "bootstrap_batch",
    "embed_batches",
    "keep",
    "merge_votes",
    "models_present",
    "partition_counts",
    "partition_users",
    "partition_votes",
    "shrinkage_alpha",
    "warm_up",
]


@dataclass(frozen=True)
class PartitionVotes:
    """One partition's votes as arrays, made once and kept on the cluster.

    Attributes
    ----------
    data : PairwiseData
        The votes in vote order, with the global model order.
    users : ndarray of int
        Index into ``user_names`` of each vote; ``-1``: no user.
    user_names : tuple of str
        The partition's users, sorted.
    stamps, rows : ndarray
        ``tstamp`` (``inf`` where missing) and the order key ``_row``: what orders the
        votes among all partitions'.
    """

    data: PairwiseData
    users: IntArray
    user_names: tuple[str, ...]
    stamps: FloatArray
    rows: npt.NDArray[np.int64]


@dataclass(frozen=True)
class PartitionUsers:
    """One partition's users (sorted ids), their ratings and agreement with the aggregate."""

    names: tuple[str, ...]
    ratings: UserRatings
    spearman: FloatArray
    kendall: FloatArray


def _user_codes(part: pd.DataFrame) -> tuple[IntArray, tuple[str, ...]]:
    """:func:`ranking.io.frames.user_codes` of a partition already in vote order."""
    ids = part["user_id"]
    if not ids.notna().any():
        return np.full(len(part), -1, dtype=np.intp), ()
    categorical = pd.Categorical(ids.astype("string"))
    names = tuple(str(c) for c in categorical.categories)
    return np.asarray(categorical.codes, dtype=np.intp), names


def models_present(part: pd.DataFrame) -> set[str]:
    """The models a partition's votes name."""
    return set(part["model_a"].dropna().astype(str)) | set(part["model_b"].dropna().astype(str))


def partition_votes(part: pd.DataFrame, models: tuple[str, ...]) -> PartitionVotes:
    """The partition's votes as arrays (``pairwise_from_battles``, ``user_codes``)."""
    users, names = _user_codes(part)
    stamps = part["tstamp"].to_numpy(dtype=np.float64, na_value=np.inf)
    return PartitionVotes(
        pairwise_from_battles(part, models),
        users,
        names,
        np.where(np.isnan(stamps), np.inf, stamps),
        part[ROW].to_numpy(dtype=np.int64),
    )


def partition_counts(votes: PartitionVotes) -> PairwiseData:
    """Sufficient statistics of Bradley-Terry: the collapsed (a, b, outcome) counts."""
    return collapse(votes.data)


def merge_votes(models: tuple[str, ...], *parts: PartitionVotes) -> Votes:
    """All partitions' votes in global vote order, with global (sorted) user codes."""
    names = tuple(sorted({name for part in parts for name in part.user_names}))
    index = pd.Index(names, dtype=object)
    users = []
    for part in parts:
        to_global = np.append(index.get_indexer(pd.Index(part.user_names, dtype=object)), -1)
        users.append(to_global[part.users])  # code -1 picks the trailing -1
    stamps = np.concatenate([p.stamps for p in parts])
    rows = np.concatenate([p.rows for p in parts])
    order = np.lexsort((rows, stamps))
    matchups = np.concatenate([p.data.matchups.reshape(-1, 2) for p in parts])[order]
    outcomes = np.concatenate([p.data.outcomes for p in parts])[order]
    data = PairwiseData(models, matchups.astype(np.intp), outcomes, np.ones(len(outcomes)))
    return Votes(data, np.concatenate(users)[order].astype(np.intp), names)


def bootstrap_batch(votes: Votes, size: int, rng: np.random.Generator) -> FloatArray:
    """One batch of the aggregate Elo bootstrap (:mod:`ranking.intervals.elo_bootstrap`)."""
    data = votes.data
    return bootstrap_elo_batch(data.n_models, data.matchups, data.outcomes, size, rng)


def shrinkage_alpha(votes: Votes, prior: FloatArray, seed: int) -> float:
    """The shrinkage strength of ``(bt, cv)``, learnt from all votes as
    :func:`ranking.users.fit_user_ratings` learns it (prior: the aggregate, Elo scale)."""
    data, users = votes.data, votes.users
    known = users >= 0
    mu = (np.broadcast_to(prior, (len(votes.names), data.n_models)) - CENTER) / ELO_PER_NAT
    return learn_alpha(
        data.n_models,
        data.matchups[known],
        data.outcomes[known],
        users[known],
        len(votes.names),
        mu,
        method="cv",
        rng=seed,
    )


def partition_users(
    votes: PartitionVotes,
    method: Method,
    shrinkage: Shrinkage,
    prior: FloatArray,
    alpha: float | None,
) -> PartitionUsers | None:
    """Fit the partition's users as :func:`ranking.analysis.analyse_users` fits all users.

    ``prior`` is the aggregate of all votes and ``alpha`` the prior precision learnt from
    all users (Bradley-Terry with shrinkage); ``None`` for a partition without users.
    """
    if not votes.user_names:
        return None
    ratings, spearman, kendall = fit_user_agreement(
        votes.data,
        votes.users,
        len(votes.user_names),
        method=method,
        shrinkage=shrinkage,
        prior=prior,
        alpha=alpha,
    )
    return PartitionUsers(votes.user_names, ratings, spearman, kendall)


def embed_batches(backend: str, batches: Sequence[Sequence[str]]) -> list[Any]:
    """Embed each batch of queries alone, as :meth:`MiniLMEmbedder.batches` defines them."""
    from features.embeddings import make_embedder

    embedder = make_embedder(backend)
    return [np.asarray(embedder.embed(list(batch)), dtype=np.float32) for batch in batches]


def keep(value: T) -> T:
    """Task: ``value`` itself, sent with the task: data the client made, held on the
    cluster (and remade from the task when its worker dies, which ``scatter`` cannot)."""
    return value


def warm_up() -> None:
    """Task: load what the fit's tasks run (imports, compiled kernels from numba's cache)
    on a fresh worker, while the client reads the logs."""
    models = ("a", "b", "c")
    data = PairwiseData(
        models, np.array([[0, 1], [1, 2], [2, 0]], dtype=np.intp), np.array([1.0, 0.5, 0.0]),
        np.ones(3),
    )  # fmt: skip
    votes = PartitionVotes(data, np.array([0, 0, 1], dtype=np.intp), ("u", "v"),
                           np.zeros(3), np.arange(3, dtype=np.int64))  # fmt: skip
    prior = np.full(len(models), 1000.0)
    for method in ("bt", "elo"):
        partition_users(votes, method, "none", prior, None)
    partition_users(votes, "bt", "cv", prior, 1.0)
    bootstrap_batch(Votes(data, votes.users, votes.user_names), 1, np.random.default_rng(0))
