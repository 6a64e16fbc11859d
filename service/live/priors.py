"""Each voter's ratings predicted from their prompts: the prior of their personal board.

The predictor is used through its public interface: ``profiler_``, ``predict``,
``contexts`` and ``models_``.
All voters are predicted in one call, their queries embedded in one batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from features.explanation import query_parts
from features.explanation_parts import QueryParts

__all__ = ["PRIOR_QUERIES", "predicted_priors", "predicted_priors_and_parts"]

#: The most of a user's latest prompts that their predicted prior is made from.
PRIOR_QUERIES = 50


def predicted_priors(
    predictor: Any | None, models: tuple[str, ...], battles: Mapping[str, pd.DataFrame]
) -> dict[str, np.ndarray]:
    """Each user's ratings predicted from their prompts, in the order of ``models``.

    Only a user's latest :data:`PRIOR_QUERIES` prompts are embedded: a profile is a mean
    over queries, steady long before that, and a vote must stay cheap for a user with
    thousands.

    Parameters
    ----------
    predictor : RatingPredictor or None
        The served version's rating predictor; None gives no prior.
    models : tuple of str
        The order of the ratings returned.
    battles : mapping of str to pandas.DataFrame
        Each user's battles.

    Returns
    -------
    dict
        User to ``(len(models),)`` predicted ratings; empty when the predictor predates
        one of ``models`` (no prior until it is refitted) or no user has a prompt.
    """
    both = predicted_priors_and_parts(predictor, models, battles)
    return {user: prior for user, (prior, _) in both.items()}


def predicted_priors_and_parts(
    predictor: Any | None, models: tuple[str, ...], battles: Mapping[str, pd.DataFrame]
) -> dict[str, tuple[np.ndarray, QueryParts]]:
    """:func:`predicted_priors`, each with what the prompts say and how they moved it
    (:func:`features.explanation.query_parts`), from the same profiles."""
    if predictor is None:
        return {}
    frames = [f[["user_id", "prompt"]].dropna().tail(PRIOR_QUERIES) for f in battles.values()]
    prompts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if prompts.empty:
        return {}
    known = list(predictor.models_)
    order = [known.index(m) if m in known else -1 for m in models]
    if min(order) < 0:
        return {}  # the predictor predates a model: no prior until it is refitted
    profiles = predictor.profiler_.transform(prompts)
    prediction = predictor.predict(profiles)
    counts = prompts.groupby(prompts["user_id"].astype(str)).size()
    users = profiles.user_ids.astype(str)
    texts = list(prompts.groupby(prompts["user_id"].astype(str))["prompt"].agg(list)[users])
    parts = query_parts(predictor, profiles, counts.reindex(users), texts=texts)
    return {
        str(user): (prediction.ratings[row, order], parts[row])
        for row, user in enumerate(prediction.user_ids)
    }
