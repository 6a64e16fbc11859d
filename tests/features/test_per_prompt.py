"""Per-prompt, per-person rankings (features/per_prompt.py) on a small simulated arena."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from data.truth import Simulation
from features.per_prompt import person_deviation, predict_prompts, rank_prompt
from features.prediction import Prediction
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.topics import TopicModel
from ranking.agreement import spearman_per_row
from ranking.contextual import ContextualBT
from ranking.io.frames import pairwise_from_battles
from ranking.types import PairwiseData

CODE = "Write a Python function that merges two sorted lists, with unit tests and type hints."
POEM = "Write a short poem about autumn rain falling on an old stone bridge at dusk."


@pytest.fixture(scope="module")
def world() -> Simulation:
    return simulate(60, 30, 6, rng=3)


@pytest.fixture(scope="module")
def predictor(world: Simulation) -> RatingPredictor:
    topics = TopicModel("tfidf", n_topics=8, random_state=0)
    return RatingPredictor(UserProfiler(topics), random_state=0).fit(world.battles)


def _votes(predictor: RatingPredictor, winner: str, loser: str, n: int = 4) -> PairwiseData:
    frame = pd.DataFrame({"model_a": [winner] * n, "model_b": [loser] * n, "winner": "model_a"})
    return pairwise_from_battles(frame, models=predictor.models_)


def test_a_code_prompt_favours_the_code_strong_models(
    world: Simulation, predictor: RatingPredictor
) -> None:
    battles = world.battles
    code_prompt = battles.loc[battles["topic"] == "coding", "prompt"].iloc[0]
    poem_prompt = battles.loc[battles["topic"] == "creative_writing", "prompt"].iloc[0]
    code, poem = rank_prompt(predictor, code_prompt), rank_prompt(predictor, poem_prompt)
    assert code.topic != poem.topic
    gain = code.prediction.ratings[0] - poem.prediction.ratings[0]
    strength = world.model_topic_strength.loc[list(predictor.models_)]
    truth = (strength["coding"] - strength["creative_writing"]).to_numpy()
    assert spearman_per_row(gain[None, :], truth)[0] > 0.5
    strongest = int(np.argmax(truth))  # the most code-over-poetry model
    assert gain[strongest] > 0
    assert gain[strongest] == pytest.approx(gain.max())
    # the same person (same queries), two prompts: only the prompt's context differs
    queries = battles["prompt"].iloc[:5].tolist()
    a = rank_prompt(predictor, code_prompt, queries).prediction.ratings[0]
    b = rank_prompt(predictor, poem_prompt, queries).prediction.ratings[0]
    assert (a - b)[strongest] > 0


def test_without_topic_or_style_effects_it_is_the_persons_ranking(
    predictor: RatingPredictor,
) -> None:
    flat = copy.deepcopy(predictor)
    members = []
    for member in flat.members_:
        coef = np.zeros_like(member.model.coef)
        coef[:, 0] = member.model.coef[:, 0]  # base strengths only
        members.append(replace(member, model=ContextualBT(coef, member.model.alpha)))
    flat.members_ = members
    queries = ["How do I sort a dict by value?", "Tell me a joke about cats"]
    for prompt in (CODE, POEM):
        ranked = rank_prompt(flat, prompt, queries)
        np.testing.assert_allclose(ranked.prediction.ratings, ranked.person.ratings)
        np.testing.assert_allclose(ranked.prediction.lower, ranked.person.lower)
        votes = _votes(flat, flat.models_[-1], flat.models_[0])
        blended = rank_prompt(flat, prompt, queries, votes)
        assert blended.prediction.source == "blended"
        np.testing.assert_allclose(blended.prediction.ratings, blended.person.ratings)


def test_votes_shift_every_prompt_by_the_persons_offset(predictor: RatingPredictor) -> None:
    queries = ["How do I sort a dict by value?"]
    plain = rank_prompt(predictor, CODE, queries)
    winner, loser = predictor.models_[-1], predictor.models_[0]
    shifted = rank_prompt(predictor, CODE, queries, _votes(predictor, winner, loser))
    offset = shifted.person.ratings - plain.person.ratings
    np.testing.assert_allclose(shifted.prediction.ratings, plain.prediction.ratings + offset)
    w, lo = predictor.models_.index(winner), predictor.models_.index(loser)
    assert offset[0, w] > 0 > offset[0, lo]
    # its interval is the blended person's: narrower than the prediction's
    width = shifted.prediction.upper - shifted.prediction.lower
    assert (width <= plain.prediction.upper - plain.prediction.lower + 1e-9).all()


def test_it_is_deterministic(predictor: RatingPredictor) -> None:
    first = rank_prompt(predictor, CODE, ["Explain p-values simply"])
    again = rank_prompt(predictor, CODE, ["Explain p-values simply"])
    np.testing.assert_array_equal(first.prediction.ratings, again.prediction.ratings)
    assert first.prediction.ranking() == again.prediction.ranking()


def test_it_answers_the_profile_it_ranked_from(predictor: RatingPredictor) -> None:
    """The person's profile comes back with the ranking, so that its explanation splits
    the same profile rather than reading the queries again."""
    queries = ["Explain p-values simply", "Write a haiku about rain"]
    profiles = predictor.profiler_.transform_queries(queries)
    ranked = rank_prompt(predictor, CODE, queries)
    np.testing.assert_array_equal(ranked.people.values, profiles.values)
    assert ranked.people.feature_names == profiles.feature_names
    alone = rank_prompt(predictor, CODE).people  # without queries: the prompt's own
    np.testing.assert_array_equal(
        alone.values, predictor.profiler_.transform_queries([CODE]).values
    )


def test_batched_prompts_match_one_at_a_time(predictor: RatingPredictor) -> None:
    frame = pd.DataFrame({"user_id": ["a", "a", "b"], "prompt": ["sort a list", "poem", "tax"]})
    people = predictor.profiler_.transform(frame)
    person = predictor.predict(people)
    batch, topics = predict_prompts(predictor, [CODE, POEM, CODE], people, [0, 1, 1], person)
    for row, (prompt, who) in enumerate([(CODE, 0), (POEM, 1), (CODE, 1)]):
        one, _ = predict_prompts(predictor, [prompt], people, [who], person)
        np.testing.assert_allclose(batch.ratings[row], one.ratings[0])
    assert topics[0] == topics[2]
    profiles, _ = predictor.profiler_.prompt_profiles([CODE], people, [1])
    names = list(profiles.feature_names)
    style = [i for i, n in enumerate(names) if n.startswith("style_mean:")]
    np.testing.assert_array_equal(profiles.values[0, style], people.values[1, style])
    shares = [i for i, n in enumerate(names) if n.startswith("topic:")]
    assert sorted(profiles.values[0, shares]) == [0.0] * (len(shares) - 1) + [1.0]


def test_bad_arguments_name_themselves(predictor: RatingPredictor) -> None:
    with pytest.raises(ValueError, match="'prompt'"):
        rank_prompt(predictor, "   ")
    people = predictor.profiler_.transform(pd.DataFrame({"user_id": ["a"], "prompt": ["hi"]}))
    with pytest.raises(ValueError, match="'rows'"):
        predictor.profiler_.prompt_profiles([CODE, POEM], people, [0])
    with pytest.raises(ValueError, match="'rows'"):
        predictor.profiler_.prompt_profiles([CODE], people, [3])
    person = predictor.predict(people)
    fewer = Prediction(
        "blended", person.user_ids, person.models[:-1], person.ratings[:, :-1],
        person.lower[:, :-1], person.upper[:, :-1],
    )  # fmt: skip
    with pytest.raises(ValueError, match="same people"):
        person_deviation(person, fewer)
