"""The Dask executor of the one fit: :func:`service.pipeline.fit.fit_all`'s parallel parts
mapped over a cluster's workers.

* **aggregate boards**: Bradley-Terry on the client from the partitions' summed counts
  (its sufficient statistics); the Elo bootstrap in batches on the workers, each drawing
  from its own child generator, as :func:`ranking.leaderboard.fit_leaderboard` draws
  them;
* **per-user fits**: every cell of the grid a task a partition by user
  (:func:`~service.scale.tasks.partition_users`); the shrinkage strength learnt from all
  the votes on a worker, as the local path learns it; the Elo cells once the bootstrap's
  median (their prior) is known; each cell's null of no taste on the client;
* **embeddings**: the voters' distinct prompts in batches on the workers
  (:mod:`service.scale.queries`).

Each part answers at once with a pending result: the fit waits on it only when it needs
it, so the client's own steps (the held-out evaluation, the query features) run while the
workers fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ranking.agreement import summarise
from ranking.analysis import UserAnalysis, measure_noise
from ranking.elo import INITIAL
from ranking.intervals.elo_bootstrap import elo_bootstrap_plan
from ranking.intervals.summary import replicate_summary
from ranking.leaderboard import build_leaderboard, fit_leaderboard
from ranking.noise import NULL_REPLICATES
from ranking.odds import rank_odds
from ranking.pairwise import model_counts
from ranking.progress import Progress
from ranking.types import FloatArray, Leaderboard, Method, PairwiseData
from ranking.users import Shrinkage, UserRatings
from service.pipeline.config import CONFIDENCE, ELO_ROUNDS, GRID, FitConfig
from service.pipeline.executor import Boards, Votes
from service.pipeline.timings import Stopwatch
from service.scale import tasks
from service.scale.cluster import gather
from service.scale.queries import submit_embeddings

__all__ = ["DaskExecutor", "Placed"]

#: Priority of the tasks the fit waits on (the bootstrap, the users' fits, their data)
#: over the query embeddings, which the client needs last.
FIRST = 1


@dataclass(frozen=True)
class Placed:
    """The votes once read: on the client, and on the cluster in partitions by user.

    Attributes
    ----------
    votes : Votes
        Every vote, as the local path's arrays.
    summed : PairwiseData
        The collapsed (a, b, outcome) counts of all the votes.
    arrays : list of distributed.Future
        The partitions' :class:`~service.scale.tasks.PartitionVotes`.
    merged : distributed.Future
        All the :class:`~service.pipeline.executor.Votes` (the bootstrap's and the
        shrinkage strength's).
    battles : callable
        ``battles(timeout)``: the battle frame, gathered from the workers when read there.
    """

    votes: Votes
    summed: PairwiseData
    arrays: list[Any]
    merged: Any
    battles: Callable[[float], pd.DataFrame]


class _Boards:
    """The aggregate boards: Bradley-Terry made, Elo once its bootstrap is gathered."""

    def __init__(self, bt: Leaderboard, elo: Callable[[], Leaderboard]) -> None:
        self.bt = bt
        self._elo = elo
        self._boards: Boards | None = None
        self._then: list[Callable[[Boards], None]] = []

    def then(self, call: Callable[[Boards], None]) -> None:
        """Call ``call`` with the boards once they are made."""
        self._then.append(call)

    def result(self) -> Boards:
        """The boards of both methods, the bootstrap waited for the first time."""
        if self._boards is None:
            self._boards = {"bt": self.bt, "elo": self._elo()}
            for call in self._then:
                call(self._boards)
        return self._boards


class _Later:
    """A value made by a call when first asked for."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._made = False
        self._value: Any = None

    def result(self) -> Any:
        """The value."""
        if not self._made:
            self._value, self._made = self._make(), True
        return self._value


class DaskExecutor:
    """The parallel parts of :func:`~service.pipeline.fit.fit_all` on a Dask cluster.

    Parameters
    ----------
    client : distributed.Client
    placed : Placed
        The votes, read and partitioned by user.
    workers : int
        Workers at the start (the embeddings' tasks are cut for them).
    timeout : float
        Seconds without any worker before giving up.
    say : callable
        Told what the cluster does, a line of text at a time.
    """

    whole_log = False

    def __init__(
        self,
        client: Any,
        placed: Placed,
        *,
        workers: int,
        timeout: float,
        say: Callable[[str], None],
    ) -> None:
        self.client = client
        self.placed = placed
        self.workers = workers
        self.timeout = timeout
        self.say = say
        #: Every future the fit's parts submitted (whose task stream is timed).
        self.futures: list[Any] = []
        self._boards: _Boards | None = None

    def _collect(self, futures: Sequence[Any]) -> list[Any]:
        return gather(self.client, futures, worker_timeout=self.timeout)

    def _submit(self, *args: Any, **kwargs: Any) -> Any:
        future = self.client.submit(*args, **kwargs)
        self.futures.append(future)
        return future

    def votes(self, battles: pd.DataFrame) -> Votes:
        """The arrays made when the votes were placed (the same as the local path's)."""
        return self.placed.votes

    def boards(
        self,
        data: PairwiseData,
        *,
        seed: int,
        progress: Progress | None,
        stopwatch: Stopwatch,
    ) -> _Boards:
        """Bradley-Terry from the summed counts; the Elo bootstrap's batches submitted."""
        summed = self.placed.summed
        bt = fit_leaderboard(summed, method="bt", confidence=CONFIDENCE, rng=seed)
        plan = elo_bootstrap_plan(len(data.outcomes), ELO_ROUNDS, np.random.default_rng(seed))
        merged = self.placed.merged
        bootstrap = [
            self._submit(tasks.bootstrap_batch, merged, n, g, pure=False, priority=FIRST)
            for n, g in plan
        ]

        def elo() -> Leaderboard:
            self.say("the Elo bootstrap")
            with stopwatch.step("waiting for the Elo bootstrap"):
                samples = np.concatenate(self._collect(bootstrap), axis=0)
            point, lower, upper = replicate_summary(samples, CONFIDENCE, center=INITIAL)
            return build_leaderboard(
                "elo",
                data.models,
                point,
                lower,
                upper,
                model_counts(summed),
                n_battles=int(round(summed.n_votes)),
                interval="bootstrap",
                confidence=CONFIDENCE,
                odds=rank_odds(samples, CONFIDENCE),
            )

        self._boards = _Boards(bt, elo)
        return self._boards

    def users(
        self,
        votes: Votes,
        boards: Any,
        *,
        min_battles: int,
        seed: int,
        progress: Progress | None,
        stopwatch: Stopwatch,
    ) -> _Later:
        """Each cell's fits a partition, submitted: Bradley-Terry's now, Elo's once
        ``boards`` (this executor's) have the bootstrap's median."""
        if boards is not self._boards or self._boards is None:
            raise ValueError("DaskExecutor.users needs the boards of its own .boards().")
        own = self._boards
        self.say(f"fitting {len(votes.names)} users on the workers")
        models = votes.data.models
        fits: dict[tuple[Method, Shrinkage], list[Any]] = {}

        def fit(method: Method, shrinkage: Shrinkage, prior: Any, alpha: Any) -> list[Any]:
            return [
                self._submit(
                    tasks.partition_users, a, method, shrinkage, prior, alpha, priority=FIRST
                )
                for a in self.placed.arrays
            ]

        bt_prior = np.array([own.bt[m].rating for m in models])
        for method, shrinkage in [s for s in GRID if s[0] == "bt" and s != ("bt", "cv")]:
            fits[method, shrinkage] = fit(method, shrinkage, bt_prior, None)
        # the shrinkage strength is learnt from all the votes, on a worker: the fits wait on it
        alpha = self._submit(
            tasks.shrinkage_alpha, self.placed.merged, bt_prior, seed, priority=FIRST
        )
        fits["bt", "cv"] = fit("bt", "cv", bt_prior, alpha)

        def elo_fits(made: Boards) -> None:
            point = np.array([made["elo"][m].rating for m in models])
            for method, shrinkage in [s for s in GRID if s[0] == "elo"]:
                fits[method, shrinkage] = fit(method, shrinkage, point, None)

        own.then(elo_fits)

        def analyses() -> tuple[UserAnalysis, ...]:
            aggregates = own.result()
            self.say("collecting the per-user fits")
            with stopwatch.step("waiting for the per-user fits"):
                return tuple(
                    measure_noise(
                        _assemble(
                            self._collect(fits[method, shrinkage]),
                            votes.names,
                            models,
                            aggregates[method],
                            method,
                            shrinkage,
                            min_battles,
                        ),
                        votes.data,
                        votes.users,
                        replicates=NULL_REPLICATES,
                    )
                    for method, shrinkage in GRID
                )

        return _Later(analyses)

    def embeddings(self, battles: pd.DataFrame, config: FitConfig) -> _Later:
        """The voters' distinct prompts embedded on the workers; None without prompts,
        or for a backend fitted on its corpus (``tfidf``), which the client runs."""
        pending = submit_embeddings(self.client, battles, config.embedding, self.workers)
        if pending is None:
            return _Later(lambda: None)
        self.futures.extend(pending.futures)

        def table() -> Mapping[str, Any] | None:
            return pending.table(self._collect(pending.futures))

        return _Later(table)


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
    arrays: dict[str, FloatArray] = {
        key: np.full(shape, np.nan) for key in ("ratings", "lower", "upper", "prior")
    }
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
