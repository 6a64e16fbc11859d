"""A person's recommended ranking (features/recommend.py): one call, one typed answer."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from features.per_prompt import rank_prompt
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.recommend import PromptTopic, Recommendation, recommend
from features.topics import TopicModel
from ranking.io.frames import pairwise_from_battles
from ranking.types import PairwiseData

QUERIES = ["write a python function to sort a list", "fix this bug in my code", "hello"]
POEM = "write a poem about the sea"


@pytest.fixture(scope="module")
def predictor() -> RatingPredictor:
    battles = simulate(60, 30, 5, rng=3).battles
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
    return RatingPredictor(profiler, style_components=2, folds=2, alpha=1.0).fit(battles)


def _weighted(predictor: RatingPredictor, person: float, prompt: float) -> RatingPredictor:
    changed = dataclasses.replace(predictor.evidence_, person=person, prompt=prompt)
    copy = RatingPredictor.__new__(RatingPredictor)
    copy.__dict__.update(predictor.__dict__, evidence_=changed)
    return copy


def _board(predictor: RatingPredictor, odds: bool = True) -> list[dict[str, object]]:
    """A public board that ranks the predictor's models, the last one best."""
    n = len(predictor.models_)
    rows: list[dict[str, object]] = []
    for j, model in enumerate(predictor.models_):
        row: dict[str, object] = {
            "model": model,
            "rating": 1000.0 + 10 * j,
            "lower": 990.0 + 10 * j,
            "upper": 1010.0 + 10 * j,
        }
        if odds:
            row.update(p_best=0.125, rank_lower=1, rank_upper=n)
        rows.append(row)
    return rows[::-1]


def _votes(predictor: RatingPredictor, n: int = 4) -> PairwiseData:
    """``n`` votes for the predictor's first model over its second."""
    a, b = predictor.models_[:2]
    frame = pd.DataFrame({"model_a": [a] * n, "model_b": [b] * n, "winner": "model_a"})
    return pairwise_from_battles(frame, models=predictor.models_)


def test_queries_alone_give_the_prediction_and_its_rows(predictor: RatingPredictor) -> None:
    answer = recommend(predictor, QUERIES)
    assert isinstance(answer, Recommendation)
    expected = predictor.predict_queries(QUERIES)
    assert answer.prediction.source == "predicted"
    np.testing.assert_allclose(answer.prediction.ratings, expected.ratings)
    assert answer.models == expected.ranking(0, predictor.confidence)
    assert (answer.n_queries, answer.n_votes) == (3, 0)
    assert answer.prior_sd == predictor.prior_sd
    assert answer.query_weight == predictor.query_weight
    assert answer.prompt_weight == predictor.prompt_weight
    # nothing to compare with: no agreement, no explanation, no prompt
    assert answer.spearman is None and answer.explanation is None
    assert answer.prompt_topic is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.n_votes = 1  # type: ignore[misc]


def test_votes_blend_the_prediction(predictor: RatingPredictor) -> None:
    votes = _votes(predictor)
    answer = recommend(predictor, QUERIES, votes)
    prediction = predictor.predict_queries(QUERIES)
    blended = predictor.blend(prediction, votes, np.zeros(len(votes.outcomes), dtype=np.intp))
    assert answer.prediction.source == "blended"
    np.testing.assert_allclose(answer.prediction.ratings, blended.ratings)
    np.testing.assert_allclose(answer.prediction.lower, blended.lower)
    assert answer.n_votes == len(votes.outcomes)
    first, second = (answer.prediction.models.index(m) for m in predictor.models_[:2])
    moved = answer.prediction.ratings[0] - prediction.ratings[0]
    assert moved[first] > 0.0 > moved[second]  # the votes' winner up, their loser down


def test_no_votes_are_the_same_as_none(predictor: RatingPredictor) -> None:
    votes = _votes(predictor)
    empty = PairwiseData(votes.models, votes.matchups[:0], votes.outcomes[:0], votes.weights[:0])
    none, given = recommend(predictor, QUERIES), recommend(predictor, QUERIES, empty)
    assert given.prediction.source == "predicted" and given.n_votes == 0
    np.testing.assert_array_equal(given.prediction.ratings, none.prediction.ratings)


def test_weight_zero_without_votes_falls_back_to_the_public_board(
    predictor: RatingPredictor,
) -> None:
    public = _weighted(predictor, 0.0, 0.0)
    board = _board(predictor)
    answer = recommend(public, QUERIES, board=board)
    assert answer.prediction.source == "aggregate"
    rows = {row["model"]: row for row in answer.models}
    for row in board:  # the board's rows, intervals and odds, as it gives them
        shown = rows[row["model"]]
        for key in ("rating", "lower", "upper", "p_best", "rank_lower", "rank_upper"):
            assert shown[key] == row[key]
    assert [row["model"] for row in answer.models] == [row["model"] for row in board]
    # compared with itself: full agreement, nothing moved, and the note says why
    assert answer.spearman == 1.0
    assert answer.explanation is not None
    assert "public ranking" in (answer.explanation.note or "")
    assert all(m.votes == 0.0 for m in answer.explanation.models)
    # without its odds the rows' own are read off the intervals
    plain = recommend(public, QUERIES, board=_board(predictor, odds=False))
    assert plain.prediction.source == "aggregate"
    assert all(0.0 <= row["p_best"] <= 1.0 for row in plain.models)


def test_the_fallback_needs_a_board_of_two_models_and_no_votes(
    predictor: RatingPredictor,
) -> None:
    public = _weighted(predictor, 0.0, 0.0)
    assert recommend(public, QUERIES).prediction.source == "predicted"
    one = recommend(public, QUERIES, board=_board(predictor)[:1])
    assert one.prediction.source == "predicted"
    voted = recommend(public, QUERIES, _votes(predictor), board=_board(predictor))
    assert voted.prediction.source == "blended" and voted.n_votes == 4
    assert voted.explanation is not None
    assert "public ranking" in (voted.explanation.note or "")  # they start from it
    assert voted.explanation.note is not None and "your votes" in voted.explanation.note


def test_an_aggregate_is_compared_and_explained(predictor: RatingPredictor) -> None:
    aggregate = {m: 1000.0 + j for j, m in enumerate(predictor.models_)}
    answer = recommend(predictor, QUERIES, aggregate=aggregate)
    assert answer.prediction.source == "predicted"  # an aggregate alone is no fallback
    assert answer.spearman is not None and -1.0 <= answer.spearman <= 1.0
    ranks = np.argsort(np.argsort(answer.prediction.ratings[0]))
    reference = np.arange(len(predictor.models_))
    rho = 1.0 - 6.0 * ((ranks - reference) ** 2).sum() / (len(ranks) * (len(ranks) ** 2 - 1))
    assert answer.spearman == pytest.approx(rho, abs=1e-4)
    explanation = answer.explanation
    assert explanation is not None and explanation.scope == "person"
    assert explanation.n_queries == 3
    best = explanation.models[0]
    assert best.model == answer.models[0]["model"]
    assert best.aggregate == aggregate[best.model]


def test_a_prompt_gives_its_topic_and_its_own_ranking(predictor: RatingPredictor) -> None:
    answer = recommend(predictor, QUERIES, prompt=POEM, board=_board(predictor))
    ranked = rank_prompt(predictor, POEM, QUERIES)
    np.testing.assert_allclose(answer.prediction.ratings, ranked.prediction.ratings)
    assert isinstance(answer.prompt_topic, PromptTopic)
    assert answer.prompt_topic.topic == ranked.topic
    assert answer.prompt_topic.label
    assert answer.explanation is not None and answer.explanation.scope == "prompt"
    voted = recommend(predictor, QUERIES, _votes(predictor), prompt=POEM)
    assert voted.prediction.source == "blended" and voted.n_votes == 4
    with pytest.raises(ValueError, match="prompt"):
        recommend(predictor, QUERIES, prompt="   ")


def test_a_prompt_at_weight_zero_falls_back_too(predictor: RatingPredictor) -> None:
    board = _board(predictor)
    answer = recommend(_weighted(predictor, 0.0, 0.0), QUERIES, prompt=POEM, board=board)
    assert answer.prediction.source == "aggregate"
    assert answer.prompt_topic is not None
    # a prompt that does count keeps its own ranking, even where the person's does not
    counted = recommend(_weighted(predictor, 0.0, 1.0), QUERIES, prompt=POEM, board=board)
    assert counted.prediction.source == "predicted"
