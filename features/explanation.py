"""Why a user's ranking is what it is: their topics, their style, what moved each model.

The rating predictor (:mod:`features.predictor`) is linear in a user's context: 1, their
topic shares and mean query-embedding components, and their style components, so each
averaged member's strength of model ``m`` is ``w_m . c``. Against the context ``c0`` of
someone whose queries say nothing (the profile every profile is smoothed toward: the
population's topic shares, mean components and style), a user's prediction splits
exactly into::

    predicted = typical + topic + style
    typical   = the predictor's rating of that someone (its ``w_m . c0``)
    topic     = what the queries are about: w_m . (c - c0) over the topic shares and
                the embedding components
    style     = how they are written: w_m . (c - c0) over the style components

each averaged over the members, scaled by the predictor's ``query_weight`` (how much of
the queries' move from the aggregate it keeps, :mod:`features.evidence`; ``typical`` is
then the aggregate moved as far) and put on the Elo scale as the prediction is. The user's
own votes then move the prediction to the ranking shown (:meth:`RatingPredictor.blend`,
or a personal board's fit): ``votes = shown - prior``. Against the aggregate board::

    shown = aggregate + baseline + topic + style + votes,   baseline = typical - aggregate

``baseline`` is the predictor's own fit (a contextual model with its penalty) against the
aggregate Bradley-Terry board, for anyone: no part of it is the user. A board whose prior
is the aggregate (a ``fitted`` personal board) has only ``votes``.

The style traits are the style means of the user's queries that stand out most from the
training users', standardised as the predictor standardises them
(:data:`features.style_words.STYLE_LABELS` names them in words, ``STYLE_SENTENCES`` says
them of the user). Each topic has the name a person would use and whether the user's
queries fit it closely enough to name it (:mod:`features.topic_labels`), and the
explanation says everything in plain sentences (:mod:`features.explanation_text`); one
prompt's ranking is explained by :mod:`features.prompt_explanation` (``scope="prompt"``).

Where the votes carry the two answers, the explanation also gives the person's taste in
answers (:class:`Taste`, from :mod:`ranking.personal_style`): for each answer style
feature, the Elo points it moves their votes per doubling of length (or per 3 headers,
list items, bold spans against none), with its interval and everyone's, and whether it is
told apart from everyone's; where per-person taste does not predict votes better than
everyone's, it says that everyone's is used.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from features.answer_style import ANSWER_STYLE_FEATURES, style_differences
from features.explanation_parts import (
    AnswerTaste,
    Explanation,
    ModelParts,
    QueryParts,
    Scope,
    StyleTrait,
    Taste,
    TopicShare,
)
from features.explanation_text import explanation_sentences, taste_sentence
from features.style_words import ANSWER_TASTE_UNITS, STYLE_LABELS, trait_sentence
from features.topic_labels import fitting_topics
from features.user_profiles import STYLE_SOURCES, UserProfiles
from ranking.pairwise import ELO_PER_NAT
from ranking.personal_style.results import UserStyle
from ranking.types import FloatArray

if TYPE_CHECKING:
    from features.predictor import RatingPredictor

__all__ = [
    "STYLE_TRAITS",
    "TOPICS_SHOWN",
    "TOP_MODELS",
    "TRAIT_MIN_Z",
    "answer_taste",
    "explain",
    "query_parts",
    "taste_units",
]

#: Models of the top of a ranking whose parts an explanation gives.
TOP_MODELS = 3
#: Style traits an explanation names at most, and how far (in training users' standard
#: deviations) a trait must stand out.
STYLE_TRAITS = 3
TRAIT_MIN_Z = 1.0
#: Topics an explanation lists at most, largest share first.
TOPICS_SHOWN = 5


#: Each predictor's :func:`_nobody`, computed once (a predictor is never refitted in place).
_NOBODIES: weakref.WeakKeyDictionary[Any, tuple[list[FloatArray], FloatArray]] = (
    weakref.WeakKeyDictionary()
)


def _nobody(predictor: RatingPredictor) -> tuple[list[FloatArray], FloatArray]:
    """The contexts and the ratings of someone whose queries say nothing, per predictor.

    The same for every query, so a service explaining many answers computes them once.
    """
    found = _NOBODIES.get(predictor)
    if found is None:
        frame = pd.DataFrame({"user_id": ["-"], "prompt": [None]})
        nobody = predictor.profiler_.transform(frame)
        found = (predictor.contexts(nobody), predictor.predict(nobody).ratings[0])
        _NOBODIES[predictor] = found
    return found


def query_parts(
    predictor: RatingPredictor,
    profiles: UserProfiles,
    n_queries: npt.ArrayLike,
    contexts: list[FloatArray] | None = None,
    texts: Sequence[Sequence[str]] | None = None,
) -> list[QueryParts]:
    """Each profiled user's prediction split into its parts, with topics and traits.

    Parameters
    ----------
    predictor : RatingPredictor
        The fitted predictor whose prediction is explained.
    profiles : UserProfiles
        Its profiler's profiles of the users (``predictor.profiler_.transform``).
    n_queries : array_like of int
        ``(n_users,)`` prompts each profile was made from, to undo the smoothing of the
        topic shares.
    contexts : list of ndarray, optional
        ``predictor.contexts(profiles)``, when computed already.
    texts : sequence of sequence of str, optional
        Each profile's queries, to tell whether they fit their topics closely
        (:attr:`TopicShare.fits`); every topic is taken to fit without them.
    """
    counts = np.asarray(n_queries, dtype=np.float64).reshape(-1)
    if counts.size != len(profiles.user_ids):
        raise ValueError(
            f"Argument 'n_queries' must have {len(profiles.user_ids)} entries, not {counts.size}."
        )
    references, typical = _nobody(predictor)
    n_topics = int(predictor.profiler_.topic_share_.size)
    topic = np.zeros((len(profiles.user_ids), len(predictor.models_)))
    style = np.zeros_like(topic)
    for member, context, reference in zip(
        predictor.members_,
        predictor.contexts(profiles) if contexts is None else contexts,
        references,
        strict=True,
    ):
        coef = member.model.coef
        first_style = coef.shape[1] - int(member.components.n_components_)
        moved = context - reference  # the constant's column is 0
        topic += moved[:, 1:first_style] @ coef[:, 1:first_style].T
        style += moved[:, first_style:] @ coef[:, first_style:].T
    scale = ELO_PER_NAT * predictor.query_weight / len(predictor.members_)
    labels, names = _topic_labels(predictor, n_topics)
    fitting = fitting_topics(predictor.profiler_, texts, names, len(profiles.user_ids))
    return [
        QueryParts(
            predictor.models_,
            typical,
            scale * topic[row],
            scale * style[row],
            _topic_shares(predictor, profiles, row, counts[row], (labels, names), fitting[row]),
            _traits(predictor, profiles, row),
            int(counts[row]),
        )
        for row in range(len(profiles.user_ids))
    ]


def explain(
    models: Sequence[str],
    ratings: npt.ArrayLike,
    aggregate: npt.ArrayLike,
    prior: npt.ArrayLike,
    queries: QueryParts | None = None,
    *,
    from_prediction: bool = True,
    top: int = TOP_MODELS,
    note: str | None = None,
    scope: Scope = "person",
    taste: Taste | None = None,
) -> Explanation:
    """The explanation of one ranking.

    Parameters
    ----------
    models : sequence of str
        The ranking's models, the order of the arrays.
    ratings : array_like
        ``(n_models,)`` ratings shown.
    aggregate : array_like
        ``(n_models,)`` the aggregate board's ratings (NaN where it has none).
    prior : array_like
        ``(n_models,)`` where the ranking started before the user's votes: the
        prediction, or the aggregate; ``votes = ratings - prior``.
    queries : QueryParts, optional
        The user's queries' parts (:func:`query_parts`); None when none are known.
    from_prediction : bool
        Whether ``prior`` is the prediction of ``queries`` (its topic and style parts
        then explain it), or the aggregate (only ``votes`` moved the models).
    top : int
        Models explained, best first.
    note : str, optional
        A sentence for the reader (for example why topic and style are not known).
    scope : {"person", "prompt"}
        Whether the ranking is the person's on all their prompts, or for one prompt
        (``queries`` then from :func:`prompt_parts`); the sentences say which.
    taste : Taste, optional
        The person's taste in answers (:func:`answer_taste`), said after their style.
    """
    shown = np.asarray(ratings, dtype=np.float64)
    reference = np.asarray(aggregate, dtype=np.float64)
    start = np.asarray(prior, dtype=np.float64)
    parts = queries if from_prediction else None
    column = {m: j for j, m in enumerate(parts.models)} if parts is not None else {}
    rows = []
    for j in np.argsort(-shown, kind="stable")[:top]:
        model = str(models[j])
        rated = bool(np.isfinite(reference[j]))
        k = column.get(model)
        baseline = topic = style = None
        if parts is not None and k is not None:
            base = parts.typical[k] - (reference[j] if rated else 0.0)
            baseline, topic, style = _round(base), _round(parts.topic[k]), _round(parts.style[k])
        rows.append(
            ModelParts(
                model=model,
                rating=_round(shown[j]),
                aggregate=_round(reference[j]) if rated else None,
                baseline=baseline,
                topic=topic,
                style=style,
                votes=_round(shown[j] - start[j]),
            )
        )
    topics = queries.topics if queries is not None else ()
    traits = queries.traits if queries is not None else ()
    n_queries = queries.n_queries if queries is not None else 0
    return Explanation(
        topics=topics,
        style=traits,
        models=tuple(rows),
        n_queries=n_queries,
        note=note,
        scope=scope,
        sentences=explanation_sentences(
            topics, traits, tuple(rows), n_queries, note, scope, taste=taste
        ),
        taste=taste,
    )


def taste_units(features: Sequence[str]) -> FloatArray:
    """Each answer style feature's covariate for the move its taste is read per.

    The covariate (:func:`features.answer_style.style_differences`) of an answer of 400
    tokens against one of 200 for ``length`` (a doubling), of 3 headers (list items,
    bold spans) against none for the counts (:data:`features.style_words.ANSWER_TASTE_UNITS`);
    1 for a feature it does not know.
    """
    base = {"length": 200.0}
    units = np.ones(len(features))
    for j, feature in enumerate(features):
        if feature not in ANSWER_TASTE_UNITS or feature not in ANSWER_STYLE_FEATURES:
            continue
        a_value, b_value = ANSWER_TASTE_UNITS[feature]
        a = np.array([[base.get(f, 0.0) for f in ANSWER_STYLE_FEATURES]])
        b = a.copy()
        column = ANSWER_STYLE_FEATURES.index(feature)
        a[0, column], b[0, column] = a_value, b_value
        units[j] = style_differences(a, b)[0, column]
    return units


def answer_taste(style: UserStyle, row: int = 0) -> Taste:
    """One person's taste in answers, in Elo points and words.

    Parameters
    ----------
    style : UserStyle
        Users' style coefficients (:func:`ranking.personal_style.fit.fit_user_style`, or
        :func:`~ranking.personal_style.fit.style_under_prior` for one person).
    row : int
        The person's row.
    """
    unit = taste_units(style.features)
    points, lower, upper = (a[row] for a in style.points(unit))
    everyone = style.aggregate * unit * ELO_PER_NAT
    features = []
    for j, feature in enumerate(style.features):
        distinct = bool(style.distinct[row, j])
        sentence, unit_words = taste_sentence(
            feature, float(points[j]), float(lower[j]), float(upper[j]), float(everyone[j]),
            style.confidence,
        )  # fmt: skip
        features.append(
            AnswerTaste(
                feature,
                unit_words,
                _round(points[j]),
                _round(lower[j]),
                _round(upper[j]),
                _round(everyone[j]),
                distinct,
                sentence if distinct else "",
            )
        )
    return Taste(
        "person" if style.personal else "everyone",
        tuple(features),
        int(style.n_battles[row]),
        style.confidence,
    )


def _round(value: float) -> float:
    return round(float(value), 2)


def _topic_labels(predictor: RatingPredictor, n_topics: int) -> tuple[list[str], list[str]]:
    """The topics' words and names (:attr:`features.topics.Topic.label`, ``.name``)."""
    described = getattr(predictor.profiler_.topic_model_, "topics_", None) or []
    labels = [f"topic {k}" for k in range(n_topics)]
    names = ["other questions"] * n_topics
    for topic in described:
        if 0 <= topic.topic < n_topics:
            labels[topic.topic], names[topic.topic] = topic.label, topic.name
    return labels, names


def _topic_shares(
    predictor: RatingPredictor,
    profiles: UserProfiles,
    row: int,
    n: float,
    described: tuple[list[str], list[str]],
    fitting: set[int] | None,
) -> tuple[TopicShare, ...]:
    """The user's largest topics: the share of their ``n`` queries in each.

    A profile's shares are smoothed, ``(count + s * population) / (n + s)``
    (:mod:`features.profile`); this undoes it to give the share of their queries.
    ``described`` holds the topics' labels and names, ``fitting`` the topics most of the
    user's queries in which fit (None: every topic, as not measured).
    """
    labels, names = described
    if n <= 0:
        return ()
    population = predictor.profiler_.topic_share_
    s = float(predictor.profiler_.smoothing)
    columns = profiles.feature_names
    smoothed = profiles.values[row, [columns.index(f"topic:{k}") for k in range(population.size)]]
    shares = np.clip((smoothed * (n + s) - s * population) / n, 0.0, 1.0)
    order = [k for k in np.argsort(-shares, kind="stable") if shares[k] > 1e-6]
    return tuple(
        TopicShare(
            int(k),
            labels[k],
            round(float(shares[k]), 4),
            round(float(population[k]), 4),
            names[k],
            fitting is None or int(k) in fitting,
        )
        for k in order[:TOPICS_SHOWN]
    )


def _traits(predictor: RatingPredictor, profiles: UserProfiles, row: int) -> tuple[StyleTrait, ...]:
    """The style means furthest from the training users', as the predictor scales them.

    The raw means (``style_mean:``) when the predictor uses them, else the means
    relative to each query's topic (``style_rel:``).
    """
    prefixes = STYLE_SOURCES[predictor.style_source]
    names = [profiles.feature_names[i] for i in profiles.columns(*prefixes)]
    values = profiles.style(predictor.style_source)[row]
    z = predictor.style_basis.standard_style(values)
    prefix = prefixes[0]
    traits: dict[str, StyleTrait] = {}
    for j in np.argsort(-np.abs(z), kind="stable"):
        if abs(z[j]) < TRAIT_MIN_Z or len(traits) == STYLE_TRAITS:
            break
        if not names[j].startswith(prefix):
            continue
        feature = names[j].removeprefix(prefix)
        high, low = STYLE_LABELS.get(feature, (f"high {feature}", f"low {feature}"))
        label = high if z[j] > 0 else low
        relative = prefix == "style_rel:"
        if relative:
            label += " for the topic"
        if label not in traits:  # two features that read the same: the stronger
            sentence = trait_sentence(feature, bool(z[j] > 0), relative)
            traits[label] = StyleTrait(feature, label, round(float(z[j]), 2), sentence)
    return tuple(traits.values())
