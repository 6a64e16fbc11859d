"""``POST /v1/recommend`` with a ``prompt``, or a ``user_id``: the ranking for this prompt
and this person (:mod:`features.per_prompt`), or the person's ranking from their stored
votes.

The person is known by the request's queries, the prompts of their votes (the request's
and, with ``user_id`` and that user's token, those stored for them) and those votes'
outcomes. The prompt sets the topic and embedding part of the context the predictor's
contextual model is read at, the person the style part, and their votes the offset that
applies on every prompt. The answer is a recommend document (docs/SPEC.md section 3) with
``scope: "prompt"`` and ``prompt_topic`` added (section 5), written by
:func:`service.live.recommendation.recommendation` as ``plb recommend --prompt`` writes it;
this module checks the request and gathers the person's votes.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ranking.io.battle_frame import to_battle_frame
from ranking.io.text_checks import text_problem
from ranking.io.validation import battles_from_records
from service.live.errors import InputError, NotAvailable
from service.live.recommendation import recommendation, unknown_models
from service.live.served import Served

__all__ = ["check_text", "recommend_for"]


def check_text(name: str, text: str, limit: int) -> None:
    """Raise :class:`InputError` naming ``name`` unless ``text`` is non-blank, at most
    ``limit`` characters, valid Unicode (no lone surrogate) and free of control characters
    but tabs and line breaks."""
    if not text.strip():
        raise InputError(f"{name}: is blank")
    if len(text) > limit:
        raise InputError(f"{name}: {len(text)} characters, more than {limit}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            f"{name}: is not valid Unicode text (a lone surrogate, "
            f"{text[error.start]!r} at character {error.start})"
        ) from None
    problem = text_problem(text, limit, lines=True)  # control characters (issue 31)
    if problem is not None:
        raise InputError(f"{name}: {problem}")


def recommend_for(
    served: Served,
    queries: list[str],
    records: list[Any] | None,
    *,
    prompt: str | None = None,
    stored: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The recommend document for a prompt, a stored user, or both.

    Parameters
    ----------
    served : Served
        The version served.
    queries : list of str
        The request's queries.
    records : list, optional
        The request's votes (battle records, docs/SPEC.md section 1).
    prompt : str, optional
        Rank for this prompt (``scope: "prompt"``); the person's ranking without it.
    stored : pandas.DataFrame, optional
        The user's stored battles (the caller has checked their token); those naming a
        model the predictor does not know are left out.

    Raises
    ------
    NotAvailable
        When the fit has no rating predictor.
    InputError
        When a vote of ``records`` is malformed or names a model the predictor lacks.
    """
    predictor = served.predictor
    if predictor is None:
        raise NotAvailable(
            "this service's fit has no rating predictor (it was fitted without prompts)"
        )
    parts = []
    if records:
        frame, errors, _ = battles_from_records(records, strict_text=True)
        if errors:
            raise InputError(f"votes[{errors[0].index}]: {errors[0].message}")
        unknown = unknown_models(frame, predictor.models_)
        if unknown:
            raise InputError(f"votes name model {unknown[0]!r}, which this fit does not know")
        parts.append(frame)
    if stored is not None and len(stored):
        known = stored["model_a"].isin(predictor.models_) & stored["model_b"].isin(
            predictor.models_
        )
        parts.append(stored[known.to_numpy()])
    votes = None
    if parts:
        votes = (
            parts[0] if len(parts) == 1 else to_battle_frame(pd.concat(parts, ignore_index=True))
        )
    board = served.public_rows("bt")
    document = recommendation(predictor, queries, votes, board=board, prompt=prompt)
    return {**document, "version": served.version}
