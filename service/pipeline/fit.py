"""Fit everything: :func:`fit_all` from battles to a :class:`FitResult`, and its fit
directory (:func:`write_result`).

The one fit: ``plb fit`` runs :func:`fit_all` with its parallel parts here
(:class:`~service.pipeline.executor.InProcess`); ``plb fit --scheduler`` runs the same
:func:`fit_all` with them mapped over a Dask cluster's workers
(:func:`service.scale.fit_distributed`, its executor
:class:`~service.scale.executor.DaskExecutor`); both are written by :func:`write_result`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ranking.analysis import UserAnalysis
from ranking.io.answer_texts import has_answers
from ranking.progress import Progress
from service.pipeline.artifacts import write_fit
from service.pipeline.config import FitConfig
from service.pipeline.executor import Done, Executor, InProcess
from service.pipeline.reuse import Earlier
from service.pipeline.steps import (
    QueryFeatures,
    cap_repeats,
    fit_query_features,
    held_out_evaluation,
    repeats_document,
)
from service.pipeline.style import fit_style_document
from service.pipeline.timings import Stopwatch, substep, timed_stages

__all__ = ["FitResult", "fit_all", "manifest_document", "write_result"]


@dataclass(frozen=True)
class FitResult:
    """Everything a fit makes, as its fit directory holds it.

    Attributes
    ----------
    analyses : tuple of UserAnalysis
        One a cell of :data:`~service.pipeline.config.GRID`, in its order; each holds
        its method's aggregate board (``aggregate``).
    evaluation : dict or None
        The ``plb evaluate`` document; None when no user has enough votes.
    features : QueryFeatures or None
        The rating predictor, its topic model and the users' query profiles; None
        without features or prompts.
    battles : pandas.DataFrame
        Every vote fitted.
    models : tuple of str
    n_users : int
    timings : dict
        Step to wall seconds (:meth:`Stopwatch.to_dict`), in the order they ran; not
        written to the fit directory.
    repeats : dict or None
        Prompts repeated too often (:func:`~service.pipeline.steps.repeats_document`):
        the cap, what it touched, how the Bradley-Terry board moved; None where the fit
        did not look (the Dask fit).
    style_control : dict or None
        The Bradley-Terry board with the answers' style held equal
        (:func:`~service.pipeline.style.fit_style_document`); None when the votes carry
        no answers (or the fit did not look: the Dask fit).
    """

    analyses: tuple[UserAnalysis, ...]
    evaluation: dict[str, Any] | None
    features: QueryFeatures | None
    battles: pd.DataFrame
    models: tuple[str, ...]
    n_users: int
    timings: dict[str, float]
    repeats: dict[str, Any] | None = field(default=None, kw_only=True)
    style_control: dict[str, Any] | None = field(default=None, kw_only=True)

    @property
    def predictor(self) -> Any:
        """The rating predictor (``RatingPredictor``), or None."""
        return None if self.features is None else self.features.predictor

    @property
    def topic_model(self) -> Any:
        """The predictor's topic model (``TopicModel``), or None."""
        return None if self.features is None else self.features.topic_model

    @property
    def profiles(self) -> pd.DataFrame | None:
        """The training users' query profiles, or None."""
        return None if self.features is None else self.features.profiles


def fit_all(
    battles: pd.DataFrame,
    config: FitConfig,
    progress: Progress | None = None,
    *,
    note: Callable[[str], None] | None = None,
    stopwatch: Stopwatch | None = None,
    earlier: Earlier | None = None,
    executor: Executor | None = None,
) -> FitResult:
    """Fit the aggregate boards, every user's ratings and agreement, the held-out
    evaluation and (with ``config.features``) the query features.

    Parameters
    ----------
    battles : pandas.DataFrame
        A canonical battle frame (:func:`ranking.io.ingest.read_battles`).
    config : FitConfig
    progress : Progress, optional
        Told of each stage.
    note : callable, optional
        Told, in a line of text, when the query features start (they take longest).
    stopwatch : Stopwatch, optional
        Times each step (one is made if not given); the result's ``timings``.
    earlier : Earlier, optional
        An earlier fit the query features start from (``plb fit --reuse``): only the
        prompts it has not seen are embedded, its topic model is kept, its predictor is
        where the new one starts (:func:`~service.pipeline.steps.fit_query_features`).
    executor : Executor, optional
        Where the steps' parallel parts run (the votes' arrays, the aggregate boards, the
        per-user fits, the prompts' embeddings); here, in turn
        (:class:`~service.pipeline.executor.InProcess`), by default. One that leaves out
        the whole-log steps (``whole_log`` false: the Dask fit's) fits no cap on repeated
        prompts and no style control (``repeats`` and ``style_control`` None).
    """
    run = executor or InProcess()
    watch = stopwatch or Stopwatch()
    with watch.step("votes to arrays"):
        votes = run.votes(battles)
    data = votes.data
    repeats = None
    with watch.step("aggregate boards"):
        public, effect = data, None
        if run.whole_log:
            with watch.step(substep("aggregate boards", "repeated prompts")):
                public, effect = cap_repeats(battles, data, config)
        boards = run.boards(public, seed=config.seed, progress=progress, stopwatch=watch)
        if run.whole_log:
            with watch.step(substep("aggregate boards", "repeated prompts")):
                repeats = repeats_document(config, effect, data, boards.result())
    style_control = None
    if run.whole_log and has_answers(battles):  # a step of its own only with answers
        with watch.step("style control"):
            style_control = fit_style_document(
                battles, seed=config.seed, repeat_cap=config.repeat_cap
            )
    with watch.step("per-user fits"):
        users = run.users(
            votes,
            boards,
            min_battles=config.min_battles,
            seed=config.seed,
            progress=progress,
            stopwatch=watch,
        )
    embedded = run.embeddings(battles, config) if config.features else Done(None)
    with watch.step("held-out evaluation"):
        evaluation = held_out_evaluation(data, votes.users, votes.names, config, progress)
    boards.result()  # made by now: on a cluster, the Elo fits of the users start here
    features = None
    if config.features:
        if note is not None:
            note("fitting topics, query profiles and the rating predictor")
        with watch.step("query features"):
            parts = timed_stages(watch, "query features", progress)
            features = fit_query_features(
                battles,
                data.models,
                config,
                embeddings=embedded.result(),
                progress=parts,
                earlier=earlier,
            )
            watch.end()
    analyses = users.result()
    return FitResult(
        analyses,
        evaluation,
        features,
        battles,
        data.models,
        len(votes.names),
        watch.to_dict(),
        repeats=repeats,
        style_control=style_control,
    )


def manifest_document(
    result: FitResult, config: FitConfig, inputs: Sequence[str | os.PathLike[str]], **extra: Any
) -> dict[str, Any]:
    """The fit directory's ``manifest.json`` (less its format and time): what was fitted,
    from what, with which options; ``extra`` (the Dask path's cluster) appended."""
    return {
        "battles": [str(p) for p in inputs],
        "n_battles": len(result.battles),
        "n_users": result.n_users,
        "models": list(result.models),
        "min_battles": config.min_battles,
        "seed": config.seed,
        "truth": config.truth,
        "features": result.profiles is not None,
        "prior_sd_from_prediction": None if result.predictor is None else result.predictor.prior_sd,
        "query_evidence": _query_evidence(result.predictor),
        "reuse": None if result.features is None else result.features.reuse,
        "repeats": result.repeats,
        **extra,
    }


def _query_evidence(predictor: Any) -> dict[str, Any] | None:
    """How much the predictor learnt a person's queries are worth (``evidence_``), or None."""
    evidence = None if predictor is None else getattr(predictor, "evidence_", None)
    return None if evidence is None else evidence.to_dict()


def write_result(out: str | os.PathLike[str], result: FitResult, manifest: dict[str, Any]) -> Path:
    """Write ``result`` as a fit directory at ``out`` (replaced atomically)."""
    return write_fit(
        out,
        manifest=manifest,
        analyses=result.analyses,
        evaluation=result.evaluation,
        topic_model=result.topic_model,
        profiles=result.profiles,
        predictor=result.predictor,
        battles=result.battles,
        shelves=() if result.features is None else result.features.shelves,
        style_control=result.style_control,
    )
