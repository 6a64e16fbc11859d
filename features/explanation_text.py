"""An explanation in plain words: what the queries are about, how they are written, and
what moved each top model, in points a person can read.

:func:`explanation_sentences` turns the parts of :mod:`features.explanation` into a few
sentences, with no internal term and no unit but rating points::

    Your queries are about programming (60%) and maths (20%).
    You write long sentences and you paste code.
    pico-3b, rated 1084: everyone's votes put it at 1058; your topics moved it up 9
    points, your writing style moved it down 3 points and your votes moved it up 20 points.

Where the votes carry the answers, the person's taste in answers follows their style,
said only where it is told apart from everyone's::

    You prefer shorter answers than most: -12 points per doubling of length with you
    (95% interval -30 to -2), +4 with everyone.

and otherwise that the votes cannot tell it apart yet, or (where per-person taste does
not predict votes better than everyone's) that everyone's is used.

A topic is named only where the user's queries fit it (:attr:`TopicShare.fits`); a
query far from every topic is said to fit none closely, never given the nearest topic's
name. For one prompt (``scope="prompt"``) the first sentence says what the prompt was
read as, and the topic part is "what this prompt is about". How much the queries count,
where the predictor learnt that they count little or nothing (:mod:`features.evidence`),
is the explanation's note (:func:`evidence_note`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from features.explanation_parts import ModelParts, Scope, StyleTrait, Taste, TopicShare
from features.style_words import answer_taste_words

__all__ = [
    "LITTLE_WEIGHT",
    "MIN_POINTS",
    "evidence_note",
    "explanation_sentences",
    "model_sentence",
    "points",
    "taste_sentence",
    "taste_sentences",
]

#: Moves smaller than this many rating points are not said.
MIN_POINTS = 1.0
#: Topics named at most in the topic sentence.
TOPICS_NAMED = 3
#: Share of queries fitting no topic from which the topic sentence says so.
UNFITTING_SAID = 0.25


def points(value: float) -> str:
    """A move in words: "up 9 points", "down 1 point"."""
    n = round(abs(value))
    return f"{'up' if value > 0 else 'down'} {n} point{'' if n == 1 else 's'}"


def _join(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _topic_sentence(topics: Sequence[TopicShare], n_queries: int, scope: Scope) -> str | None:
    if scope == "prompt":
        fitting = [t for t in topics if t.fits]
        if fitting:
            return f"For this prompt: it reads as {fitting[0].name}."
        return "For this prompt: none of our topics fits it closely."
    if n_queries == 0 or not topics:
        return None
    shares: dict[str, float] = {}
    for topic in topics:
        if topic.fits:
            shares[topic.name] = shares.get(topic.name, 0.0) + topic.share
    if not shares:
        return "None of our topics fits your queries closely."
    named = sorted(shares.items(), key=lambda item: -item[1])[:TOPICS_NAMED]
    listed = _join([f"{name} ({share:.0%})" for name, share in named])
    sentence = f"Your queries are about {listed}"
    unfitting = sum(t.share for t in topics if not t.fits)
    if unfitting >= UNFITTING_SAID:
        sentence += f"; {unfitting:.0%} of them fit none of our topics closely"
    return sentence + "."


def _style_sentence(style: Sequence[StyleTrait]) -> str | None:
    clauses = list(dict.fromkeys(t.sentence for t in style if t.sentence))
    if not clauses:
        return None
    text = _join(clauses)
    return text[0].upper() + text[1:] + "."


def _signed(value: float) -> str:
    """Whole points with their sign ("+4", "-12", "0")."""
    n = round(value)
    return f"{n:+d}" if n else "0"


def taste_sentence(
    feature: str,
    points: float,
    lower: float,
    upper: float,
    everyone: float,
    confidence: float = 0.95,
) -> tuple[str, str]:
    """A person's taste for one answer style feature in words, and its unit.

    Parameters
    ----------
    feature : str
        The answer style feature (``"length"``).
    points, lower, upper : float
        The person's Elo points per unit, and its interval.
    everyone : float
        Everyone's points per unit.
    confidence : float
        The interval's coverage.

    Returns
    -------
    (str, str)
        "You prefer shorter answers than most: -12 points per doubling of length with you
        (95% interval -30 to -2), +4 with everyone." and "per doubling of length".
    """
    clause, unit = answer_taste_words(feature, points > everyone)
    sentence = (
        f"{clause[0].upper()}{clause[1:]}: {_signed(points)} points {unit} with you "
        f"({confidence:.0%} interval {_signed(lower)} to {_signed(upper)}), "
        f"{_signed(everyone)} with everyone."
    )
    return sentence, unit


def taste_sentences(taste: Taste) -> tuple[str, ...]:
    """What a person's votes say of their taste in answers: one sentence per feature told
    apart from everyone's, else one saying why none is.

    Parameters
    ----------
    taste : Taste
        The person's taste (:func:`features.explanation.answer_taste`).
    """
    names = _join([t.feature for t in taste.features])
    if taste.source == "everyone":
        return (
            f"Your taste in answers ({names}) is read as everyone's: on this service's "
            "votes, a person's own taste does not predict their votes better than "
            "everyone's yet.",
        )
    told = tuple(t.sentence for t in taste.features if t.distinct and t.sentence)
    if told:
        return told
    votes = f"{taste.n_votes} vote{'' if taste.n_votes == 1 else 's'}"
    return (
        f"Your {votes} cannot yet tell your taste in answers ({names}) apart from most voters'.",
    )


def model_sentence(model: ModelParts, scope: Scope = "person") -> str:
    """What moved one top model, in words and whole points.

    Parameters
    ----------
    model : ModelParts
        The model's parts (:func:`features.explanation.explain`).
    scope : {"person", "prompt"}
        For one prompt the topic part is "what this prompt is about".
    """
    topic = "what this prompt is about" if scope == "prompt" else "your topics"
    parts = (
        ("before looking at your queries, our prediction", model.baseline),
        (topic, model.topic),
        ("your writing style", model.style),
        ("your votes", model.votes),
    )
    moves = [
        f"{what} moved it {points(value)}"
        for what, value in parts
        if value is not None and math.isfinite(value) and round(abs(value)) >= MIN_POINTS
    ]
    head = f"{model.model}, rated {model.rating:.0f}: "
    if model.aggregate is None:
        start = "everyone's votes do not rate it yet"
    else:
        start = f"everyone's votes put it at {model.aggregate:.0f}"
    if not moves:
        return head + start + ", and nothing about you moved it."
    return head + start + "; " + _join(moves) + "."


def explanation_sentences(
    topics: Sequence[TopicShare],
    style: Sequence[StyleTrait],
    models: Sequence[ModelParts],
    n_queries: int,
    note: str | None = None,
    scope: Scope = "person",
    *,
    taste: Taste | None = None,
) -> tuple[str, ...]:
    """The explanation in plain sentences, in reading order.

    Parameters
    ----------
    topics, style, models, n_queries, note
        The parts of an :class:`features.explanation.Explanation`.
    scope : {"person", "prompt"}
        Whether the ranking is the person's or for one prompt.
    taste : Taste, optional
        The person's taste in answers, where the votes carry answers.

    Returns
    -------
    tuple of str
        What the queries (or the prompt) are about, how the person writes (where a trait
        stands out), their taste in answers (where known), one sentence per top model,
        and the note last.
    """
    sentences = [
        _topic_sentence(topics, n_queries, scope),
        _style_sentence(style),
        *(taste_sentences(taste) if taste is not None else ()),
        *(model_sentence(m, scope) for m in models),
        note,
    ]
    return tuple(s for s in sentences if s)


#: Below this weight, the explanation says the queries move the ranking only a little.
LITTLE_WEIGHT = 0.5


def evidence_note(weight: float, public: bool, voted: bool = False) -> str | None:
    """What the explanation says of how much the queries count, or None at full weight.

    Parameters
    ----------
    weight : float
        The predictor's ``query_weight`` (:mod:`features.evidence`).
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
