"""The ``recommend`` document (docs/SPEC.md section 3), shared by ``plb recommend`` and the API.

The answer is :func:`features.recommend.recommend`'s, asked once; this module reads the
person's votes into pairwise data and makes the JSON document of that answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from features.recommend import recommend
from ranking.io.frames import pairwise_from_battles

__all__ = ["recommendation", "unknown_models", "vote_prompts"]

if TYPE_CHECKING:
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
    data = None  # the votes as pairwise data on the predictor's models
    if votes is not None and len(votes):
        data = pairwise_from_battles(votes, models=predictor.models_)
    answer = recommend(predictor, queries, data, board=board, aggregate=aggregate, prompt=prompt)
    document: dict[str, Any] = {
        "source": answer.prediction.source,
        "models": answer.models,
        "n_queries": answer.n_queries,
        "n_votes": answer.n_votes,
        "prior_sd": round(answer.prior_sd, 1),
        "weights": {
            "queries": round(answer.query_weight, 3),
            "prompt": round(answer.prompt_weight, 3),
        },
    }
    if answer.prompt_topic is not None:
        document["scope"] = "prompt"
        document["prompt_topic"] = {
            "topic": answer.prompt_topic.topic,
            "label": answer.prompt_topic.label,
        }
    if answer.explanation is not None:
        document["spearman"] = answer.spearman
        document["explanation"] = answer.explanation.to_dict()
    return document
