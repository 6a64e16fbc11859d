"""How much queries are worth: the weights, learnt on later votes, and what they do."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from features.evidence import EvidenceWeights, HeldOutVotes, learn_weights
from features.explanation_text import evidence_note
from features.per_prompt import rank_prompt
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.topics import TopicModel
from ranking.pairwise import to_elo_scale
from service.live.recommendation import recommendation

LLMFAO = Path(__file__).resolve().parents[3] / "shared" / "data" / "llmfao"


def _held_out(n: int, person_truth: float, prompt_truth: float, seed: int = 0) -> HeldOutVotes:
    """Votes drawn from ``aggregate + person_truth * person + prompt_truth * prompt``."""
    rng = np.random.default_rng(seed)
    aggregate, person, prompt = rng.normal(0.0, 1.0, (3, n))
    margin = aggregate + person_truth * person + prompt_truth * prompt
    outcomes = (rng.random(n) < 1.0 / (1.0 + np.exp(-margin))).astype(np.float64)
    users = np.arange(n) // 10
    return HeldOutVotes(aggregate, person, prompt, outcomes, users)


def test_noise_gets_weight_zero_and_signal_about_its_strength() -> None:
    noise = learn_weights(_held_out(20_000, 0.0, 0.0))
    assert noise.person < 0.05 and noise.prompt < 0.05
    assert noise.log_loss["person"] <= noise.log_loss["aggregate"]
    assert noise.log_loss["person_unweighted"] > noise.log_loss["aggregate"]
    signal = learn_weights(_held_out(20_000, 0.6, 1.0))
    assert signal.person == pytest.approx(0.6, abs=0.1)
    assert signal.prompt == pytest.approx(1.0, abs=0.05)
    assert signal.gain_person > 3 * signal.se_person
    assert signal.gain_prompt > signal.gain_person


def test_a_move_that_only_hurts_gets_exactly_zero() -> None:
    held = _held_out(5_000, 0.0, 0.0)
    hurting = dataclasses.replace(held, person=held.person - 3.0 * (held.outcomes - 0.5))
    weights = learn_weights(hurting)
    assert weights.person == 0.0
    assert (
        weights.gain_person == 0.0 and weights.log_loss["person"] == weights.log_loss["aggregate"]
    )


def test_no_later_votes_mean_no_weight() -> None:
    empty = np.zeros(0)
    weights = learn_weights(HeldOutVotes(empty, empty, empty, empty, np.zeros(0, dtype=np.intp)))
    assert (weights.person, weights.prompt, weights.n_votes) == (0.0, 0.0, 0)
    assert weights.to_dict() == EvidenceWeights.unknown().to_dict()
    assert weights.to_dict()["gain_person"] is None


def test_a_tie_scores_half_each_way() -> None:
    held = HeldOutVotes(
        np.array([0.0, 2.0]), np.zeros(2), np.zeros(2), np.array([0.5, 0.5]), np.arange(2)
    )
    losses = held.losses(0.0, 0.0)
    assert losses[0] == pytest.approx(np.log(2.0))
    assert losses[1] == pytest.approx(0.5 * np.log1p(np.exp(-2.0)) + 0.5 * np.log1p(np.exp(2.0)))


@pytest.fixture(scope="module")
def predictor() -> RatingPredictor:
    battles = simulate(60, 30, 5, rng=3).battles
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
    return RatingPredictor(profiler, style_components=2, folds=2, alpha=1.0).fit(battles)


def test_the_fit_learns_weights_from_later_votes(predictor: RatingPredictor) -> None:
    evidence = predictor.evidence_
    assert 0.0 <= evidence.person <= 1.0 and 0.0 <= evidence.prompt <= 1.0
    assert evidence.n_users == 60  # every training user has at least 3 votes
    assert 0 < evidence.n_votes < 60 * 30
    assert predictor.aggregate_.shape == (len(predictor.models_),)
    assert abs(predictor.aggregate_.sum()) < 1e-8  # centred, as every board


def _weighted(predictor: RatingPredictor, person: float, prompt: float) -> RatingPredictor:
    changed = dataclasses.replace(predictor.evidence_, person=person, prompt=prompt)
    copy = RatingPredictor.__new__(RatingPredictor)
    copy.__dict__.update(predictor.__dict__, evidence_=changed)
    return copy


QUERIES = ["write a python function to sort a list", "fix this bug in my code", "hello"]


def test_weight_zero_answers_the_aggregate_and_one_the_model(predictor: RatingPredictor) -> None:
    profiles = predictor.profiler_.transform_queries(QUERIES)
    public = _weighted(predictor, 0.0, 0.0).predict(profiles)
    np.testing.assert_allclose(public.ratings[0], to_elo_scale(predictor.aggregate_))
    full = _weighted(predictor, 1.0, 1.0).predict(profiles)
    np.testing.assert_allclose(full.ratings[0], to_elo_scale(predictor.strengths(profiles)[0]))
    half = _weighted(predictor, 0.5, 0.0).predict(profiles)
    np.testing.assert_allclose(half.ratings, (public.ratings + full.ratings) / 2)


def test_prompt_weight_zero_gives_the_person_ranking(predictor: RatingPredictor) -> None:
    weighted = _weighted(predictor, 0.7, 0.0)
    ranked = rank_prompt(weighted, "write a poem about the sea", QUERIES)
    np.testing.assert_allclose(ranked.prediction.ratings, ranked.person.ratings)
    moved = rank_prompt(_weighted(predictor, 0.7, 1.0), "write a poem about the sea", QUERIES)
    assert not np.allclose(moved.prediction.ratings, ranked.person.ratings)


def test_recommend_shows_the_public_board_when_queries_tell_nothing(
    predictor: RatingPredictor,
) -> None:
    public = _weighted(predictor, 0.0, 0.0)
    board = [
        {"model": m, "rating": 1000.0 + 10 * j, "lower": 990.0 + 10 * j, "upper": 1010.0 + 10 * j}
        for j, m in enumerate(predictor.models_)
    ]
    document = recommendation(public, QUERIES, board=board)
    assert document["source"] == "aggregate"
    assert document["weights"] == {"queries": 0.0, "prompt": 0.0}
    rows = {row["model"]: row for row in document["models"]}
    for row in board:
        shown = rows[row["model"]]
        assert (shown["rating"], shown["lower"], shown["upper"]) == (
            row["rating"],
            row["lower"],
            row["upper"],
        )
    assert document["spearman"] == 1.0
    assert "public ranking" in document["explanation"]["note"]
    assert all(m["votes"] == 0.0 for m in document["explanation"]["models"])
    # the same person with a model that does count: their own prediction, said plainly
    counted = recommendation(_weighted(predictor, 1.0, 1.0), QUERIES, board=board)
    assert counted["source"] == "predicted" and counted["explanation"]["note"] is None
    little = recommendation(_weighted(predictor, 0.2, 1.0), QUERIES, board=board)
    assert "20% of the way" in little["explanation"]["note"]


def test_votes_make_the_public_answer_personal(predictor: RatingPredictor) -> None:
    a, b = predictor.models_[:2]
    votes = pd.DataFrame(
        {"battle_id": ["1", "2"], "model_a": [a, a], "model_b": [b, b], "winner": ["model_b"] * 2}
    )
    board = [
        {"model": m, "rating": 1000.0, "lower": 990.0, "upper": 1010.0} for m in predictor.models_
    ]
    document = recommendation(_weighted(predictor, 0.0, 0.0), QUERIES, votes, board=board)
    assert document["source"] == "blended" and document["n_votes"] == 2


@pytest.mark.skipif(not LLMFAO.exists(), reason="../shared/data/llmfao is absent")
def test_on_real_voters_who_all_judged_the_same_prompts_queries_count_for_nothing() -> None:
    from ranking.io.column_map import PRESETS
    from ranking.io.ingest import read_battles
    from ranking.io.prompt_texts import read_prompt_texts

    prompts = read_prompt_texts(LLMFAO / "prompts.jsonl")
    battles = read_battles(
        LLMFAO / "crowd-comparisons.csv", columns=PRESETS["llmfao"], prompts=prompts
    ).battles
    profiler = UserProfiler(TopicModel("tfidf"))
    fitted = RatingPredictor(profiler, random_state=0).fit(battles)
    evidence = fitted.evidence_
    # every voter judged the same 13 prompts: what their first votes' prompts say of them
    # predicts their later votes worse than the public board, so it is not used
    assert evidence.person == 0.0
    assert evidence.log_loss["person_unweighted"] > evidence.log_loss["aggregate"]
    profiles = fitted.profiler_.transform_queries(battles["prompt"].head(10).tolist())
    np.testing.assert_allclose(fitted.predict(profiles).ratings[0], to_elo_scale(fitted.aggregate_))
    # no voter differs from another in style, and no rounding error becomes a style of a
    # billion standard deviations: the unweighted prediction is a ranking, not overflow
    unweighted = _weighted(fitted, 1.0, 1.0).predict(profiles).ratings
    assert np.abs(unweighted - 1000.0).max() < 2000.0
    # the prompt itself does say something: which models answer it well
    assert evidence.prompt > 0.0 and evidence.gain_prompt > 0.0


def test_the_note_says_how_far_queries_count() -> None:
    assert "public ranking" in (evidence_note(0.0, True) or "")
    assert evidence_note(0.8, False) is None
    alone = evidence_note(0.25, False) or ""
    assert "moves 25% of the way" in alone and "your votes" not in alone
    voted = evidence_note(0.25, False, voted=True) or ""
    assert "starts 25% of the way" in voted and voted.endswith("your votes move it from there.")
