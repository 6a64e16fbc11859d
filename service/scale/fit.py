"""``plb fit`` on a Dask cluster: the one fit (:func:`service.pipeline.fit.fit_all`), its
parallel parts mapped over the workers.

What runs where:

* **reading**: on the client when it can open every input (one file or several, not a
  Parquet directory): the local path's own ``read_battles``, since the client needs
  every vote in the end; the workers then get only the compact arrays of their
  partitions by user (:mod:`service.scale.local_read`). Otherwise on the workers, which
  repartition the frames by user and send them back (:mod:`service.scale.partitions`);
  the collapsed (a, b, outcome) counts (Bradley-Terry's sufficient statistics) of each
  partition are summed on the client;
* **the fit**: :func:`~service.pipeline.fit.fit_all` with the executor
  :class:`~service.scale.executor.DaskExecutor`: the Elo bootstrap, the per-user fits and
  the embeddings of the queries on the workers, the held-out evaluation and the query
  features on the client meanwhile. It leaves out the steps that read the whole battle
  frame at once (the cap on repeated prompts, the style control).

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
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from ranking.io.column_map import ColumnMap
from ranking.io.prompt_texts import PromptTexts
from ranking.pairwise import collapse
from ranking.types import PairwiseData
from service.pipeline.config import FitConfig
from service.pipeline.fit import FitResult, fit_all
from service.pipeline.timings import Stopwatch
from service.scale import tasks
from service.scale.cluster import WORKER_TIMEOUT_S, gather, n_workers
from service.scale.executor import FIRST, DaskExecutor, Placed
from service.scale.local_read import client_can_read, read_on_client, split_by_user, votes_of
from service.scale.partitions import ReadReport, battles_frame, read_by_user
from service.scale.task_times import worker_timings

__all__ = ["DistributedFit", "fit_distributed"]

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
    """:func:`service.pipeline.fit_all` of the logs ``inputs``, its parallel parts on the
    cluster of ``client`` (:class:`~service.scale.executor.DaskExecutor`).

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
    start = time.perf_counter()
    watch = Stopwatch()

    def tell(message: str) -> None:
        """Say what the fit does now."""
        if progress is not None:
            progress(f"{message} ({time.perf_counter() - start:.0f} s)")

    def say(message: str, step: str) -> None:
        """Say what the client does now; it is the step timed until the next."""
        watch.begin(step)
        tell(message)

    if n_partitions is not None and n_partitions < 1:
        raise ValueError(f"Argument 'n_partitions' must be at least 1, not {n_partitions}.")
    timeout = WORKER_TIMEOUT_S if worker_timeout is None else worker_timeout
    workers = n_workers(client, timeout=timeout)
    n_parts = n_partitions or 2 * workers

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
    battles = placed.battles(timeout)
    watch.end()
    executor = DaskExecutor(client, placed, workers=workers, timeout=timeout, say=tell)
    fitted = fit_all(battles, config, note=tell, stopwatch=watch, executor=executor)
    gather(client, warm, worker_timeout=timeout)  # long done: its failure said here
    tell("fitted")
    ours = [*warm, *placed.arrays, placed.merged, *executor.futures]
    timings = {**fitted.timings, **_worker_timings(client, ours, since)}
    made = {f.name: getattr(fitted, f.name) for f in fields(FitResult)}
    made["timings"] = timings
    return DistributedFit(**made, report=report, partitions=n_parts, workers=workers)


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


def _place_here(client: Any, battles: pd.DataFrame, n_parts: int) -> Placed:
    """Votes read on the client: the local path's arrays, partitions sent to the workers.

    Each partition (and the bootstrap's votes) goes to the cluster as the argument of a
    task that returns it, not by ``scatter``: the scheduler keeps a task's arguments, so a
    worker that dies takes nothing Dask cannot remake elsewhere.
    """
    votes = votes_of(battles)
    with warnings.catch_warnings():  # "Sending large graph": these are the data, once
        warnings.simplefilter("ignore", UserWarning)
        arrays = [
            client.submit(tasks.keep, part, priority=FIRST)
            for part in split_by_user(votes, n_parts)
        ]
        merged = client.submit(tasks.keep, votes, priority=FIRST)
    summed = collapse(votes.data)
    return Placed(votes, summed, arrays, merged, lambda _: battles)


def _place_there(client: Any, parts: Sequence[Any], timeout: float) -> Placed:
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

    return Placed(votes, _summed(models, collect(counts)), arrays, merged, fetch)


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
