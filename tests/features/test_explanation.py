"""Why this ranking: the parts of a prediction add up, and say what the queries are."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from features.explanation import TRAIT_MIN_Z, answer_taste, explain, query_parts, taste_units
from features.explanation_parts import Explanation, QueryParts
from features.prediction import Prediction
from features.predictor import RatingPredictor
from features.profile import UserProfiler
from features.style import STYLE_FEATURES
from features.style_words import STYLE_LABELS, STYLE_SENTENCES
from features.topics import TopicModel
from features.user_profiles import UserProfiles
from ranking.io.frames import pairwise_from_battles
from ranking.pairwise import ELO_PER_NAT
from ranking.personal_style.results import UserStyle


@pytest.fixture(scope="module")
def predictor(labelled_battles: pd.DataFrame) -> RatingPredictor:
    """A predictor with real MiniLM topics (eight, so coding has its own)."""
    profiler = UserProfiler(TopicModel("minilm-int8", n_topics=8))
    return RatingPredictor(profiler, style_components=2, folds=2, alpha=1.0).fit(labelled_battles)


@pytest.fixture(scope="module")
def code_queries() -> list[str]:
    """Coding prompts of another simulated arena than the training one."""
    battles = simulate(20, 10, 6, rng=11).battles
    return battles[battles["topic"] == "coding"]["prompt"].drop_duplicates().head(6).tolist()


def profile(predictor: RatingPredictor, queries: list[str]) -> UserProfiles:
    return predictor.profiler_.transform(pd.DataFrame({"user_id": "you", "prompt": queries}))


def parts_of(predictor: RatingPredictor, queries: list[str]) -> tuple[QueryParts, Prediction]:
    profiles = profile(predictor, queries)
    return query_parts(predictor, profiles, [len(queries)])[0], predictor.predict(profiles)


def votes_for(model_a: str, losers: tuple[str, ...], n: int = 8) -> pd.DataFrame:
    rows = [
        {"user_id": "you", "model_a": model_a, "model_b": loser, "winner": "model_a"}
        for loser in losers
        for _ in range(n)
    ]
    return pd.DataFrame(rows)


def check_adds_up(explanation: Explanation) -> None:
    for m in explanation.models:
        parts = (m.aggregate, m.baseline, m.topic, m.style, m.votes)
        assert sum(p for p in parts if p is not None) == pytest.approx(m.rating, abs=0.05)


def test_typical_topic_and_style_add_up_to_the_prediction(
    predictor: RatingPredictor, labelled_battles: pd.DataFrame
) -> None:
    users = sorted(labelled_battles["user_id"].unique())[:3]
    some = labelled_battles[labelled_battles["user_id"].isin(users)]
    profiles = predictor.profiler_.transform(some)
    counts = some.groupby("user_id").size().reindex(profiles.user_ids)
    parts = query_parts(predictor, profiles, counts)
    prediction = predictor.predict(profiles)
    assert len(parts) == len(profiles.user_ids) == 3
    for row, part in enumerate(parts):
        assert part.models == predictor.models_
        np.testing.assert_allclose(part.ratings, prediction.ratings[row], atol=1e-8)
        assert np.abs(part.topic).max() > 0 and np.abs(part.style).max() > 0
    # the typical user is everyone's: the same for each user
    np.testing.assert_allclose(parts[0].typical, parts[1].typical)


def test_parts_plus_the_aggregate_add_up_to_the_shown_rating(
    predictor: RatingPredictor, code_queries: list[str]
) -> None:
    parts, prediction = parts_of(predictor, code_queries)
    aggregate = np.linspace(950.0, 1050.0, len(predictor.models_))
    explanation = explain(
        predictor.models_, prediction.ratings[0], aggregate, prediction.ratings[0], parts
    )
    assert [m.model for m in explanation.models] == [
        predictor.models_[j] for j in np.argsort(-prediction.ratings[0])[:3]
    ]
    check_adds_up(explanation)
    for m in explanation.models:
        j = predictor.models_.index(m.model)
        assert m.aggregate == pytest.approx(aggregate[j], abs=0.01)
        assert m.baseline == pytest.approx(parts.typical[j] - aggregate[j], abs=0.01)
        assert m.votes == 0.0


def test_votes_part_is_zero_without_votes_and_moves_the_voted_model(
    predictor: RatingPredictor, code_queries: list[str]
) -> None:
    parts, prediction = parts_of(predictor, code_queries)
    aggregate = np.full(len(predictor.models_), 1000.0)
    worst = predictor.models_[int(np.argmin(prediction.ratings[0]))]
    others = tuple(m for m in predictor.models_ if m != worst)
    votes = pairwise_from_battles(votes_for(worst, others), models=predictor.models_)
    blended = predictor.blend(prediction, votes, np.zeros(len(votes.outcomes), dtype=np.intp))
    shown = blended.ratings[0]
    explanation = explain(predictor.models_, shown, aggregate, prediction.ratings[0], parts)
    check_adds_up(explanation)
    rows = {m.model: m for m in explanation.models}
    assert worst in rows  # every vote won: the worst of the prediction is now near the top
    assert rows[worst].votes > 10.0
    # the votes' part is the blend less the prediction, for every model shown
    for m in explanation.models:
        j = predictor.models_.index(m.model)
        assert m.votes == pytest.approx(shown[j] - prediction.ratings[0, j], abs=0.01)


def test_a_user_whose_queries_are_all_code_has_the_code_topic_first(
    predictor: RatingPredictor, labelled_battles: pd.DataFrame, code_queries: list[str]
) -> None:
    profiler = predictor.profiler_
    coding = (labelled_battles["topic"][labelled_battles["prompt"].notna()] == "coding").to_numpy()
    code_topic = int(np.argmax(np.bincount(profiler.labels_[coding], minlength=8)))
    parts, _ = parts_of(predictor, code_queries)
    first = parts.topics[0]
    assert first.topic == code_topic
    assert first.share > 0.5 > first.population
    assert first.label == profiler.topic_model_.topics_[code_topic].label
    assert sum(t.share for t in parts.topics) == pytest.approx(1.0, abs=1e-3)
    assert parts.n_queries == len(code_queries)


def test_labels_are_readable_words(predictor: RatingPredictor, code_queries: list[str]) -> None:
    assert set(STYLE_LABELS) == set(STYLE_FEATURES)  # every feature has words
    parts, _ = parts_of(predictor, code_queries)
    for topic in parts.topics:
        assert isinstance(topic.label, str) and any(c.isalpha() for c in topic.label)
    assert parts.traits  # coding prompts stand out from the average user's
    for trait in parts.traits:
        assert trait.feature in STYLE_FEATURES
        assert trait.label in STYLE_LABELS[trait.feature]
        assert abs(trait.z) >= TRAIT_MIN_Z
        assert trait.label == STYLE_LABELS[trait.feature][0 if trait.z > 0 else 1]
        assert trait.sentence == STYLE_SENTENCES[trait.feature][0 if trait.z > 0 else 1]
    assert len({t.label for t in parts.traits}) == len(parts.traits)


def test_long_queries_read_as_long(predictor: RatingPredictor) -> None:
    long = "Please explain, in careful and complete detail, " + "the history of Rome " * 60
    parts, _ = parts_of(predictor, [long] * 4)
    assert "long queries" in [t.label for t in parts.traits]


def test_a_board_from_the_aggregate_has_only_votes() -> None:
    models = ("a", "b", "c", "d")
    aggregate = np.array([1000.0, 1010.0, 990.0, np.nan])
    shown = np.array([1030.0, 1005.0, 980.0, 1001.0])
    explanation = explain(models, shown, aggregate, aggregate, note="from the aggregate")
    assert [m.model for m in explanation.models] == ["a", "b", "d"]
    for m in explanation.models[:2]:
        assert m.baseline is None and m.topic is None and m.style is None
        assert m.aggregate is not None and m.aggregate + m.votes == pytest.approx(m.rating)
    assert explanation.models[2].aggregate is None  # the aggregate does not rate d
    assert explanation.topics == () and explanation.style == () and explanation.n_queries == 0
    assert explanation.to_dict()["note"] == "from the aggregate"


def test_to_dict_is_the_spec_shape(predictor: RatingPredictor, code_queries: list[str]) -> None:
    parts, prediction = parts_of(predictor, code_queries)
    aggregate = np.full(len(predictor.models_), 1000.0)
    document = explain(
        predictor.models_, prediction.ratings[0], aggregate, prediction.ratings[0], parts
    ).to_dict()
    assert set(document) == {
        "topics",
        "style",
        "models",
        "n_queries",
        "note",
        "scope",
        "sentences",
        "taste",
    }
    assert document["taste"] is None  # no answers, no taste
    assert set(document["topics"][0]) == {"topic", "label", "share", "population", "name", "fits"}
    assert set(document["style"][0]) == {"feature", "label", "z", "sentence"}
    assert document["scope"] == "person"
    assert all(isinstance(s, str) and s for s in document["sentences"])
    assert set(document["models"][0]) == {
        "model",
        "rating",
        "aggregate",
        "baseline",
        "topic",
        "style",
        "votes",
    }
    assert len(document["models"]) == 3


def test_query_parts_names_a_wrong_count(predictor: RatingPredictor) -> None:
    with pytest.raises(ValueError, match="'n_queries' must have 1 entries, not 2"):
        query_parts(predictor, profile(predictor, ["hello"]), [1, 2])


def test_queries_far_from_their_topics_are_not_said_to_fit(
    predictor: RatingPredictor, code_queries: list[str]
) -> None:
    far = ["How do I file my taxes as a freelancer?", "What deductions can I claim on my tax?"]
    code = query_parts(predictor, profile(predictor, code_queries), [6], texts=[code_queries])
    first = code[0].topics[0]  # most of the coding queries: named, and they fit it
    assert first.name == "programming" and first.fits and first.share > 0.5
    taxes = query_parts(predictor, profile(predictor, far), [2], texts=[far])[0]
    assert taxes.topics and not any(t.fits for t in taxes.topics), taxes.topics
    unmeasured = query_parts(predictor, profile(predictor, far), [2])[0]
    assert all(t.fits for t in unmeasured.topics)  # without the texts nothing is measured
    with pytest.raises(ValueError, match="'texts' must have 1 entries, not 2"):
        query_parts(predictor, profile(predictor, far), [2], texts=[far, far])


def test_taste_units_read_a_doubling_and_three_against_none() -> None:
    units = taste_units(("length", "headers", "lists", "bold", "unknown"))
    assert units[0] == pytest.approx(np.log2(401 / 201))  # length as log2((1 + a) / (1 + b))
    assert units[1:4] == pytest.approx([0.75] * 3)  # (3 - 0) / (3 + 0 + 1)
    assert units[4] == 1.0


def test_answer_taste_in_points_and_words() -> None:
    features = ("length", "headers")
    style = UserStyle(
        features,
        coefficients=np.array([[-0.1, 0.05], [0.02, 0.0]]),
        lower=np.array([[-0.2, -0.1], [-0.1, -0.1]]),
        upper=np.array([[-0.02, 0.2], [0.14, 0.1]]),
        aggregate=np.array([0.02, 0.0]),
        distinct=np.array([[True, False], [False, False]]),
        n_battles=np.array([120, 4]),
        alpha=4.0,
        personal=True,
        held_out=None,
    )
    taste = answer_taste(style, 0)
    assert taste.source == "person" and taste.n_votes == 120
    length, headers = taste.features
    unit = taste_units(features)
    assert length.points == pytest.approx(-0.1 * unit[0] * ELO_PER_NAT, abs=0.01)
    assert length.everyone == pytest.approx(0.02 * unit[0] * ELO_PER_NAT, abs=0.01)
    assert length.lower < length.points < length.upper < length.everyone
    assert length.sentence.startswith("You prefer shorter answers than most: -17 points per ")
    assert headers.sentence == "" and not headers.distinct  # not told apart: not said
    document = explain(("a",), [1000.0], [1000.0], [1000.0], taste=taste).to_dict()
    assert document["taste"]["features"][0]["sentence"] == length.sentence
    assert length.sentence in document["sentences"]
    assert answer_taste(style, 1).features[0].sentence == ""
