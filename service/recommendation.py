"""The ``recommend`` document (docs/SPEC.md section 3), shared by ``plb recommend`` and the API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ranking.agreement import spearman_per_row
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

    Returns
    -------
    dict
        ``source``, ``models`` (best first, SPEC ranks, each with its odds: ``p_best``,
        ``rank_lower``, ``rank_upper``), ``n_queries``, ``n_votes``, ``prior_sd``, and
        ``spearman`` and ``explanation`` (:func:`features.explanation.explain`) when
        ``aggregate`` is given.
    """
    if votes is not None:
        queries = queries + vote_prompts(votes)
    profiles = predictor.profiler_.transform(pd.DataFrame({"user_id": "you", "prompt": queries}))
    prediction = predictor.predict(profiles)
    predicted = prediction.ratings[0]
    n_votes = 0
    if votes is not None and len(votes):
        data = pairwise_from_battles(votes, models=predictor.models_)
        n_votes = len(data.outcomes)
        users = np.zeros(n_votes, dtype=np.intp)  # every vote is the one user's
        prediction = predictor.blend(prediction, data, users)
    document: dict[str, Any] = {
        "source": prediction.source,
        "models": prediction.ranking(0, predictor.confidence),
        "n_queries": len(queries),
        "n_votes": n_votes,
        "prior_sd": round(predictor.prior_sd, 1),
    }
    if aggregate is not None:
        reference = np.array([aggregate.get(m, np.nan) for m in predictor.models_])
        known = np.isfinite(reference)[None, :]
        rho = float(spearman_per_row(prediction.ratings[:1], reference, known)[0])
        document["spearman"] = round(rho, 4) if np.isfinite(rho) else None
        from features.explanation import explain, query_parts  # heavy: only when asked

        parts = query_parts(predictor, profiles, [len(queries)])[0]
        explanation = explain(predictor.models_, prediction.ratings[0], reference, predicted, parts)
        document["explanation"] = explanation.to_dict()
    return document
