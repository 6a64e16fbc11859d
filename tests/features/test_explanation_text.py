"""``features.explanation_text``: the why in plain words, in rating points."""

from __future__ import annotations

import math
from dataclasses import replace

from features.explanation_parts import AnswerTaste, ModelParts, StyleTrait, Taste, TopicShare
from features.explanation_text import (
    explanation_sentences,
    model_sentence,
    points,
    taste_sentence,
    taste_sentences,
)

TOPICS = (
    TopicShare(0, "code, python, error, fix", 0.5, 0.2, "programming", True),
    TopicShare(3, "compute, solve, understand", 0.25, 0.1, "maths", True),
    TopicShare(6, "dinner, recipe, cook, meal", 0.25, 0.1, "cooking", False),
)
TRAITS = (
    StyleTrait("mean_sentence_words", "long sentences", 5.0, "you write long sentences"),
    StyleTrait("code_block", "pastes code blocks", 2.1, "you paste code"),
)
PICO = ModelParts("pico-3b", 1084.4, 1058.0, -26.2, 9.4, -3.1, 46.3)


def test_points_are_whole_and_say_the_way() -> None:
    assert points(9.4) == "up 9 points"
    assert points(-1.2) == "down 1 point"
    assert points(-26.6) == "down 27 points"


def test_a_model_sentence_names_each_part_in_points() -> None:
    said = model_sentence(PICO)
    assert said == (
        "pico-3b, rated 1084: everyone's votes put it at 1058; before looking at your "
        "queries, our prediction moved it down 26 points, your topics moved it up 9 points, "
        "your writing style moved it down 3 points and your votes moved it up 46 points."
    )


def test_moves_under_a_point_and_missing_parts_are_not_said() -> None:
    votes_only = ModelParts("kestrel", 1000.3, 1000.0, None, None, None, 0.3)
    assert model_sentence(votes_only) == (
        "kestrel, rated 1000: everyone's votes put it at 1000, and nothing about you moved it."
    )
    unrated = ModelParts("new-model", 990.0, None, math.nan, None, None, 12.0)
    assert model_sentence(unrated) == (
        "new-model, rated 990: everyone's votes do not rate it yet; your votes moved it up "
        "12 points."
    )


def test_the_sentences_in_reading_order() -> None:
    sentences = explanation_sentences(TOPICS, TRAITS, (PICO,), 4, note="A note.")
    assert sentences == (
        "Your queries are about programming (50%) and maths (25%); 25% of them fit none "
        "of our topics closely.",
        "You write long sentences and you paste code.",
        model_sentence(PICO),
        "A note.",
    )
    assert "cooking" not in " ".join(sentences)  # the unfitting topic is not named


def test_topics_of_one_name_are_counted_together() -> None:
    chat = (
        TopicShare(5, "fact, fun", 0.4, 0.1, "casual chat", True),
        TopicShare(8, "today, talk", 0.3, 0.1, "casual chat", True),
        TopicShare(1, "story, poem", 0.3, 0.1, "creative writing", True),
    )
    (first,) = explanation_sentences(chat, (), (), 10)
    assert first == "Your queries are about casual chat (70%) and creative writing (30%)."


def test_no_fitting_topic_is_said_plainly() -> None:
    far = tuple(TopicShare(t.topic, t.label, t.share, t.population, t.name, False) for t in TOPICS)
    assert explanation_sentences(far, (), (), 4)[0] == (
        "None of our topics fits your queries closely."
    )
    assert explanation_sentences((), (), (), 0) == ()


def test_for_one_prompt_the_prompts_topic_is_said() -> None:
    (code,) = TOPICS[:1]
    sentences = explanation_sentences((code,), (), (PICO,), 4, scope="prompt")
    assert sentences[0] == "For this prompt: it reads as programming."
    assert "what this prompt is about moved it up 9 points" in sentences[1]
    far = TopicShare(6, "dinner, recipe", 1.0, 0.1, "cooking", False)
    assert explanation_sentences((far,), (), (), 4, scope="prompt") == (
        "For this prompt: none of our topics fits it closely.",
    )


LENGTH = AnswerTaste(
    "length", "per doubling of length", -12.4, -30.2, -2.0, 4.3, True,
    "You prefer shorter answers than most: -12 points per doubling of length with you "
    "(95% interval -30 to -2), +4 with everyone.",
)  # fmt: skip
HEADERS = AnswerTaste(
    "headers", "for an answer with 3 headers against one with none", 5.0, -20.0, 30.0, 3.0,
    False,
)  # fmt: skip


def test_a_taste_sentence_says_the_way_the_points_and_everyones() -> None:
    sentence, unit = taste_sentence("length", -12.4, -30.2, -2.0, 4.3)
    assert sentence == LENGTH.sentence and unit == "per doubling of length"
    longer, _ = taste_sentence("bold", 40.0, 10.0, 70.0, -0.4, confidence=0.9)
    assert longer == (
        "You like bold text in answers more than most: +40 points for an answer with 3 bold "
        "spans against one with none with you (90% interval +10 to +70), 0 with everyone."
    )


def test_only_a_taste_told_apart_is_said() -> None:
    told = Taste("person", (LENGTH, HEADERS), 120)
    assert taste_sentences(told) == (LENGTH.sentence,)
    untold = Taste("person", (replace(LENGTH, distinct=False), HEADERS), 1)
    assert taste_sentences(untold) == (
        "Your 1 vote cannot yet tell your taste in answers (length and headers) apart from "
        "most voters'.",
    )
    everyone = Taste("everyone", (LENGTH, HEADERS), 120)
    (said,) = taste_sentences(everyone)
    assert said.startswith("Your taste in answers (length and headers) is read as everyone's")


def test_the_taste_comes_after_the_style_and_before_the_models() -> None:
    taste = Taste("person", (LENGTH,), 120)
    sentences = explanation_sentences(TOPICS, TRAITS, (PICO,), 4, note="A note.", taste=taste)
    assert sentences[1:4] == (
        "You write long sentences and you paste code.",
        LENGTH.sentence,
        model_sentence(PICO),
    )
