"""User profiles: fixed-length vectors of topic shares, style and vote counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from features.profile import UserProfiler
from features.query_vectors import distinct_vectors
from features.style import STYLE_FEATURES, style_features
from features.topics import TopicModel
from features.user_profiles import UserProfiles
from tests.conftest import RecordedProgress


@pytest.fixture(scope="module")
def topic_model(corpus: tuple[list[str], np.ndarray], corpus_embeddings: np.ndarray) -> TopicModel:
    return TopicModel("minilm-int8", n_topics=6).fit(corpus[0], embeddings=corpus_embeddings)


@pytest.fixture(scope="module")
def vectors(labelled_battles: pd.DataFrame, topic_model: TopicModel) -> dict[str, np.ndarray]:
    """Each distinct prompt's real MiniLM vector, embedded once for the module.

    Embedded as a fit embeds them (every distinct prompt in one call, in the same
    order), so a profiler given these profiles exactly as when it embeds the prompts
    itself: the tests of what a profile holds share one embedding rather than each
    embedding the log again. Embedding in a fit is tested by
    :func:`test_the_profiler_embeds_each_distinct_prompt_once`.
    """
    texts = labelled_battles["prompt"].dropna().astype(str).tolist()
    rows, _, docs = distinct_vectors(topic_model.embedder_, texts)
    return dict(zip(docs, rows, strict=True))


def battles(rows: list[tuple[str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["user_id", "prompt"])


def test_profiles_have_one_row_per_user_and_named_columns(
    labelled_battles: pd.DataFrame, topic_model: TopicModel, vectors: dict[str, np.ndarray]
) -> None:
    profiler = UserProfiler(topic_model)
    profiles = profiler.fit_transform(labelled_battles, vectors)
    n_users = labelled_battles["user_id"].nunique()
    width = 6 + 3 * len(STYLE_FEATURES) + profiler.query_model_.n_components_ + 1
    assert profiles.values.shape == (n_users, width)
    assert list(profiler.get_feature_names_out()) == list(profiles.feature_names)
    assert profiles.feature_names[0] == "topic:0" and profiles.feature_names[-1] == "log_votes"
    assert np.isfinite(profiles.values).all()
    shares = profiles.values[:, :6]
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    votes = labelled_battles.groupby("user_id").size().sort_index().to_numpy()
    np.testing.assert_allclose(profiles.values[:, -1], np.log1p(votes))


def test_topic_shares_are_smoothed_toward_the_population(topic_model: TopicModel) -> None:
    log = battles([("a", "Write a Python function that sorts a list.")] * 1 + [("b", "hi")] * 3)
    profiler = UserProfiler(topic_model, smoothing=2.0).fit(log)
    own = topic_model.predict(["Write a Python function that sorts a list."])[0]
    profile = profiler.transform(log).to_frame().loc["a"]
    expected = (1 + 2 * profiler.topic_share_[own]) / 3
    assert profile[f"topic:{own}"] == pytest.approx(expected)
    unsmoothed = UserProfiler(topic_model, smoothing=0.0).fit(log).transform(log).to_frame()
    assert unsmoothed.loc["a", f"topic:{own}"] == pytest.approx(1.0)


def test_new_users_and_votes_without_prompts(topic_model: TopicModel) -> None:
    profiler = UserProfiler(topic_model).fit(battles([("a", "hi there"), ("b", "Solve 2x=4")]))
    new = battles([("new", "How do I cook rice?"), ("new", None), ("silent", None)])
    frame = profiler.transform(new).to_frame()
    assert list(frame.index) == ["new", "silent"]
    assert frame.loc["new", "log_votes"] == pytest.approx(np.log1p(2))
    np.testing.assert_allclose(frame.loc["silent"].iloc[:6], profiler.topic_share_)
    assert UserProfiles.from_frame(frame).to_frame().equals(frame)


def test_bad_input_is_named(topic_model: TopicModel) -> None:
    with pytest.raises(ValueError, match="'prompt' column"):
        UserProfiler(topic_model).fit(pd.DataFrame({"user_id": ["a"]}))
    with pytest.raises(ValueError, match="row 1: field 'user_id' is missing"):
        UserProfiler(topic_model).fit(battles([("a", "x"), (None, "y")]))  # type: ignore[list-item]
    with pytest.raises(ValueError, match="no prompts"):
        UserProfiler(topic_model).fit(battles([("a", None)]))
    with pytest.raises(ValueError, match="'smoothing' must be a non-negative number"):
        UserProfiler(topic_model, smoothing=-1).fit(battles([("a", "x")]))
    with pytest.raises(ValueError, match="'topic_prior' must be a non-negative number, not nan"):
        UserProfiler(topic_model, topic_prior=float("nan")).fit(battles([("a", "x")]))


def test_relative_style_is_standardised_within_each_topic(
    labelled_battles: pd.DataFrame, topic_model: TopicModel, vectors: dict[str, np.ndarray]
) -> None:
    profiler = UserProfiler(topic_model, topic_prior=0.0)
    profiles = profiler.fit_transform(labelled_battles, vectors).to_frame()
    texts = labelled_battles["prompt"].astype(str).tolist()
    style = style_features(texts)
    relative = profiler.relative_style(style, profiler.labels_)
    varying = style.std(axis=0) > 0
    for k in np.unique(profiler.labels_):  # without a prior: z-scores within each topic
        z = relative[profiler.labels_ == k][:, varying]
        np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=0.05)
        assert (z.std(axis=0) <= 1.0 + 1e-9).all()  # 1, or less where clipped
    # a user's style_rel is the smoothed mean of their queries' relative style
    owner = labelled_battles["user_id"].to_numpy()
    user = sorted(set(owner))[0]
    mine = relative[owner == user]
    expected = mine.sum(axis=0) / (len(mine) + profiler.smoothing)
    columns = [f"style_rel:{f}" for f in STYLE_FEATURES]
    np.testing.assert_allclose(profiles.loc[user, columns].to_numpy(), expected)


def test_topic_prior_shrinks_a_small_topic_toward_all_queries(topic_model: TopicModel) -> None:
    rows: list[tuple[str, str | None]] = [("a", "Write a Python function that sorts a list.")] * 2
    log = battles(rows + [("b", "hi")] * 8)
    loose = UserProfiler(topic_model, topic_prior=0.0).fit(log)
    tight = UserProfiler(topic_model, topic_prior=1e6).fit(log)
    everything = style_features(log["prompt"].tolist())
    np.testing.assert_allclose(
        tight.topic_style_mean_[loose.labels_],
        everything.mean(axis=0)[None].repeat(10, 0),
        rtol=1e-4,
        atol=1e-6,
    )
    assert np.isfinite(loose.topic_style_sd_).all() and (loose.topic_style_sd_ > 0).all()


def test_a_profiler_saved_before_relative_style_still_transforms(
    labelled_battles: pd.DataFrame, topic_model: TopicModel, vectors: dict[str, np.ndarray]
) -> None:
    profiler = UserProfiler(topic_model).fit(labelled_battles, vectors)
    state = dict(profiler.__dict__)
    for name in ("topic_style_mean_", "topic_style_sd_", "topic_prior", "query_components"):
        del state[name]
    for name in ("query_whiten", "query_model_", "query_mean_", "query_context_"):
        del state[name]
    state["feature_names_"] = tuple(
        n for n in state["feature_names_"] if "style_rel:" not in n and "query_pc:" not in n
    )
    old = UserProfiler.__new__(UserProfiler)
    old.__setstate__(state)
    frame = old.transform(labelled_battles, vectors).to_frame()
    assert list(frame.columns) == list(old.feature_names_)
    new = profiler.transform(labelled_battles, vectors).to_frame()
    pd.testing.assert_frame_equal(frame, new[frame.columns])


def test_query_components_are_smoothed_means_of_each_users_queries(
    labelled_battles: pd.DataFrame, topic_model: TopicModel, vectors: dict[str, np.ndarray]
) -> None:
    profiler = UserProfiler(topic_model, query_components=4)
    profiles = profiler.fit_transform(labelled_battles, vectors).to_frame()
    query = profiles.filter(like="query_pc:")
    assert list(query.columns) == [f"query_pc:{k}" for k in range(4)]
    assert profiler.query_context_.shape == (labelled_battles["prompt"].notna().sum(), 4)
    # one user, two queries: (sum + smoothing * population mean) / (2 + smoothing)
    texts = labelled_battles["prompt"].iloc[:2].tolist()
    one = profiler.transform(battles([("u", texts[0]), ("u", texts[1])])).to_frame()
    rows = profiler.topics_and_context(texts)[1]
    assert rows is not None and rows.shape == (2, 4)
    expected = (rows.sum(axis=0) + 2.0 * profiler.query_mean_) / 4.0
    np.testing.assert_allclose(one.filter(like="query_pc:").to_numpy()[0], expected, atol=1e-5)
    nothing = profiler.transform(battles([("v", None)])).to_frame()
    np.testing.assert_allclose(nothing.filter(like="query_pc:").to_numpy()[0], profiler.query_mean_)
    with pytest.raises(ValueError, match="'query_components' must be a non-negative integer"):
        UserProfiler(topic_model, query_components=-1).fit(labelled_battles)


def test_one_users_queries_profile_as_their_frame_does(
    labelled_battles: pd.DataFrame, topic_model: TopicModel, vectors: dict[str, np.ndarray]
) -> None:
    """:meth:`UserProfiler.transform_queries` is :meth:`UserProfiler.transform` of the
    one user's frame, to the bit; a vote without a prompt goes through the frame."""
    profiler = UserProfiler(topic_model, query_components=4).fit(labelled_battles, vectors)
    texts = labelled_battles["prompt"].dropna().iloc[:5].tolist()
    for queries, user in ((texts, "you"), ([*texts, texts[0]], "someone"), (texts[:1], "x")):
        fast = profiler.transform_queries(queries, user)
        frame = profiler.transform(pd.DataFrame({"user_id": user, "prompt": queries}))
        np.testing.assert_array_equal(fast.values, frame.values)
        assert list(fast.user_ids) == list(frame.user_ids) == [user]
        assert fast.feature_names == frame.feature_names
    gaps: list[Any] = [texts[0], None]
    expected = profiler.transform(pd.DataFrame({"user_id": "you", "prompt": gaps}))
    np.testing.assert_array_equal(profiler.transform_queries(gaps).values, expected.values)


def test_the_profiler_embeds_each_distinct_prompt_once(labelled_battles: pd.DataFrame) -> None:
    progress = RecordedProgress()
    profiler = UserProfiler(TopicModel("tfidf", n_topics=4), query_components=8)
    profiler.fit_transform(labelled_battles, progress=progress)
    embedded = [(s.name, s.total) for s in progress.stages if s.name.startswith("embedding")]
    n_distinct = labelled_battles["prompt"].nunique()
    assert embedded == [("embedding queries (TF-IDF)", n_distinct)]  # for topics and components
    assert profiler.query_model_ is not None


def test_profiles_are_each_users_own_shares_and_means(
    labelled_battles: pd.DataFrame, topic_model: TopicModel, vectors: dict[str, np.ndarray]
) -> None:
    profiler = UserProfiler(topic_model, smoothing=0.0)
    frame = profiler.fit_transform(labelled_battles, vectors).to_frame()
    users = labelled_battles["user_id"].astype(str).to_numpy()
    rows = style_features(labelled_battles["prompt"].tolist())
    style = pd.DataFrame(rows, columns=list(STYLE_FEATURES))
    style["user_id"] = users
    means = style.groupby("user_id").mean().loc[frame.index]
    spreads = style.groupby("user_id").std(ddof=0).loc[frame.index]
    for feature in STYLE_FEATURES:
        got = frame[f"style_mean:{feature}"].to_numpy()
        np.testing.assert_allclose(got, means[feature].to_numpy(), rtol=1e-9, atol=1e-12)
        got = frame[f"style_sd:{feature}"].to_numpy()
        np.testing.assert_allclose(got, spreads[feature].to_numpy(), rtol=1e-6, atol=1e-6)
    shares = pd.crosstab(users, profiler.labels_, normalize="index").loc[frame.index]
    for topic in range(topic_model.n_topics_):
        expected = shares[topic].to_numpy() if topic in shares.columns else 0.0
        np.testing.assert_allclose(frame[f"topic:{topic}"].to_numpy(), expected, atol=1e-12)
