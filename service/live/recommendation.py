"""The ``recommend`` document (docs/SPEC.md section 3), shared by ``plb recommend`` and the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ranking.agreement import spearman_per_row
from ranking.io.frames import pairwise_from_battles
from ranking.types import FloatArray, PairwiseData

__all__ = ["LITTLE_WEIGHT", "evidence_note", "recommendation", "unknown_models", "vote_prompts"]

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
    board: Sequence[Mapping[str, Any]] | None = None,
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
        and ``explanation``, what moved the top models from it.
    board : sequence of dict, optional
        The public Bradley-Terry board's ranked rows (``model``, ``rating``, ``lower``,
        ``upper``); the ``aggregate`` ratings when those are not given. Where the
        predictor learnt that queries do not predict a person's later votes (its
        weights 0) and no votes are given, the answer *is* this board, intervals and
        all, over the models it ranks: ``source`` ``"aggregate"``, and the explanation
        says so.
    prompt : str, optional
        Rank the models for this one prompt and this person (:mod:`features.per_prompt`):
        the prompt sets the topic and embedding part of the context, the person the style
        part, and their votes the offset that applies on every prompt.

    Returns
    -------
    dict
        ``source``, ``models`` (best first, SPEC ranks, each with its odds: ``p_best``,
        ``rank_lower``, ``rank_upper``), ``n_queries``, ``n_votes``, ``prior_sd``,
        ``weights`` (how much of the queries' move from the aggregate is kept: ``queries``
        for the person, ``prompt`` for one prompt, each in [0, 1]); with
        ``prompt``, ``scope`` (``"prompt"``) and ``prompt_topic`` (``topic``, the topic
        model's id, and its ``label``); and ``spearman`` and ``explanation``
        (:func:`features.explanation.explain`; with ``prompt`` its ``scope`` is
        ``"prompt"``) when ``aggregate`` is given.
    """
    if votes is not None:
        queries = queries + vote_prompts(votes)
    if aggregate is None and board is not None:
        aggregate = {str(row["model"]): float(row["rating"]) for row in board}
    if prompt is not None:
        return _prompt_recommendation(predictor, prompt, queries, votes, aggregate, board)
    profiles = predictor.profiler_.transform_queries(queries)
    contexts = predictor.contexts(profiles)  # the prediction's, and its explanation's
    prediction = predictor.predict(profiles, contexts)
    predicted = prediction.ratings[0]
    data = _vote_data(predictor, votes)
    if data is not None:
        users = np.zeros(len(data.outcomes), dtype=np.intp)  # every vote is the one user's
        prediction = predictor.blend(prediction, data, users)
    elif predictor.query_weight == 0.0:
        prediction = _public_board(predictor, board) or prediction
    document = _ranking_document(predictor, prediction, len(queries), data, board)
    if aggregate is not None:
        reference = _aggregate_ratings(prediction.models, aggregate)
        document["spearman"] = _spearman(prediction.ratings[0], reference)
        from features.explanation import explain, query_parts  # heavy: only when asked

        parts = query_parts(predictor, profiles, [len(queries)], contexts, [queries])[0]
        public = prediction.source == "aggregate"
        explanation = explain(
            prediction.models,
            prediction.ratings[0],
            reference,
            prediction.ratings[0] if public else predicted,
            parts,
            from_prediction=not public,
            note=evidence_note(predictor.query_weight, public, voted=data is not None),
        )
        document["explanation"] = explanation.to_dict()
    return document


#: Below this weight, the explanation says the queries move the ranking only a little.
LITTLE_WEIGHT = 0.5


def evidence_note(weight: float, public: bool, voted: bool = False) -> str | None:
    """What the explanation says of how much the queries count, or None at full weight.

    Parameters
    ----------
    weight : float
        The predictor's ``query_weight``.
    public : bool
        Whether the ranking shown is the aggregate board itself.
    voted : bool
        Whether the person's own votes moved the ranking too.
    """
    if public:
        return (
            "Your queries don't separate you from everyone yet: people's earlier queries "
            "did not predict their later votes better than the public ranking, so this is "
            "the public ranking. Your votes will make it yours."
        )
    if weight < LITTLE_WEIGHT:
        start = "starts" if voted else "moves"
        then = "; your votes move it from there." if voted else "."
        return (
            "Your queries say little about what you will prefer: people's earlier queries "
            "predicted their later votes only a little better than the public ranking, so "
            f"this ranking {start} {weight:.0%} of the way from the public ranking toward "
            f"what your queries suggest{then}"
        )
    return None


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
    from features.prediction import Prediction  # a light module, but only when needed

    ratings, lower, upper = (np.asarray([values]) for values in columns.values())
    you = np.asarray(["you"], dtype=object)
    return Prediction("aggregate", you, models, ratings, lower, upper)


def _prompt_recommendation(
    predictor: RatingPredictor,
    prompt: str,
    queries: list[str],
    votes: pd.DataFrame | None,
    aggregate: dict[str, float] | None,
    board: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """:func:`recommendation` for one ``prompt``; ``queries`` hold the votes' prompts."""
    from features.per_prompt import rank_prompt  # the profiler's models: only when asked

    data = _vote_data(predictor, votes)
    ranked = rank_prompt(predictor, prompt, queries, data)
    topics = getattr(predictor.profiler_.topic_model_, "topics_", None) or []
    label = next((t.label for t in topics if t.topic == ranked.topic), f"topic {ranked.topic}")
    prediction = ranked.prediction
    if data is None and predictor.query_weight == 0.0 and predictor.prompt_weight == 0.0:
        prediction = _public_board(predictor, board) or prediction
    document = _ranking_document(predictor, prediction, len(queries), data, board)
    document["scope"] = "prompt"
    document["prompt_topic"] = {"topic": ranked.topic, "label": label}
    if aggregate is not None:
        reference = _aggregate_ratings(prediction.models, aggregate)
        document["spearman"] = _spearman(prediction.ratings[0], reference)
        from features.explanation import explain  # heavy: only when asked
        from features.prompt_explanation import prompt_parts

        parts = prompt_parts(predictor, prompt, queries, ranked)
        public = prediction.source == "aggregate"
        explanation = explain(
            prediction.models,
            prediction.ratings[0],
            reference,
            prediction.ratings[0] if public else parts.ratings,
            parts,
            from_prediction=not public,
            note=evidence_note(predictor.query_weight, public, voted=data is not None),
            scope="prompt",
        )
        document["explanation"] = explanation.to_dict()
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
    board: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The keys every recommend document starts with, in the SPEC's order."""
    models = prediction.ranking(0, predictor.confidence)
    if prediction.source == "aggregate":
        models = _board_odds(models, board)
    return {
        "source": prediction.source,
        "models": models,
        "n_queries": n_queries,
        "n_votes": 0 if data is None else len(data.outcomes),
        "prior_sd": round(predictor.prior_sd, 1),
        "weights": {
            "queries": round(predictor.query_weight, 3),
            "prompt": round(predictor.prompt_weight, 3),
        },
    }


_ODDS = ("p_best", "rank_lower", "rank_upper")


def _board_odds(
    models: list[dict[str, Any]], board: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """The public board's own odds on the rows of an answer that is the board, where the
    board ranks exactly those models and gives its odds (the board's draws keep the
    correlations of its ratings, which the rows' intervals alone do not)."""
    rows = {str(row["model"]): row for row in board or ()}
    if set(rows) != {m["model"] for m in models}:
        return models
    if not all(all(rows[m["model"]].get(key) is not None for key in _ODDS) for m in models):
        return models
    return [{**m, **{key: rows[m["model"]][key] for key in _ODDS}} for m in models]


def _aggregate_ratings(models: tuple[str, ...], aggregate: dict[str, float]) -> FloatArray:
    """The aggregate's rating of each of the predictor's models, NaN where it has none."""
    return np.array([aggregate.get(m, np.nan) for m in models])


def _spearman(ratings: FloatArray, reference: FloatArray) -> float | None:
    """Spearman of one user's ``ratings`` against the aggregate's, rounded (``None``: undefined)."""
    known = np.isfinite(reference)[None, :]
    rho = float(spearman_per_row(ratings[None, :], reference, known)[0])
    return round(rho, 4) if np.isfinite(rho) else None
