"""The rating predictor: from queries to ratings, blended with votes, saved and loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from features.predictor import RatingPredictor
from features.predictor_fit import STYLE_COMPONENTS
from features.profile import UserProfiler
from features.topics import TopicModel
from ranking.contextual import ALPHA_GRID
from ranking.io.frames import pairwise_from_battles
from ranking.types import CENTER
from tests.conftest import RecordedProgress


@pytest.fixture(scope="module")
def recorded() -> RecordedProgress:
    """The stages :func:`fitted` reported."""
    return RecordedProgress()


@pytest.fixture(scope="module")
def fitted(labelled_battles: pd.DataFrame, recorded: RecordedProgress) -> RatingPredictor:
    profiler = UserProfiler(TopicModel("minilm-int8", n_topics=4))
    return RatingPredictor(profiler, folds=2).fit(labelled_battles, progress=recorded)


def small_predictor(
    battles: pd.DataFrame, query_components: int | None = None, **params: Any
) -> RatingPredictor:
    """A quick predictor: TF-IDF topics, two style components, a fixed penalty."""
    extra = {} if query_components is None else {"query_components": query_components}
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3), **extra)
    return RatingPredictor(profiler, style_components=2, folds=2, alpha=1.0, **params).fit(battles)


def test_fit_reports_embedding_topics_and_every_contextual_fit(
    fitted: RatingPredictor, recorded: RecordedProgress, labelled_battles: pd.DataFrame
) -> None:
    assert recorded.named() == ["embedding queries", "topics", "rating predictor"]
    recorded.assert_complete()
    assert recorded.stages[0].total == labelled_battles["prompt"].nunique()
    # per member: the penalty's grid on each fold, the fit on all votes, one a fold
    per_member = len(ALPHA_GRID) * 2 + 1 + 2
    assert recorded.stages[2].total == len(STYLE_COMPONENTS) * per_member


def test_fit_learns_a_contextual_model_and_a_blend_strength(
    fitted: RatingPredictor, labelled_battles: pd.DataFrame
) -> None:
    n_models = labelled_battles["model_a"].nunique()
    assert fitted.models_ == tuple(sorted(labelled_battles["model_a"].unique()))
    assert len(fitted.members_) == len(STYLE_COMPONENTS)  # one model per style size, averaged
    for member, wanted in zip(fitted.members_, STYLE_COMPONENTS, strict=True):
        components = member.components.n_components_
        assert components <= wanted
        queries = fitted.profiler_.query_model_.n_components_
        assert member.model.coef.shape == (n_models, 1 + 4 + queries + components)
        assert member.model.alpha > 0  # chosen by held-out users' votes
    assert fitted.blend_alpha_ > 0 and np.isfinite(fitted.prior_sd)
    assert len(fitted.training_profiles_.user_ids) == labelled_battles["user_id"].nunique()


def test_predict_users_predicts_each_user_of_a_frame(fitted: RatingPredictor) -> None:
    code = ["Fix this Python error: KeyError in my dict", "Sort a list in Rust"]
    poem = ["Write a poem about autumn leaves"]
    frame = pd.DataFrame({"user_id": ["b", "a", "b"], "prompt": [code[0], poem[0], code[1]]})
    both = fitted.predict_users(frame)
    assert list(both.user_ids) == ["a", "b"] and both.models == fitted.models_
    np.testing.assert_array_equal(
        both.ratings, fitted.predict(fitted.profiler_.transform(frame)).ratings
    )
    for row, queries in enumerate((poem, code)):
        alone = fitted.predict_queries(queries)
        # int8 activations are scaled per batch, so batch-mates move a vector slightly
        np.testing.assert_allclose(both.ratings[row], alone.ratings[0], atol=10.0)
        assert np.argmax(both.ratings[row]) == np.argmax(alone.ratings[0])


def test_predictions_from_queries_have_intervals_and_spec_ranks(fitted: RatingPredictor) -> None:
    prediction = fitted.predict_queries(["Write a Python function to merge two lists."])
    assert prediction.source == "predicted" and prediction.ratings.shape == (1, 6)
    assert prediction.ratings.mean() == pytest.approx(CENTER)
    assert (prediction.lower < prediction.ratings).all()
    assert (prediction.ratings < prediction.upper).all()
    ranking = prediction.ranking()
    assert [r["rating"] for r in ranking] == sorted((r["rating"] for r in ranking), reverse=True)
    assert ranking[0]["rank"] == 1


def test_different_queries_give_different_rankings(fitted: RatingPredictor) -> None:
    code = fitted.predict_queries(["Fix this Python error: KeyError in my dict"] * 5)
    poem = fitted.predict_queries(["Write a poem about autumn leaves"] * 5)
    assert not np.allclose(code.ratings, poem.ratings)


def test_blend_without_votes_is_the_prediction_and_many_votes_dominate(
    fitted: RatingPredictor,
) -> None:
    prediction = fitted.predict_queries(["Plan a trip to Rome"])
    models = fitted.models_
    worst = int(np.argmin(prediction.ratings[0]))
    others = [m for j, m in enumerate(models) if j != worst]
    votes = pd.DataFrame(
        {
            "model_a": models[worst],
            "model_b": [others[i % len(others)] for i in range(300)],
            "winner": "model_a",
        }
    )
    data = pairwise_from_battles(votes, models)
    none = data.select(np.zeros(len(votes), dtype=bool))
    same = fitted.blend(prediction, none, np.zeros(0, dtype=np.intp))
    np.testing.assert_allclose(same.ratings, prediction.ratings, atol=1e-6)
    blended = fitted.blend(prediction, data, np.zeros(len(votes), dtype=np.intp))
    assert blended.source == "blended"
    assert int(np.argmax(blended.ratings[0])) == worst


def test_blend_rejects_other_models(fitted: RatingPredictor) -> None:
    votes = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["model_a"]})
    prediction = fitted.predict_queries(["hello"])
    with pytest.raises(ValueError, match="does not know: x, y"):
        fitted.blend(prediction, pairwise_from_battles(votes), np.zeros(1, dtype=np.intp))


def test_save_and_load(fitted: RatingPredictor, tmp_path: Path) -> None:
    folder = fitted.save(tmp_path / "predictor")
    loaded = RatingPredictor.load(folder)
    queries = ["Summarize this article about climate policy"]
    np.testing.assert_allclose(
        loaded.predict_queries(queries).ratings, fitted.predict_queries(queries).ratings
    )
    assert not hasattr(loaded, "training_profiles_")
    with pytest.raises(ValueError, match="no rating predictor in"):
        RatingPredictor.load(tmp_path)


def test_style_context_per_query_is_an_option(labelled_battles: pd.DataFrame) -> None:
    query = small_predictor(labelled_battles, style_context="query")
    (member,) = query.members_  # a given style size: one model
    assert member.components.n_components_ == 2 and member.model.alpha == 1.0
    assert member.model.coef.shape[1] == 1 + 3 + query.profiler_.query_model_.n_components_ + 2
    with pytest.raises(ValueError, match="'style_components' must be a positive integer"):
        RatingPredictor(query.profiler, style_components=0).fit(labelled_battles)
    with pytest.raises(ValueError, match="'style_context' must be 'user' or 'query', not 'x'"):
        RatingPredictor(query.profiler, style_context="x").fit(labelled_battles)  # type: ignore[arg-type]


def test_style_source_picks_the_profile_columns(labelled_battles: pd.DataFrame) -> None:
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
    sizes = {}
    for source in ("raw", "relative", "both"):
        predictor = RatingPredictor(
            profiler, style_source=source, style_components=2, folds=2, alpha=1.0
        ).fit(labelled_battles)
        sizes[source] = predictor.style_center_.size
        ratings = predictor.predict_queries(["Write a haiku about rain"]).ratings
        assert np.isfinite(ratings).all()
    assert sizes == {"raw": 32, "relative": 32, "both": 64}
    query = RatingPredictor(
        profiler, style_context="query", style_source="both", style_components=2, folds=2
    )
    assert np.isfinite(query.fit(labelled_battles).predict_queries(["hi"]).ratings).all()
    with pytest.raises(ValueError, match="'style_source' must be 'raw', 'relative' or 'both'"):
        RatingPredictor(profiler, style_source="x").fit(labelled_battles)  # type: ignore[arg-type]


def test_a_predictor_saved_before_relative_style_loads_and_predicts_raw(
    labelled_battles: pd.DataFrame, tmp_path: Path
) -> None:
    raw = small_predictor(labelled_battles, style_source="raw")
    queries = ["Explain photosynthesis in detail, please."]
    expected = raw.predict_queries(queries).ratings
    # what a predictor pickled before style_rel holds: no style_source, an older profiler
    del raw.__dict__["style_source"]
    old_profiler = raw.profiler_
    for name in ("topic_style_mean_", "topic_style_sd_", "topic_prior"):
        del old_profiler.__dict__[name]
    old_profiler.feature_names_ = tuple(
        n for n in old_profiler.feature_names_ if not n.startswith("style_rel:")
    )
    loaded = RatingPredictor.load(raw.save(tmp_path / "old"))
    assert loaded.style_source == "raw"
    np.testing.assert_allclose(loaded.predict_queries(queries).ratings, expected)
    loaded.style_source = "relative"
    with pytest.raises(ValueError, match="lack; refit the predictor"):
        loaded.predict_queries(queries)


def test_a_predictor_saved_before_query_components_loads_and_predicts_as_before(
    labelled_battles: pd.DataFrame, tmp_path: Path
) -> None:
    before = small_predictor(labelled_battles, query_components=0)
    queries = ["Explain photosynthesis in detail, please.", "Write a haiku about rain."]
    expected = before.predict_queries(queries).ratings
    # what a predictor pickled before query_pc holds: a profiler without those attributes
    for name in ("query_components", "query_whiten", "query_model_"):
        del before.profiler_.__dict__[name]
    loaded = RatingPredictor.load(before.save(tmp_path / "old"))
    assert loaded.profiler_.query_model_ is None
    assert not any(n.startswith("query_pc:") for n in loaded.profiler_.feature_names_)
    np.testing.assert_array_equal(loaded.predict_queries(queries).ratings, expected)


def test_query_components_enter_every_vote_and_user_context(
    labelled_battles: pd.DataFrame, tmp_path: Path
) -> None:
    fitted = small_predictor(labelled_battles, query_components=5)
    n_models = labelled_battles["model_a"].nunique()
    assert fitted.members_[0].model.coef.shape == (n_models, 1 + 3 + 5 + 2)
    queries = ["Explain photosynthesis in detail, please."]
    expected = fitted.predict_queries(queries).ratings
    loaded = RatingPredictor.load(fitted.save(tmp_path / "new"))
    assert "query_context_" not in loaded.profiler_.__dict__  # training rows are not saved
    np.testing.assert_allclose(loaded.predict_queries(queries).ratings, expected)
    summary = (tmp_path / "new" / "predictor.json").read_text()
    assert "query_pc:4" in summary


def test_past_search_votes_the_penalty_is_searched_on_whole_users_drawn_at_random(
    labelled_battles: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``SEARCH_VOTES`` votes the search sees a sample of users' votes (every vote of
    each user drawn, no more votes than the budget); the model and the fold models are
    then fitted on every vote at the penalty it chose."""
    from features import predictor_fit

    searched: list[int] = []
    real_search = predictor_fit.search_alpha

    def spy(*args: Any, **kwargs: Any) -> Any:
        searched.append(len(args[1]))
        return real_search(*args, **kwargs)

    monkeypatch.setattr(predictor_fit, "search_alpha", spy)
    monkeypatch.setattr(predictor_fit, "SEARCH_VOTES", 500)
    recorded = RecordedProgress()
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
    predictor = RatingPredictor(profiler, style_components=2, folds=2)
    predictor.fit(labelled_battles, progress=recorded)
    assert len(searched) == 1 and 0 < searched[0] <= 500 < len(labelled_battles)
    recorded.assert_complete()
    (member,) = predictor.members_
    assert member.model.alpha in ALPHA_GRID
    assert np.isfinite(predictor.training_predictions_).all() and predictor.blend_alpha_ > 0

    users = labelled_battles["user_id"].factorize()[0]
    rows = predictor_fit._search_rows(users, users.max() + 1, np.random.default_rng(3))
    assert rows is not None and 0 < len(rows) <= 500
    drawn = np.unique(users[rows])
    assert len(rows) == np.isin(users, drawn).sum()  # whole users
    assert (np.diff(rows) > 0).all()  # in vote order
    monkeypatch.setattr(predictor_fit, "SEARCH_VOTES", len(labelled_battles))
    assert predictor_fit._search_rows(users, users.max() + 1, np.random.default_rng(3)) is None


def test_a_refit_started_from_an_earlier_fit_keeps_its_penalties_and_reaches_its_optimum(
    labelled_battles: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started from a fit of the same votes, a refit searches no penalty, reports one
    fit fewer per member's grid, and predicts what the earlier fit predicts; started from
    a fit of other models, it is a full fit."""
    from features import predictor_fit

    def fit(start: RatingPredictor | None, battles: pd.DataFrame) -> RatingPredictor:
        profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
        return RatingPredictor(profiler, style_components=2, folds=2).fit(battles, start=start)

    first = fit(None, labelled_battles)
    searches: list[int] = []
    real_search = predictor_fit.search_alpha

    def spy(*args: Any, **kwargs: Any) -> Any:
        searches.append(1)
        return real_search(*args, **kwargs)

    monkeypatch.setattr(predictor_fit, "search_alpha", spy)
    recorded = RecordedProgress()
    profiler = UserProfiler(TopicModel("tfidf", n_topics=3))
    again = RatingPredictor(profiler, style_components=2, folds=2)
    again.fit(labelled_battles, progress=recorded, start=first)
    assert searches == []
    recorded.assert_complete()
    assert recorded.stages[-1].total == 1 + 2  # the fit on all votes, one a fold
    assert [m.model.alpha for m in again.members_] == [m.model.alpha for m in first.members_]
    np.testing.assert_allclose(again.training_predictions_, first.training_predictions_, atol=1e-6)
    fewer = labelled_battles[labelled_battles["model_a"] != first.models_[0]]
    fewer = fewer[fewer["model_b"] != first.models_[0]]
    fit(first, fewer)
    assert searches == [1]  # other models: the penalty is searched again


def test_a_refit_over_the_same_topic_model_keeps_its_bases_and_each_users_fold(
    labelled_battles: pd.DataFrame,
) -> None:
    """Over the earlier fit's own topic model, a refit keeps the bases its coefficients
    were fitted on (query components, style standardisation and components), so that
    its fits start where the earlier ones ended; each earlier user keeps their fold, and
    a new user is dealt one. On the same votes it predicts what the earlier fit does."""
    users = sorted(labelled_battles["user_id"].unique())
    newcomers = set(users[:4])
    earlier_votes = labelled_battles[~labelled_battles["user_id"].isin(newcomers)]

    def fit(battles: pd.DataFrame, start: RatingPredictor | None) -> RatingPredictor:
        topics = TopicModel("tfidf", n_topics=3) if start is None else start.profiler_.topic_model_
        predictor = RatingPredictor(UserProfiler(topics), style_components=2, folds=3)
        return predictor.fit(battles, start=start)

    first = fit(earlier_votes, None)
    again = fit(labelled_battles, first)
    assert again.profiler_.query_model_ is first.profiler_.query_model_
    np.testing.assert_array_equal(again.style_center_, first.style_center_)
    (member,), (earlier_member,) = again.members_, first.members_
    assert member.components is earlier_member.components
    assert member.model.alpha == earlier_member.model.alpha
    assert np.abs(member.model.coef - earlier_member.model.coef).max() > 1e-4  # refitted
    both = first.fold_users_.index
    np.testing.assert_array_equal(again.fold_users_[both], first.fold_users_)
    assert set(again.fold_users_.index) - set(both) == newcomers
    assert again.fold_users_.isin(range(3)).all()

    same = fit(earlier_votes, first)
    np.testing.assert_allclose(same.training_predictions_, first.training_predictions_, atol=1e-6)


def test_a_refit_keeps_its_fold_models_while_few_votes_are_newer_than_them(
    labelled_battles: pd.DataFrame,
) -> None:
    """A refit after a few new votes (under ``STALE_FOLD_SHARE`` of them) keeps the
    earlier fold models as they are, and remembers how many votes they saw; once more
    votes are newer than that, each fold's model is fitted again."""
    from features.fit_start import STALE_FOLD_SHARE

    def fit(battles: pd.DataFrame, start: RatingPredictor | None) -> RatingPredictor:
        topics = TopicModel("tfidf", n_topics=3) if start is None else start.profiler_.topic_model_
        predictor = RatingPredictor(UserProfiler(topics), style_components=2, folds=3)
        return predictor.fit(battles, start=start)

    ordered = labelled_battles.sort_values("tstamp", kind="stable")
    few = int(len(ordered) * STALE_FOLD_SHARE / 2)
    first = fit(ordered.iloc[: len(ordered) - 2 * few], None)
    assert first.fold_votes_ == len(ordered) - 2 * few
    again = fit(ordered.iloc[: len(ordered) - few], first)
    (folds,), (earlier_folds,) = again.fold_models_, first.fold_models_
    assert all(folds[f] is earlier_folds[f] for f in range(3))
    assert again.fold_votes_ == first.fold_votes_
    (member,), (earlier_member,) = again.members_, first.members_
    assert np.abs(member.model.coef - earlier_member.model.coef).max() > 1e-6  # refitted

    stale = fit(ordered, fit(ordered.iloc[: len(ordered) // 2], None))
    assert stale.fold_votes_ == len(ordered)
    (folds,) = stale.fold_models_
    assert len(folds) == 3

    fewer = fit(ordered.iloc[: len(ordered) - 2 * few - 1], first)  # a vote gone
    assert fewer.fold_votes_ == len(ordered) - 2 * few - 1
    assert all(fewer.fold_models_[0][f] is not earlier_folds[f] for f in range(3))
