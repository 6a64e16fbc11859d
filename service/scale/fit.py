"""``plb fit`` on a Dask cluster: the local fit's results, with the heavy steps distributed.

What runs where:

* **reading**: on the client when it can open every input (one file or several, not a
  Parquet directory): the local path's own ``read_battles``, since the client needs
  every vote in the end; the workers then get only the compact arrays of their
  partitions by user (:mod:`service.scale.local_read`). Otherwise on the workers, which
  repartition the frames by user and send them back (:mod:`service.scale.partitions`);
* **workers**: per partition, the collapsed (a, b, outcome) counts (Bradley-Terry's
  sufficient statistics) when they read it, every user's four fits (``bt``/``elo`` ×
  ``cv``/``none``) with their agreement, the batches of the Elo bootstrap
  (:mod:`service.scale.tasks`), and the embeddings of the queries
  (:mod:`service.scale.queries`);
* **client**: the small fits that need everything at once. The aggregate
  Bradley-Terry from the summed counts; the shrinkage strength, learnt by
  :func:`ranking.shrinkage.learn_alpha` from all the votes exactly as the local path
  learns it; the held-out evaluation (:func:`ranking.evaluation.evaluate_personalisation`)
  while the workers run the bootstrap and fit the users; each cell's null of no taste
  (:func:`ranking.analysis.measure_noise`); and the topic model, profiles and rating
  predictor, fitted on the embeddings the workers computed.

Every number equals the local path's: the same code on the same arrays in the same
order (per-user Bradley-Terry fits stop each user's Newton iterations on their own, so
they do not depend on which users share a partition), the same seeds, and bootstrap
batches that each draw from their own child generator. See the README's "Fitting on a
Dask cluster".
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ranking.agreement import summarise
from ranking.analysis import UserAnalysis, measure_noise
from ranking.elo import INITIAL
from ranking.intervals import elo_bootstrap_plan, replicate_summary
from ranking.io.column_map import ColumnMap
from ranking.io.prompt_texts import PromptTexts
from ranking.leaderboard import build_leaderboard, fit_leaderboard
from ranking.noise import NULL_REPLICATES
from ranking.odds import rank_odds
from ranking.pairwise import collapse, model_counts
from ranking.types import Leaderboard, Method, PairwiseData
from ranking.users import Shrinkage, UserRatings
from service.pipeline.config import CONFIDENCE, ELO_ROUNDS, GRID, FitConfig
from service.pipeline.fit import FitResult
from service.pipeline.steps import fit_query_features, held_out_evaluation
from service.pipeline.timings import Stopwatch
from service.scale import tasks
from service.scale.cluster import WORKER_TIMEOUT_S, gather, n_workers
from service.scale.local_read import client_can_read, read_on_client, split_by_user, votes_of
from service.scale.partitions import ReadReport, battles_frame, read_by_user
from service.scale.queries import submit_embeddings
from service.scale.task_times import worker_timings

__all__ = ["DistributedFit", "fit_distributed"]

#: Priority of the tasks the fit waits on (the bootstrap, the users' fits, their data)
#: over the query embeddings, which the client needs last.
_FIRST = 1
#: Seconds the workers' clocks may run behind the client's (task stream start times).
_CLOCK_SLACK_S = 60.0


@dataclass(frozen=True)
class DistributedFit(FitResult):
    """The :class:`~service.pipeline.FitResult` of the local ``plb fit``, and how it ran.

    Attributes
    ----------
    report : ReadReport
        What reading left out.
    partitions, workers : int
        Partitions by user, and workers at the start.
    """

    report: ReadReport
    partitions: int
    workers: int


def fit_distributed(
    client: Any,
    inputs: Sequence[str],
    config: FitConfig | None = None,
    *,
    n_partitions: int | None = None,
    worker_timeout: float | None = None,
    progress: Callable[[str], None] | None = None,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
) -> DistributedFit:
    """:func:`service.pipeline.fit_all`'s result, with the heavy steps on the cluster of
    ``client``; the held-out evaluation and the query features are the pipeline's own
    steps, run on the client.

    Parameters
    ----------
    client : distributed.Client
    inputs : sequence of str
        Battle log files and Parquet dataset directories, readable by the workers.
    config : FitConfig, optional
        The options of ``plb fit`` (its defaults when omitted).
    n_partitions : int, optional
        Partitions by user; twice the number of workers by default.
    worker_timeout : float, optional
        Give up after this many seconds without any worker; :data:`WORKER_TIMEOUT_S`
        by default.
    progress : callable, optional
        Called with a line of text at each step.
    columns, prompts : ColumnMap, PromptTexts, optional
        A log in its own shape (:func:`ranking.io.ingest.read_battles`).

    Raises
    ------
    ValueError
        On bad input (as the local path).
    service.scale.cluster.ClusterError
        When the cluster lost its workers or its scheduler.
    """
    config = config or FitConfig()
    seed = config.seed
    start = time.perf_counter()
    watch = Stopwatch()

    def say(message: str, step: str) -> None:
        """Say what the client does now; it is the step timed until the next."""
        watch.begin(step)
        if progress is not None:
            progress(f"{message} ({time.perf_counter() - start:.0f} s)")

    if n_partitions is not None and n_partitions < 1:
        raise ValueError(f"Argument 'n_partitions' must be at least 1, not {n_partitions}.")
    timeout = WORKER_TIMEOUT_S if worker_timeout is None else worker_timeout
    workers = n_workers(client, timeout=timeout)
    n_parts = n_partitions or 2 * workers

    def collect(futures: Sequence[Any]) -> list[Any]:
        return gather(client, futures, worker_timeout=timeout)

    since = _record_tasks(client)
    warm: list[Any] = []
    if client_can_read(inputs):
        # fresh workers load the fit's code while the client reads
        warm = [
            client.submit(tasks.warm_up, workers=[w], allow_other_workers=True, pure=False)
            for w in client.scheduler_info()["workers"]
        ]
        say(f"reading {len(inputs)} input(s) here", "ingest")
        frame, report = read_on_client(
            inputs, skip_invalid=config.skip_invalid, columns=columns, prompts=prompts
        )
        say(f"sending the votes to {workers} Dask workers, {n_parts} partitions by user",
            "votes to the workers")  # fmt: skip
        placed = _place_here(client, frame, n_parts)
    else:
        say(
            f"reading {len(inputs)} input(s) on {workers} Dask workers, "
            f"{n_parts} partitions by user",
            "reading on the workers",
        )
        parts, report = read_by_user(
            client,
            inputs,
            skip_invalid=config.skip_invalid,
            n_partitions=n_parts,
            worker_timeout=timeout,
            columns=columns,
            prompts=prompts,
        )
        say("summing the pair counts and gathering the votes in order", "votes gathered")
        placed = _place_there(client, parts, timeout)
    votes, models, arrays, summed = placed.votes, placed.models, placed.arrays, placed.summed
    bt = fit_leaderboard(summed, method="bt", rng=seed)
    plan = elo_bootstrap_plan(len(votes.data.outcomes), ELO_ROUNDS, np.random.default_rng(seed))
    bootstrap = [
        client.submit(tasks.bootstrap_batch, placed.merged, n, g, pure=False, priority=_FIRST)
        for n, g in plan
    ]

    def fit_users(method: Method, shrinkage: Shrinkage, prior: Any, alpha: Any) -> list[Any]:
        return [
            client.submit(
                tasks.partition_users, a, method, shrinkage, prior, alpha, priority=_FIRST
            )
            for a in arrays
        ]

    say(f"fitting {len(votes.names)} users on the workers", "per-user fits submitted")
    bt_prior = np.array([bt[m].rating for m in models])
    fits: dict[tuple[Method, Shrinkage], list[Any]] = {}
    for method, shrinkage in [s for s in GRID if s[0] == "bt" and s != ("bt", "cv")]:
        fits[method, shrinkage] = fit_users(method, shrinkage, bt_prior, None)
    # the shrinkage strength is learnt from all the votes, on a worker: the fits wait on it
    alpha = client.submit(tasks.shrinkage_alpha, placed.merged, bt_prior, seed, priority=_FIRST)
    fits["bt", "cv"] = fit_users("bt", "cv", bt_prior, alpha)
    battles = placed.battles(timeout)
    embedded = (
        submit_embeddings(client, battles, config.embedding, workers) if config.features else None
    )
    # the client evaluates while the workers run the bootstrap and the users' fits
    say("held-out evaluation", "held-out evaluation")
    evaluation = held_out_evaluation(votes.data, votes.users, votes.names, config)
    # the Elo fits wait for the bootstrap: its median is the aggregate Elo, their prior
    say("the Elo bootstrap", "waiting for the Elo bootstrap")
    samples = np.concatenate(collect(bootstrap), axis=0)
    point, lower, upper = replicate_summary(samples, CONFIDENCE, center=INITIAL)
    for method, shrinkage in [s for s in GRID if s[0] == "elo"]:
        fits[method, shrinkage] = fit_users(method, shrinkage, point, None)
    features = None
    if config.features:
        table = None
        if embedded is not None:
            say("fitting topics, query profiles and the rating predictor", "query features")
            table = embedded.table(collect(embedded.futures))
        features = fit_query_features(battles, models, config, embeddings=table)

    say("collecting the per-user fits", "waiting for the per-user fits")
    collect(warm)  # long done: its failure said here, not lost
    elo = build_leaderboard(
        "elo",
        models,
        point,
        lower,
        upper,
        model_counts(summed),
        n_battles=int(round(summed.n_votes)),
        interval="bootstrap",
        confidence=CONFIDENCE,
        odds=rank_odds(samples, CONFIDENCE),
    )
    aggregates: dict[Method, Leaderboard] = {"bt": bt, "elo": elo}
    analyses = tuple(
        measure_noise(
            _assemble(
                collect(fits[method, shrinkage]),
                votes.names,
                models,
                aggregates[method],
                method,
                shrinkage,
                config.min_battles,
            ),
            votes.data,
            votes.users,
            replicates=NULL_REPLICATES,
        )
        for method, shrinkage in GRID
    )
    watch.end()
    if progress is not None:
        progress(f"fitted ({time.perf_counter() - start:.0f} s)")
    ours = [*warm, *placed.arrays, placed.merged, *bootstrap, alpha]
    ours += [f for cell in fits.values() for f in cell]
    ours += [] if embedded is None else embedded.futures
    timings = {**watch.to_dict(), **_worker_timings(client, ours, since)}
    return DistributedFit(
        analyses, evaluation, features, battles, models, len(votes.names), timings,
        report, n_parts, workers,
    )  # fmt: skip


def _record_tasks(client: Any) -> float:
    """Have the scheduler record its task stream (from now); the time it starts."""
    now = time.time()
    client.get_task_stream(start=0, stop=0)  # adds the scheduler's recorder if missing
    return now


def _worker_timings(client: Any, futures: Sequence[Any], since: float) -> dict[str, float]:
    """:func:`~service.scale.task_times.worker_timings` of the tasks of ``futures``."""
    keys = {future.key for future in futures}
    records = client.get_task_stream(start=since - _CLOCK_SLACK_S)
    return worker_timings(r for r in records if r.get("key") in keys)


@dataclass(frozen=True)
class _Placed:
    """The votes once read: on the client, and on the cluster in partitions by user.

    ``arrays`` are futures of the partitions' :class:`~service.scale.tasks.PartitionVotes`,
    ``merged`` one of all the :class:`~service.scale.tasks.Votes` (the bootstrap's);
    ``battles(timeout)`` the battle frame, gathered from the workers when read there.
    """

    votes: tasks.Votes
    models: tuple[str, ...]
    summed: PairwiseData
    arrays: list[Any]
    merged: Any
    battles: Callable[[float], pd.DataFrame]


def _place_here(client: Any, battles: pd.DataFrame, n_parts: int) -> _Placed:
    """Votes read on the client: the local path's arrays, partitions sent to the workers.

    Each partition (and the bootstrap's votes) goes to the cluster as the argument of a
    task that returns it, not by ``scatter``: the scheduler keeps a task's arguments, so a
    worker that dies takes nothing Dask cannot remake elsewhere.
    """
    votes = votes_of(battles)
    with warnings.catch_warnings():  # "Sending large graph": these are the data, once
        warnings.simplefilter("ignore", UserWarning)
        arrays = [
            client.submit(tasks.keep, part, priority=_FIRST)
            for part in split_by_user(votes, n_parts)
        ]
        merged = client.submit(tasks.keep, votes, priority=_FIRST)
    summed = collapse(votes.data)
    return _Placed(votes, votes.data.models, summed, arrays, merged, lambda _: battles)


def _place_there(client: Any, parts: Sequence[Any], timeout: float) -> _Placed:
    """Votes read on the workers: the partitions' arrays, their merge and summed counts."""

    def collect(futures: Sequence[Any]) -> list[Any]:
        return gather(client, futures, worker_timeout=timeout)

    models = tuple(
        sorted(set().union(*collect([client.submit(tasks.models_present, p) for p in parts])))
    )
    arrays = [client.submit(tasks.partition_votes, p, models) for p in parts]
    counts = [client.submit(tasks.partition_counts, a) for a in arrays]
    merged = client.submit(tasks.merge_votes, models, *arrays)
    (votes,) = collect([merged])
    if not votes.names:
        raise ValueError(
            "Per-user results need a 'user_id' (or 'judge') field, and no battle has one."
        )

    def fetch(wait: float) -> pd.DataFrame:
        return battles_frame(client, parts, models, worker_timeout=wait)

    return _Placed(votes, models, _summed(models, collect(counts)), arrays, merged, fetch)


def _summed(models: tuple[str, ...], counts: Sequence[PairwiseData]) -> PairwiseData:
    """The partitions' collapsed counts added up: the collapsed votes of the whole log."""
    return collapse(
        PairwiseData(
            models,
            np.concatenate([c.matchups.reshape(-1, 2) for c in counts]).astype(np.intp),
            np.concatenate([c.outcomes for c in counts]),
            np.concatenate([c.weights for c in counts]),
        )
    )


def _assemble(
    results: Sequence[tasks.PartitionUsers | None],
    names: tuple[str, ...],
    models: tuple[str, ...],
    aggregate: Leaderboard,
    method: Method,
    shrinkage: Shrinkage,
    min_battles: int,
) -> UserAnalysis:
    """One :class:`UserAnalysis` from the partitions' users, in global (sorted) user order."""
    shape = (len(names), len(models))
    arrays = {key: np.full(shape, np.nan) for key in ("ratings", "lower", "upper", "prior")}
    battles = np.zeros(shape, dtype=np.int64)
    spearman, kendall = np.full(len(names), np.nan), np.full(len(names), np.nan)
    index = pd.Index(names, dtype=object)
    prior_sd: float | None = None
    for result in results:
        if result is None:
            continue
        rows = index.get_indexer(pd.Index(result.names, dtype=object))
        for key, values in arrays.items():
            values[rows] = getattr(result.ratings, key)
        battles[rows] = result.ratings.battles
        spearman[rows], kendall[rows] = result.spearman, result.kendall
        prior_sd = result.ratings.prior_sd
    ratings = UserRatings(
        method,
        shrinkage,
        models,
        arrays["ratings"],
        arrays["lower"],
        arrays["upper"],
        battles,
        arrays["prior"],
        prior_sd,
    )
    summary = summarise(spearman, kendall, ratings.n_battles, min_battles)
    return UserAnalysis(aggregate, names, ratings, spearman, kendall, summary, min_battles)
