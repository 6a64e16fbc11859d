"""The ``recommend`` document (docs/SPEC.md section 3), shared by ``plb recommend`` and the API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ranking.agreement import spearman_per_row
from ranking.io.frames import pairwise_from_battles
from ranking.types import FloatArray, PairwiseData

__all__ = ["recommendation", "unknown_models", "vote_prompts"]

if TYPE_CHECKING:
    from features.prediction import Prediction
    from features.predictor import RatingPredictor


def unknown_models(votes: pd.DataFrame, models: tuple[str, ...]) -> list[str]:
    """The models the votes name that ``models`` lacks, vote by vote, ``model_a`` first."""
    known = set(models)
    pairs = votes[["model_a", "model_b"]].astype(str).to_numpy()
    return list(dict.fromkeys(name for name in pairs.ravel() if name not in known))


def vote_prompts(votes: pd.DataFrame) -> list[str]:
    """The non-blank prompts of a user's votes: more queries to predict from."""
    if "prompt" not in votes.columns:
        return []
    prompts = votes["prompt"].dropna().astype(str)
    return [p for p in prompts if p.strip()]


def recommendation(
    predictor: RatingPredictor,
    queries: list[str],
    votes: pd.DataFrame | None = None,
    *,
    aggregate: dict[str, float] | None = None,
    prompt: str | None = None,
) -> dict[str, Any]:
    """A user's ranking from their queries, sharpened by their votes when given.

    Parameters
    ----------
    predictor : RatingPredictor
        A fitted rating predictor.
    queries : list of str
        The user's queries (at least one).
    votes : pandas.DataFrame, optional
        The user's own votes, a canonical battle frame naming only the predictor's
        models (check with :func:`unknown_models`); their prompts join the queries.
    aggregate : dict, optional
        Model to aggregate rating: adds ``spearman``, the ranking's agreement with it,
        and (without ``prompt``) ``explanation``, what moved the top models from it.
    prompt : str, optional
        Rank the models for this one prompt and this person (:mod:`features.per_prompt`):
        the prompt sets the topic and embedding part of the context, the person the style
        part, and their votes the offset that applies on every prompt.

    Returns
    -------
    dict
        ``source``, ``models`` (best first, SPEC ranks, each with its odds: ``p_best``,
        ``rank_lower``, ``rank_upper``), ``n_queries``, ``n_votes``, ``prior_sd``; with
        ``prompt``, ``scope`` (``"prompt"``) and ``prompt_topic`` (``topic``, the topic
        model's id, and its ``label``); and ``spearman`` and, without ``prompt``,
        ``explanation`` (:func:`features.explanation.explain`) when ``aggregate`` is given.
    """
    if votes is not None:
        queries = queries + vote_prompts(votes)
    if prompt is not None:
        return _prompt_recommendation(predictor, prompt, queries, votes, aggregate)
    profiles = predictor.profiler_.transform_queries(queries)
    contexts = predictor.contexts(profiles)  # the prediction's, and its explanation's
    prediction = predictor.predict(profiles, contexts)
    predicted = prediction.ratings[0]
    data = _vote_data(predictor, votes)
    if data is not None:
        users = np.zeros(len(data.outcomes), dtype=np.intp)  # every vote is the one user's
        prediction = predictor.blend(prediction, data, users)
    document = _ranking_document(predictor, prediction, len(queries), data)
    if aggregate is not None:
        reference = _aggregate_ratings(predictor, aggregate)
        document["spearman"] = _spearman(prediction.ratings[0], reference)
        from features.explanation import explain, query_parts  # heavy: only when asked

        parts = query_parts(predictor, profiles, [len(queries)], contexts)[0]
        explanation = explain(predictor.models_, prediction.ratings[0], reference, predicted, parts)
        document["explanation"] = explanation.to_dict()
    return document


def _prompt_recommendation(
    predictor: RatingPredictor,
    prompt: str,
    queries: list[str],
    votes: pd.DataFrame | None,
    aggregate: dict[str, float] | None,
) -> dict[str, Any]:
    """:func:`recommendation` for one ``prompt``; ``queries`` hold the votes' prompts."""
    from features.per_prompt import rank_prompt  # the profiler's models: only when asked

    data = _vote_data(predictor, votes)
    ranked = rank_prompt(predictor, prompt, queries, data)
    topics = getattr(predictor.profiler_.topic_model_, "topics_", None) or []
    label = next((t.label for t in topics if t.topic == ranked.topic), f"topic {ranked.topic}")
    document = _ranking_document(predictor, ranked.prediction, len(queries), data)
    document["scope"] = "prompt"
    document["prompt_topic"] = {"topic": ranked.topic, "label": label}
    if aggregate is not None:
        reference = _aggregate_ratings(predictor, aggregate)
        document["spearman"] = _spearman(ranked.prediction.ratings[0], reference)
    return document


def _vote_data(predictor: RatingPredictor, votes: pd.DataFrame | None) -> PairwiseData | None:
    """The user's votes as pairwise data on the predictor's models; ``None`` for none."""
    if votes is None or not len(votes):
        return None
    return pairwise_from_battles(votes, models=predictor.models_)


def _ranking_document(
    predictor: RatingPredictor,
    prediction: Prediction,
    n_queries: int,
    data: PairwiseData | None,
) -> dict[str, Any]:
    """The keys every recommend document starts with, in the SPEC's order."""
    return {
        "source": prediction.source,
        "models": prediction.ranking(0, predictor.confidence),
        "n_queries": n_queries,
        "n_votes": 0 if data is None else len(data.outcomes),
        "prior_sd": round(predictor.prior_sd, 1),
    }


def _aggregate_ratings(predictor: RatingPredictor, aggregate: dict[str, float]) -> FloatArray:
    """The aggregate's rating of each of the predictor's models, NaN where it has none."""
    return np.array([aggregate.get(m, np.nan) for m in predictor.models_])


def _spearman(ratings: FloatArray, reference: FloatArray) -> float | None:
    """Spearman of one user's ``ratings`` against the aggregate's, rounded (``None``: undefined)."""
    known = np.isfinite(reference)[None, :]
    rho = float(spearman_per_row(ratings[None, :], reference, known)[0])
    return round(rho, 4) if np.isfinite(rho) else None
