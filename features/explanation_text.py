"""An explanation in plain words: what the queries are about, how they are written, and
what moved each top model, in points a person can read.

:func:`explanation_sentences` turns the parts of :mod:`features.explanation` into a few
sentences, with no internal term and no unit but rating points::

    Your queries are about programming (60%) and maths (20%).
    You write long sentences and you paste code.
    pico-3b, rated 1084: everyone's votes put it at 1058; your topics moved it up 9
    points, your writing style moved it down 3 points and your votes moved it up 20 points.

A topic is named only where the user's queries fit it (:attr:`TopicShare.fits`); a
query far from every topic is said to fit none closely, never given the nearest topic's
name. For one prompt (``scope="prompt"``) the first sentence says what the prompt was
read as, and the topic part is "what this prompt is about".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from features.explanation import ModelParts, Scope, StyleTrait, TopicShare

__all__ = ["MIN_POINTS", "explanation_sentences", "model_sentence", "points"]

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
) -> tuple[str, ...]:
    """The explanation in plain sentences, in reading order.

    Parameters
    ----------
    topics, style, models, n_queries, note
        The parts of an :class:`features.explanation.Explanation`.
    scope : {"person", "prompt"}
        Whether the ranking is the person's or for one prompt.

    Returns
    -------
    tuple of str
        What the queries (or the prompt) are about, how the person writes (where a trait
        stands out), one sentence per top model, and the note last.
    """
    sentences = [
        _topic_sentence(topics, n_queries, scope),
        _style_sentence(style),
        *(model_sentence(m, scope) for m in models),
        note,
    ]
    return tuple(s for s in sentences if s)
