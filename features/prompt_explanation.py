"""Why a ranking for one prompt is what it is: the person's parts, moved by the prompt.

A per-prompt ranking (:func:`features.per_prompt.rank_prompt`) is the person's
prediction moved by what the prompt is about, plus the person's own offset from their
votes::

    shown = person_predicted + prompt_move + votes,   prompt_move = shown - person_shown

(``person_shown`` the person's ranking, blended with their votes when given, so the move
is exactly the prompt's part). :func:`prompt_parts` gives the parts of
:func:`features.explanation.query_parts` with the prompt's move added to the ``topic``
part (the prompt's topic and embedding replaced the person's in the context; with the
predictor's ``style_context="query"`` its writing style too), and the prompt's own topic
as the only topic, share 1, with whether the prompt fits it closely enough to name it
(:func:`features.topic_labels.fits_topic`). :func:`features.explanation.explain` with
``scope="prompt"`` then says it "for this prompt".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from features.explanation import query_parts
from features.explanation_parts import QueryParts, TopicShare
from features.topic_labels import closeness_threshold, fits_topic, topic_closeness

if TYPE_CHECKING:
    from features.per_prompt import PromptRanking
    from features.predictor import RatingPredictor

__all__ = ["prompt_parts"]


def prompt_parts(
    predictor: RatingPredictor,
    prompt: str,
    queries: Sequence[str],
    ranked: PromptRanking,
) -> QueryParts:
    """The parts of one prompt's ranking for one person (module docstring).

    Parameters
    ----------
    predictor : RatingPredictor
        The fitted predictor that ranked the prompt.
    prompt : str
        The prompt.
    queries : sequence of str
        The person's queries (their votes' prompts among them), as given to
        :func:`~features.per_prompt.rank_prompt`; the prompt alone when empty.
    ranked : PromptRanking
        What :func:`~features.per_prompt.rank_prompt` answered.

    Returns
    -------
    QueryParts
        ``typical`` and ``style`` of the person, ``topic`` the person's plus the prompt's
        move, ``topics`` the prompt's topic (share 1), the person's style traits.
    """
    texts = list(queries) if queries else [prompt]
    person = query_parts(predictor, ranked.people, [len(texts)], ranked.contexts)[0]
    move = ranked.prediction.ratings[0] - ranked.person.ratings[0]
    model = predictor.profiler_.topic_model_
    described = {t.topic: t for t in getattr(model, "topics_", None) or []}
    found = described.get(ranked.topic)
    label = found.label if found is not None else f"topic {ranked.topic}"
    name = found.name if found is not None else "other questions"
    closeness = topic_closeness(model, [prompt], [ranked.topic])
    population = predictor.profiler_.topic_share_
    share = float(population[ranked.topic]) if 0 <= ranked.topic < population.size else 0.0
    topic = TopicShare(
        ranked.topic,
        label,
        1.0,
        round(share, 4),
        name,
        bool(fits_topic([prompt], closeness, [name], closeness_threshold(model))[0]),
    )
    return QueryParts(
        person.models,
        person.typical,
        person.topic + np.asarray(move, dtype=np.float64),
        person.style,
        (topic,),
        person.traits,
        person.n_queries,
    )
