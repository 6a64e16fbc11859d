"""The steps of a fit, each written once: the aggregate boards, every user's fits, the
held-out evaluation, and the query features (topics, profiles, rating predictor).

:func:`service.pipeline.fit.fit_all` runs them in turn (the aggregate boards and the
per-user fits through its executor, :mod:`service.pipeline.executor`); the service's
refit (:func:`service.pipeline.snapshot.refit_snapshot`) runs the first two on all
votes. Nothing here prints: progress goes to the :class:`ranking.progress.Progress`
handed in.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from data.simulation_files import load_truth
from ranking.analysis import UserAnalysis, analyse_users
from ranking.evaluation import MIN_VOTES, EvaluationRow, evaluate_personalisation, latest_split
from ranking.io.repeat_codes import thin_repeated
from ranking.leaderboard import fit_leaderboard
from ranking.progress import Progress, start
from ranking.repeats import RepeatEffect, board_shift
from ranking.types import FloatArray, IntArray, Leaderboard, Method, PairwiseData
from service.pipeline.config import CONFIDENCE, ELO_ROUNDS, GRID, METHODS, FitConfig
from service.pipeline.reuse import (
    Earlier,
    after_stage,
    distinct_prompts,
    keep_fitted_embeddings,
    kept_rows,
    reusable_topics,
)
from service.pipeline.text_store import Shelf
from service.pipeline.timings import Stopwatch, substep

__all__ = [
    "QueryFeatures",
    "build_predictor",
    "cap_repeats",
    "evaluation_document",
    "fit_aggregates",
    "fit_query_features",
    "fit_users",
    "has_prompts",
    "held_out_evaluation",
    "repeats_document",
    "truth_matrix",
]

log = logging.getLogger(__name__)

Seed = np.random.Generator | int | None


def fit_aggregates(
    data: PairwiseData,
    *,
    rng: Seed = 0,
    progress: Progress | None = None,
    stopwatch: Stopwatch | None = None,
) -> dict[Method, Leaderboard]:
    """The aggregate board of each method of :data:`~service.pipeline.config.METHODS`,
    with :data:`~service.pipeline.config.ELO_ROUNDS` and ``CONFIDENCE``.

    ``stopwatch``, if given, times each as part ``METHOD`` of step ``aggregate boards``.
    """
    watch = stopwatch or Stopwatch()
    boards = {}
    for method in METHODS:
        with watch.step(substep("aggregate boards", method)):
            boards[method] = fit_leaderboard(
                data,
                method=method,
                rounds=ELO_ROUNDS,
                confidence=CONFIDENCE,
                rng=rng,
                progress=progress,
            )
    return boards


def cap_repeats(
    battles: pd.DataFrame, data: PairwiseData, config: FitConfig
) -> tuple[PairwiseData, RepeatEffect | None]:
    """The votes the public boards stand on: ``data`` (``pairwise_from_battles(battles)``)
    with each prompt repeated more than ``config.repeat_cap`` times cut to a seeded
    sample of that many (:func:`ranking.io.repeat_codes.thin_repeated`).

    Returns ``data`` as it is, with no effect (None), when the cap is off or the log has
    no prompts.
    """
    return thin_repeated(battles, data, config.repeat_cap, rng=config.seed)


def repeats_document(
    config: FitConfig,
    effect: RepeatEffect | None,
    data: PairwiseData,
    aggregates: Mapping[Method, Leaderboard],
) -> dict[str, Any]:
    """The manifest's ``repeats``: the option, what the cap touched, how the board moved.

    ``shift`` compares the Bradley-Terry board of every vote (``data``, fitted here
    without intervals) with the capped one (``aggregates["bt"]``): Spearman and the
    largest move (:func:`ranking.repeats.board_shift`); None when no vote was touched.
    ``checked`` is false when the cap was off or the log had no prompts.
    """
    document: dict[str, Any] = {"option": config.repeat_cap, "checked": effect is not None}
    if effect is None:
        return document
    document.update(effect.to_dict())
    shift = None
    if effect.n_touched:
        raw = fit_leaderboard(data, method="bt", interval="none")
        before = {m.model: m.rating for m in raw.models}
        after = {m.model: m.rating for m in aggregates["bt"].models}
        shift = board_shift(before, after).to_dict()
    document["shift"] = shift
    return document


def fit_users(
    data: PairwiseData,
    codes: IntArray,
    names: tuple[str, ...],
    aggregates: Mapping[Method, Leaderboard],
    *,
    min_battles: int,
    rng: Seed = 0,
    progress: Progress | None = None,
    stopwatch: Stopwatch | None = None,
    null_replicates: int = 0,
) -> tuple[UserAnalysis, ...]:
    """Every user's ratings and agreement, one analysis a cell of the grid, in its order.

    ``stopwatch``, if given, times each cell as part ``METHOD SHRINKAGE`` of step
    ``per-user fits``. ``null_replicates`` above 0 also measures each cell's agreement
    under the null of no taste (:mod:`ranking.noise`; the summaries' ``noise``).
    """
    watch = stopwatch or Stopwatch()
    advance = start(progress, "per-user fits", len(GRID), "fits")
    analyses = []
    for method, shrinkage in GRID:
        with watch.step(substep("per-user fits", f"{method} {shrinkage}")):
            analyses.append(
                analyse_users(
                    data,
                    codes,
                    names,
                    method=method,
                    shrinkage=shrinkage,
                    min_battles=min_battles,
                    aggregate=aggregates[method],
                    rng=rng,
                    null_replicates=null_replicates,
                )
            )
        advance(1)
    return tuple(analyses)


def truth_matrix(path: str, users: tuple[str, ...], models: tuple[str, ...]) -> FloatArray:
    """True ratings ``(U, k)`` in the order of ``users`` and ``models``; NaN where unknown.

    Raises
    ------
    ValueError
        When the truth names none of the users or models.
    """
    frame = load_truth(path).user_ratings
    frame.index = frame.index.astype(str)
    aligned = frame.reindex(index=pd.Index(users), columns=pd.Index(models))
    if aligned.isna().all().all():
        raise ValueError(f"--truth {path!r} shares no users or models with the battles")
    return aligned.to_numpy(dtype=np.float64)


def evaluation_document(
    rows: list[EvaluationRow], fraction: float, min_votes: int, n_users: int
) -> dict[str, Any]:
    """The JSON document of ``plb evaluate`` (``evaluation.json`` of a fit directory)."""
    return {
        "fraction": fraction,
        "min_votes": min_votes,
        "users": n_users,
        "n_test_votes": rows[0].scores.n_votes if rows else 0,
        "results": [r.to_dict() for r in rows],
    }


def held_out_evaluation(
    data: PairwiseData,
    codes: IntArray,
    names: tuple[str, ...],
    config: FitConfig,
    progress: Progress | None = None,
) -> dict[str, Any] | None:
    """The held-out evaluation document of a fit; None (with a warning) when no user has
    enough votes to hold any out."""
    if not latest_split(codes, len(names), config.fraction).any():
        log.warning("no user has enough votes for a held-out evaluation; skipped")
        return None
    truth = truth_matrix(config.truth, names, data.models) if config.truth else None
    results = evaluate_personalisation(
        data,
        codes,
        len(names),
        fraction=config.fraction,
        true_ratings=truth,
        rng=config.seed,
        progress=progress,
    )
    return evaluation_document(results, config.fraction, MIN_VOTES, len(names))


def has_prompts(battles: pd.DataFrame) -> bool:
    """Whether any battle has a prompt (what the query features are fitted on)."""
    return "prompt" in battles.columns and not battles["prompt"].isna().all()


def build_predictor(config: FitConfig, topic_model: Any = None) -> tuple[Any, Any]:
    """The unfitted chain TopicModel → UserProfiler → RatingPredictor of ``config``.

    Returns ``(predictor, topic_model)``: the predictor fits the topic model it holds,
    so the second is that very model, fitted once the predictor is. A fitted
    ``topic_model`` (an earlier fit's) is used as it is: the profiler gives each query
    its topic instead of fitting topics.
    """
    from features.predictor import RatingPredictor  # heavy imports: only when needed
    from features.profile import UserProfiler
    from features.topics import TopicModel

    topics = topic_model or TopicModel(
        config.embedding, n_topics=config.n_topics, random_state=config.seed
    )
    return RatingPredictor(UserProfiler(topics), random_state=config.seed), topics


@dataclass(frozen=True)
class QueryFeatures:
    """The fitted query features: the rating predictor, its topic model, the profiles.

    Attributes
    ----------
    predictor : RatingPredictor
    topic_model : TopicModel
    profiles : pandas.DataFrame
        The training users' query profiles, indexed by ``user_id``.
    shelves : tuple of Shelf
        The prompts' rows by text (embeddings, style) to keep for the next fit.
    reuse : dict
        What was taken from an earlier fit: ``from`` (its directory, or None), ``topics``
        (``"kept"`` or ``"fitted"``), ``predictor`` (``"warm"`` or ``"fresh"``), and per
        kind of row the numbers ``kept`` and ``computed``.
    """

    predictor: Any
    topic_model: Any
    profiles: pd.DataFrame
    shelves: tuple[Shelf, ...] = ()
    reuse: dict[str, Any] = field(default_factory=dict)


def fit_query_features(
    battles: pd.DataFrame,
    models: tuple[str, ...],
    config: FitConfig,
    *,
    embeddings: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    earlier: Earlier | None = None,
) -> QueryFeatures | None:
    """The rating predictor (with its topic model) and the users' profiles.

    None, with a warning, when the log has no prompts. ``embeddings`` are precomputed
    vectors by prompt text (the Dask path's), used as the topic model's own; otherwise
    each distinct prompt is embedded here, once, unless ``earlier`` kept its vector.
    Style rows are kept the same way. With ``earlier``, its topic model is kept where
    ``config`` asks for the same topics (:func:`~service.pipeline.reuse.reusable_topics`),
    and its predictor, where it rated the same ``models``, is where the new one starts:
    each member keeps its penalty (no penalty search) and its solver starts from the
    earlier coefficients (``RatingPredictor.fit(start=...)``).
    """
    if not has_prompts(battles):
        log.warning("the log has no prompts: no topics, profiles or predictor fitted")
        return None
    from features.embeddings import default_embedding

    kept_topics = reusable_topics(earlier, config)
    predictor, topic_model = build_predictor(config, kept_topics)
    texts = distinct_prompts(battles)
    if embeddings is not None or kept_topics is not None:
        embedder = None if embeddings is not None else kept_topics.embedder_
    else:
        from features.embeddings import make_embedder

        name = config.embedding or default_embedding()
        embedder = None if name == "tfidf" else make_embedder(name)
    rows = kept_rows(texts, embedder, earlier, progress)
    earlier_fit = None if earlier is None else earlier.predictor
    warm = earlier_fit is not None and tuple(earlier_fit.models_) == tuple(models)
    profiling = after_stage(progress, "query profiles")  # the profiler's unannounced work
    profiler = predictor.profiler
    profiler.style_cache_ = rows.style  # read by the profiler's fit, then taken away
    try:
        predictor.fit(
            battles,
            models=models,
            embeddings=embeddings if embeddings is not None else rows.embeddings,
            progress=profiling,
            start=earlier_fit if warm else None,
        )
    finally:
        profiler.style_cache_ = None
    if embeddings is None:
        rows = keep_fitted_embeddings(rows, texts, topic_model, progress)
    reuse = {
        "from": None if earlier is None or earlier.root is None else str(earlier.root),
        "topics": "fitted" if kept_topics is None else "kept",
        "predictor": "warm" if warm else "fresh",
        **rows.counts,
    }
    profiles = predictor.training_profiles_.to_frame()
    return QueryFeatures(predictor, topic_model, profiles, rows.shelves, reuse)
