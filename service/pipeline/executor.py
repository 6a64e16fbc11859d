"""Where a fit's parallel parts run: the :class:`Executor` that :func:`fit_all` hands
them to.

:func:`service.pipeline.fit.fit_all` is the one fit: it runs its steps in turn, and the
parts of them that split over votes, users or prompts (the votes' arrays, the aggregate
boards' bootstrap, the per-user fits, the prompts' embeddings) it asks of an executor.
:class:`InProcess` (``plb fit``) runs each at once, here, with the steps of
:mod:`service.pipeline.steps`; the Dask executor
(:class:`service.scale.executor.DaskExecutor`, ``plb fit --scheduler``) maps them over a
cluster's workers and answers with :class:`Pending` results, waited on only when the fit
needs them, so that the client's own steps (the held-out evaluation, the query
features) run meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import pandas as pd

from ranking.analysis import UserAnalysis
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.noise import NULL_REPLICATES
from ranking.progress import Progress
from ranking.types import IntArray, Leaderboard, Method, PairwiseData
from service.pipeline.config import FitConfig
from service.pipeline.steps import fit_aggregates, fit_users
from service.pipeline.timings import Stopwatch

__all__ = ["Boards", "Done", "Executor", "InProcess", "Pending", "Votes"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: The aggregate board of each method.
Boards = dict[Method, Leaderboard]


@dataclass(frozen=True)
class Votes:
    """Every vote in the order they happened, as arrays.

    Attributes
    ----------
    data : PairwiseData
        ``pairwise_from_battles`` of all the battles.
    users : ndarray of int
        ``user_codes`` of all the battles: index into ``names``, ``-1`` for none.
    names : tuple of str
        The user ids, sorted.
    """

    data: PairwiseData
    users: IntArray
    names: tuple[str, ...]


class Pending(Protocol[T_co]):
    """A part of a fit that an executor runs: its value once :meth:`result` returns."""

    def result(self) -> T_co:
        """The value, waited for if it is still being made."""
        ...


@dataclass(frozen=True)
class Done(Generic[T]):
    """A :class:`Pending` already made."""

    value: T

    def result(self) -> T:
        """The value."""
        return self.value


class Executor(Protocol):
    """The parallel parts of a fit's steps, run where the executor runs them.

    Attributes
    ----------
    whole_log : bool
        Whether the steps that read the whole battle frame at once run (the cap on
        repeated prompts, the style control); the Dask fit leaves them out.
    """

    whole_log: bool

    def votes(self, battles: pd.DataFrame) -> Votes:
        """The votes of ``battles`` as arrays (``pairwise_from_battles``, ``user_codes``)."""
        ...

    def boards(
        self,
        data: PairwiseData,
        *,
        seed: int,
        progress: Progress | None,
        stopwatch: Stopwatch,
    ) -> Pending[Boards]:
        """The aggregate board of each method of ``data`` (the public votes)."""
        ...

    def users(
        self,
        votes: Votes,
        boards: Pending[Boards],
        *,
        min_battles: int,
        seed: int,
        progress: Progress | None,
        stopwatch: Stopwatch,
    ) -> Pending[tuple[UserAnalysis, ...]]:
        """Every user's ratings and agreement, one analysis a cell of the grid, with its
        null of no taste (:func:`~service.pipeline.steps.fit_users`)."""
        ...

    def embeddings(
        self, battles: pd.DataFrame, config: FitConfig
    ) -> Pending[Mapping[str, Any] | None]:
        """The query vectors by prompt text the query features are fitted on; None for
        the query features to embed their prompts themselves."""
        ...


class InProcess:
    """The executor of ``plb fit``: every part at once, in this process, in turn."""

    whole_log = True

    def votes(self, battles: pd.DataFrame) -> Votes:
        """:func:`ranking.io.frames.pairwise_from_battles` and ``user_codes``."""
        codes, names = user_codes(battles)
        return Votes(pairwise_from_battles(battles), codes, names)

    def boards(
        self,
        data: PairwiseData,
        *,
        seed: int,
        progress: Progress | None,
        stopwatch: Stopwatch,
    ) -> Done[Boards]:
        """:func:`~service.pipeline.steps.fit_aggregates`."""
        return Done(fit_aggregates(data, rng=seed, progress=progress, stopwatch=stopwatch))

    def users(
        self,
        votes: Votes,
        boards: Pending[Boards],
        *,
        min_battles: int,
        seed: int,
        progress: Progress | None,
        stopwatch: Stopwatch,
    ) -> Done[tuple[UserAnalysis, ...]]:
        """:func:`~service.pipeline.steps.fit_users`, with the null of no taste."""
        return Done(
            fit_users(
                votes.data,
                votes.users,
                votes.names,
                boards.result(),
                min_battles=min_battles,
                rng=seed,
                progress=progress,
                stopwatch=stopwatch,
                null_replicates=NULL_REPLICATES,
            )
        )

    def embeddings(self, battles: pd.DataFrame, config: FitConfig) -> Done[None]:
        """None: the query features embed their own prompts, here."""
        return Done(None)
