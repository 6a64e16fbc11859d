"""A person's recommended ranking: the predictor's one answer to their queries and votes.

:func:`recommend` is what ``plb recommend`` and ``POST /v1/recommend`` ask of the rating
predictor (:class:`features.predictor.RatingPredictor`), in one call: the person's
ranking from their queries (:meth:`~features.predictor.RatingPredictor.predict`), or for
one prompt (:func:`features.per_prompt.rank_prompt`), sharpened by their own votes
(:meth:`~features.predictor.RatingPredictor.blend`); where the predictor learnt that
queries tell nothing of a person's later votes (its weights 0) and no votes are given,
the public board itself. Against the aggregate board it also says how far the ranking
agrees with it (Spearman) and why it is what it is (:func:`features.explanation.explain`).

The work is ordered so that the answer goes down to :mod:`ranking` as few times as the
maths allows: the explanation's parts before the blend, the odds and the agreement last.
The answer is a :class:`Recommendation`; the JSON document of docs/SPEC.md is made from it
at the edge (:func:`service.live.recommendation.recommendation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from features.explanation_text import evidence_note
from ranking.agreement import spearman_per_row
from ranking.types import FloatArray, PairwiseData

if TYPE_CHECKING:
    from features.explanation_parts import Explanation, QueryParts, Scope
    from features.prediction import Prediction
    from features.predictor import RatingPredictor

__all__ = ["PromptTopic", "Recommendation", "recommend"]


@dataclass(frozen=True)
class PromptTopic:
    """What one prompt was read as: the topic model's ``topic`` id and its ``label``."""

    topic: int
    label: str


@dataclass(frozen=True)
class Recommendation:
    """One person's recommended ranking, and what it stands on.

    Attributes
    ----------
    prediction : Prediction
        One row: the ranking shown (``source`` ``"predicted"``, ``"blended"`` by the
        person's votes, or ``"aggregate"``, the public board itself).
    models : list of dict
        Its rows in the SPEC ``recommend`` shape, best first, with their odds
        (:meth:`~features.prediction.Prediction.ranking`; the public board's own odds
        where the answer is that board).
    n_queries, n_votes : int
        The queries (the votes' prompts among them) and the votes it stands on.
    prior_sd, query_weight, prompt_weight : float
        The predictor's: how far a few votes move a prediction, and how much of the
        queries' (one prompt's) move from the aggregate is kept.
    prompt_topic : PromptTopic or None
        With a prompt, what it was read as.
    spearman : float or None
        The ranking's agreement with the aggregate, rounded (None: undefined, or no
        aggregate given).
    explanation : Explanation or None
        What moved the top models from the aggregate; None without an aggregate.
    """

    prediction: Prediction
    models: list[dict[str, Any]]
    n_queries: int
    n_votes: int
    prior_sd: float
    query_weight: float
    prompt_weight: float
    prompt_topic: PromptTopic | None
    spearman: float | None
    explanation: Explanation | None


def recommend(
    predictor: RatingPredictor,
    queries: list[str],
    votes: PairwiseData | None = None,
    *,
    board: Sequence[Mapping[str, Any]] | None = None,
    aggregate: Mapping[str, float] | None = None,
    prompt: str | None = None,
) -> Recommendation:
    """A person's ranking from their queries, sharpened by their votes when given.

    Parameters
    ----------
    predictor : RatingPredictor
        A fitted rating predictor.
    queries : list of str
        The person's queries, their votes' prompts among them (at least one, or a
        ``prompt``).
    votes : PairwiseData, optional
        The person's own votes on the predictor's models, in its order; none when empty.
    board : sequence of dict, optional
        The public Bradley-Terry board's ranked rows (``model``, ``rating``, ``lower``,
        ``upper``, and its odds ``p_best``, ``rank_lower``, ``rank_upper``); the
        ``aggregate`` ratings when those are not given. Where the predictor's weights
        are 0 and no votes are given, the answer *is* this board, intervals and odds,
        over the models of the predictor it ranks.
    aggregate : mapping of str to float, optional
        Model to aggregate rating: the ranking is compared with it (``spearman``) and
        explained against it (``explanation``).
    prompt : str, optional
        Rank the models for this one prompt and this person
        (:func:`features.per_prompt.rank_prompt`).

    Returns
    -------
    Recommendation
    """
    if aggregate is None and board is not None:
        aggregate = {str(row["model"]): float(row["rating"]) for row in board}
    if votes is not None and not len(votes.outcomes):
        votes = None
    topic = None
    if prompt is None:
        prediction, explanation = _for_person(predictor, queries, votes, board, aggregate)
    else:
        prediction, explanation, topic = _for_prompt(
            predictor, prompt, queries, votes, board, aggregate
        )
    return _answer(predictor, prediction, len(queries), votes, board, aggregate, explanation, topic)


def _for_person(
    predictor: RatingPredictor,
    queries: list[str],
    votes: PairwiseData | None,
    board: Sequence[Mapping[str, Any]] | None,
    aggregate: Mapping[str, float] | None,
) -> tuple[Prediction, Explanation | None]:
    """The person's ranking on all their prompts, and its explanation; ``votes`` None or
    not empty. The explanation's parts come before the blend: only what the votes moved
    is read after it."""
    from features.explanation import query_parts  # heavy: the profiler's models

    profiles = predictor.profiler_.transform_queries(queries)
    contexts = predictor.contexts(profiles)  # the prediction's, and its explanation's
    prediction = predictor.predict(profiles, contexts)
    predicted = prediction.ratings[0]
    parts = None
    if aggregate is not None:
        parts = query_parts(predictor, profiles, [len(queries)], contexts, [queries])[0]
    if votes is not None:
        users = np.zeros(len(votes.outcomes), dtype=np.intp)  # every vote is the one person's
        prediction = predictor.blend(prediction, votes, users)
    elif predictor.query_weight == 0.0:
        prediction = _public_board(predictor, board) or prediction
    if aggregate is None or parts is None:
        return prediction, None
    voted = votes is not None
    return prediction, _explanation(predictor, prediction, aggregate, predicted, parts, voted)


def _for_prompt(
    predictor: RatingPredictor,
    prompt: str,
    queries: list[str],
    votes: PairwiseData | None,
    board: Sequence[Mapping[str, Any]] | None,
    aggregate: Mapping[str, float] | None,
) -> tuple[Prediction, Explanation | None, PromptTopic]:
    """The person's ranking for one ``prompt``, its explanation and what the prompt was
    read as; ``votes`` None or not empty."""
    from features.per_prompt import rank_prompt  # heavy: the profiler's models
    from features.prompt_explanation import prompt_parts

    ranked = rank_prompt(predictor, prompt, queries, votes)
    topics = getattr(predictor.profiler_.topic_model_, "topics_", None) or []
    label = next((t.label for t in topics if t.topic == ranked.topic), f"topic {ranked.topic}")
    prediction = ranked.prediction
    if votes is None and predictor.query_weight == 0.0 and predictor.prompt_weight == 0.0:
        prediction = _public_board(predictor, board) or prediction
    explanation = None
    if aggregate is not None:
        parts = prompt_parts(predictor, prompt, queries, ranked)
        explanation = _explanation(
            predictor, prediction, aggregate, parts.ratings, parts, votes is not None, "prompt"
        )
    return prediction, explanation, PromptTopic(ranked.topic, label)


def _explanation(
    predictor: RatingPredictor,
    prediction: Prediction,
    aggregate: Mapping[str, float],
    predicted: FloatArray,
    parts: QueryParts,
    voted: bool,
    scope: Scope = "person",
) -> Explanation:
    """What moved the top models of ``prediction`` from the aggregate; ``predicted`` the
    ratings the queries gave, before the person's votes."""
    from features.explanation import explain  # heavy: the topic labels' models

    reference = _aggregate_ratings(prediction.models, aggregate)
    public = prediction.source == "aggregate"
    return explain(
        prediction.models,
        prediction.ratings[0],
        reference,
        prediction.ratings[0] if public else predicted,
        parts,
        from_prediction=not public,
        note=evidence_note(predictor.query_weight, public, voted=voted),
        scope=scope,
    )


def _answer(
    predictor: RatingPredictor,
    prediction: Prediction,
    n_queries: int,
    votes: PairwiseData | None,
    board: Sequence[Mapping[str, Any]] | None,
    aggregate: Mapping[str, float] | None,
    explanation: Explanation | None,
    topic: PromptTopic | None,
) -> Recommendation:
    """The answer: ``prediction``'s rows with their odds and its agreement with the
    aggregate, both read in :mod:`ranking`, last and once for either ranking."""
    reference = None if aggregate is None else _aggregate_ratings(prediction.models, aggregate)
    board_odds = _board_odds(prediction, board)
    models = prediction.ranking(0, predictor.confidence)
    if board_odds is not None:
        models = [{**m, **board_odds[m["model"]]} for m in models]
    spearman = None
    if reference is not None:  # Spearman against the aggregate, rounded (None: undefined)
        known = np.isfinite(reference)[None, :]
        rho = float(spearman_per_row(prediction.ratings[0][None, :], reference, known)[0])
        spearman = round(rho, 4) if np.isfinite(rho) else None
    return Recommendation(
        prediction,
        models,
        n_queries,
        0 if votes is None else len(votes.outcomes),
        predictor.prior_sd,
        predictor.query_weight,
        predictor.prompt_weight,
        topic,
        spearman,
        explanation,
    )


def _public_board(
    predictor: RatingPredictor, board: Sequence[Mapping[str, Any]] | None
) -> Prediction | None:
    """The aggregate board as a one-row prediction: the models it ranks that the
    predictor knows, in the predictor's order (a public board leaves provisional models
    out, and so does this answer). None without a board that ranks two such models with
    intervals."""
    rows = {str(row["model"]): row for row in board or ()}
    models = tuple(
        m
        for m in predictor.models_
        if m in rows and rows[m].get("lower") is not None and rows[m].get("upper") is not None
    )
    if len(models) < 2:
        return None
    columns: dict[str, list[float]] = {"rating": [], "lower": [], "upper": []}
    for model in models:
        for key, values in columns.items():
            values.append(float(rows[model][key]))
    from features.prediction import Prediction  # scikit-learn: only when needed

    ratings, lower, upper = (np.asarray([values]) for values in columns.values())
    you = np.asarray(["you"], dtype=object)
    return Prediction("aggregate", you, models, ratings, lower, upper)


_ODDS = ("p_best", "rank_lower", "rank_upper")


def _board_odds(
    prediction: Prediction, board: Sequence[Mapping[str, Any]] | None
) -> dict[str, dict[str, Any]] | None:
    """The public board's own odds of each model of an answer that is the board, where
    the board ranks exactly those models and gives its odds (the board's draws keep the
    correlations of its ratings, which the rows' intervals alone do not); else None."""
    if prediction.source != "aggregate":
        return None
    rows = {str(row["model"]): row for row in board or ()}
    if set(rows) != set(prediction.models):
        return None
    if not all(rows[m].get(key) is not None for m in prediction.models for key in _ODDS):
        return None
    return {m: {key: rows[m][key] for key in _ODDS} for m in prediction.models}


def _aggregate_ratings(models: tuple[str, ...], aggregate: Mapping[str, float]) -> FloatArray:
    """The aggregate's rating of each of the predictor's models, NaN where it has none."""
    return np.array([aggregate.get(m, np.nan) for m in models])
