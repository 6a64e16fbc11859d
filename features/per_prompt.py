"""Rankings for one prompt and one person, from the contextual model the predictor averages.

The rating predictor (:class:`features.predictor.RatingPredictor`) fits every training
vote with a context of the constant 1, *the vote's own query* (its topic, one-hot, and
its embedding components) and *the voter's* writing style (their standardised mean
style; the query's own with ``style_context="query"``). A person's predicted rating is
the strength at their *mean* context: topic shares, mean components, their style. Their
strength on one prompt ``q`` is the strength at the context the model was fitted on for
a vote on ``q``::

    s(q, u) = w . [1, onehot(topic(q)), components(q), style(u)]

that is the person's profile with its topic shares and mean components replaced by the
prompt's own (:meth:`features.profile.UserProfiler.prompt_profiles`); with
``style_context="query"`` the style part is the prompt's own too. Nothing is fitted
anew: this is the predictor's model read at the context of one vote rather than at the
average of a person's.

A person's votes tell what the context does not: the blend
(:meth:`~features.predictor.RatingPredictor.blend`) fits their ratings with the
prediction as prior mean, so ``d(u) = blended(u) - predicted(u)`` is their own taste
beyond their profile, the posterior mean of a per-person offset with prior
``N(0, prior_sd^2)`` that applies on every prompt alike. Their rating on ``q`` is::

    person(u) + w_prompt * (s(q, u) - s(u)) + d(u)

where ``person(u)``, the person's prediction, is the aggregate moved toward ``s(u)``
(their mean context's strength) by ``w_person``, and both weights were learnt on
training users' later votes (:mod:`features.evidence`): where a prompt's topic says
nothing of what people prefer, ``w_prompt`` is 0 and the ranking is the person's
(:func:`predict_prompts`). At weight 1 the rating is ``s(q, u) + d(u)``. The offset is
learnt against the mean context rather than each vote's own: the two agree when the
person's votes share one context, and differ little when the models' strengths vary
little across their prompts.

When the model has no topic, component or style effects (all those coefficients zero),
``s(q, u)`` is the same for every prompt, the person's own prediction, and the per-prompt
ranking is the person's ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from features.prediction import Prediction
from features.user_profiles import UserProfiles
from ranking.pairwise import to_elo_scale
from ranking.types import FloatArray, IntArray, PairwiseData

if TYPE_CHECKING:
    from features.predictor import RatingPredictor

__all__ = ["PromptRanking", "person_deviation", "predict_prompts", "rank_prompt"]


@dataclass(frozen=True)
class PromptRanking:
    """One person's ratings for one prompt, and what the prompt was read as.

    Attributes
    ----------
    prediction : Prediction
        One row: the ratings for this prompt and this person (``source`` is
        ``"predicted"``, or ``"blended"`` when the person's votes shifted it).
    person : Prediction
        The person's own ranking, for all their prompts alike (their profile, blended
        with their votes when given).
    topic : int
        The prompt's topic, as the predictor's topic model numbers them.
    people : UserProfiles
        The person's profile, of their queries (of the prompt alone without them): what
        the explanation of this ranking splits (:mod:`features.prompt_explanation`).
    contexts : list of ndarray
        The predictor's contexts of ``people``
        (:meth:`~features.predictor.RatingPredictor.contexts`), computed once for the
        ranking and its explanation.
    """

    prediction: Prediction
    person: Prediction
    topic: int
    people: UserProfiles
    contexts: list[FloatArray]


def person_deviation(predicted: Prediction, blended: Prediction) -> FloatArray:
    """``(n_people, n_models)`` how far each person's votes moved them from their profile.

    The blend's ratings less the prediction it was the prior of (Elo points): the
    posterior mean of the person's own offset, applied on every prompt.
    """
    if predicted.ratings.shape != blended.ratings.shape or predicted.models != blended.models:
        raise ValueError(
            "Arguments 'predicted' and 'blended' must rate the same people and models."
        )
    return blended.ratings - predicted.ratings


def predict_prompts(
    predictor: RatingPredictor,
    prompts: list[str],
    people: UserProfiles,
    rows: npt.ArrayLike,
    person: Prediction | None = None,
    deviation: FloatArray | None = None,
    context: tuple[UserProfiles, IntArray] | None = None,
    people_contexts: list[FloatArray] | None = None,
) -> tuple[Prediction, IntArray]:
    """Ratings of each prompt's person for that prompt (module docstring).

    Parameters
    ----------
    predictor : RatingPredictor
        A fitted predictor.
    prompts : list of str
        The prompts.
    people : UserProfiles
        The people's profiles.
    rows : array_like of int
        ``(len(prompts),)`` row of ``people`` (and of ``person``, ``deviation``) of each
        prompt's person.
    person : Prediction, optional
        The people's own rankings (predicted or blended), rows as ``people``: their
        intervals' half-widths are kept, since a prompt's context adds no evidence.
    deviation : ndarray, optional
        ``(n_people, n_models)`` the people's offsets (:func:`person_deviation`).
    context : (UserProfiles, ndarray of int), optional
        What :meth:`features.profile.UserProfiler.prompt_profiles` gives for these
        ``prompts``, ``people`` and ``rows``, when already computed: the same prompts
        ranked twice (predicted, then blended) embed and read them once, with the same
        result.
    people_contexts : list of ndarray, optional
        The predictor's contexts of ``people``
        (:meth:`~features.predictor.RatingPredictor.contexts`), when computed already.

    Returns
    -------
    prediction : Prediction
        One row per prompt; ``source`` that of ``person`` (``"predicted"`` without).
    topics : ndarray of int
        The prompts' topics.
    """
    index = np.asarray(rows, dtype=np.intp)
    if context is None:
        context = predictor.profiler_.prompt_profiles(
            prompts, people, index, predictor.style_context
        )
    profiles, topics = context
    at_person = predictor.strengths(people, people_contexts)[index]
    moved = predictor.prompt_weight * (predictor.strengths(profiles) - at_person)
    ratings = to_elo_scale(predictor.weigh(at_person) + moved)
    if deviation is not None:
        ratings = ratings + deviation[index]
    if person is None:
        below = above = np.full_like(ratings, predictor.interval_half_width)
    else:
        below = (person.ratings - person.lower)[index]
        above = (person.upper - person.ratings)[index]
    source = "predicted" if person is None else person.source
    prediction = Prediction(
        source, profiles.user_ids, predictor.models_, ratings, ratings - below, ratings + above
    )
    return prediction, topics


def rank_prompt(
    predictor: RatingPredictor,
    prompt: str,
    queries: list[str] | None = None,
    votes: PairwiseData | None = None,
) -> PromptRanking:
    """One person's ranking for ``prompt``: from their queries, shifted by their votes.

    Parameters
    ----------
    predictor : RatingPredictor
        A fitted predictor.
    prompt : str
        The prompt to rank the models for (non-blank).
    queries : list of str, optional
        The person's queries (their votes' prompts among them): their profile, their
        style in particular, is that of these queries; of the prompt alone without them.
        The prompt sets the topic and embedding part of the context either way.
    votes : PairwiseData, optional
        The person's own votes, naming the predictor's models in its order.

    Returns
    -------
    PromptRanking
    """
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"Argument 'prompt' must be a non-blank string, not {prompt!r}.")
    texts = list(queries) if queries else [prompt]
    people = predictor.profiler_.transform_queries(texts)
    contexts = predictor.contexts(people)  # the person's prediction's, and the prompt's
    person = predictor.predict(people, contexts)
    deviation = None
    if votes is not None and len(votes.outcomes):
        blended = predictor.blend(person, votes, np.zeros(len(votes.outcomes), dtype=np.intp))
        deviation = person_deviation(person, blended)
        person = blended
    prediction, topics = predict_prompts(
        predictor, [prompt], people, [0], person, deviation, people_contexts=contexts
    )
    return PromptRanking(prediction, person, int(topics[0]), people, contexts)
