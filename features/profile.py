"""User profiles: one fixed-length vector per user from the queries they wrote.

A profile (:class:`features.user_profiles.UserProfiles`, whose docstring names its
columns) is what the study found predicts a user's model preferences.

Each battle row is one query (the prompt the user voted on), so a prompt voted on twice
counts twice. Rows without a prompt count as votes only. The numbers are added up in
:mod:`features.profile_values`; what a fit learns beside the topics in
:mod:`features.profile_fit`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from features.profile_fit import (
    check_profiler_settings,
    fit_query_components,
    profile_feature_names,
    topic_styles,
)
from features.profile_values import battle_queries, profile_values
from features.query_context import QueryComponents
from features.query_topics import cached_topics_and_components, topics_and_components
from features.query_vectors import distinct_vectors
from features.style import cached_style_features, style_features
from features.topics import Embeddings, TopicModel
from features.user_profiles import UserProfiles
from ranking.progress import Progress

__all__ = ["UserProfiler"]


class UserProfiler(BaseEstimator):
    """Turn each user's queries into one profile vector (topics, style, votes).

    Parameters
    ----------
    topic_model : TopicModel, optional
        Topic model, fitted by :meth:`fit` unless it is fitted already; a default
        :class:`~features.topics.TopicModel` when omitted.
    smoothing : float
        Pseudo-queries, distributed like the whole population's, added to every user's
        topic shares and style means.
    topic_prior : float
        Pseudo-queries, distributed like all training queries, added to each topic's
        style mean and variance for ``style_rel:`` (so a small topic is not its own
        yardstick).
    query_components : int
        Principal components of the query embeddings in the profile (``query_pc:``),
        fitted on the distinct training prompts; 0 for none (profilers saved before them).
        On real-prompt simulations (issue 16, 460 users, 12 models) 128 of them raised
        new users' Spearman against the truth from 0.604 to 0.683 and from 0.662 to
        0.708 (seeds 0, 1; 8, 16, 32, 64 gave 0.625, 0.636, 0.646, 0.666 on seed 0),
        and cost 0.002 and 0.005 on the template simulator. They cost little to predict
        (a projection of embeddings already computed) but make each contextual fit a
        few times larger than without them.
    query_whiten : bool
        Scale each component to unit variance, or (default) all by one factor so they
        keep their relative spread and the penalty weighs the minor ones down.

    Attributes
    ----------
    topic_model_ : TopicModel
        The fitted topic model.
    topic_share_ : ndarray
        Share of each topic over all training queries.
    style_mean_ : ndarray
        Mean of each style feature over all training queries.
    topic_style_mean_, topic_style_sd_ : ndarray
        ``(n_topics, n_style)`` shrunk mean and standard deviation of each style feature
        among the training queries of each topic (absent from profilers saved before
        ``style_rel:``, whose profiles lack those columns).
    labels_ : ndarray of int
        Topic of each training row with a prompt, in row order.
    query_model_ : QueryComponents or None
        The fitted embedding components (None when ``query_components`` is 0).
    query_mean_ : ndarray
        Their mean over all training queries.
    query_context_ : ndarray
        ``(rows with a prompt, n_components)`` components of each training row's query.
    feature_names_ : tuple of str
        Names of the profile's columns.
    style_cache_ : TextCache or None
        Each query's style row kept by text, for serving; only where
        :func:`features.embeddings.cache.cache_embeddings` installed it.
    query_cache_ : TextCache or None
        Each query's topic and embedding components kept by text, for serving (the
        same).
    """

    def __init__(
        self,
        topic_model: TopicModel | None = None,
        smoothing: float = 2.0,
        topic_prior: float = 20.0,
        query_components: int = 128,
        query_whiten: bool = False,
    ) -> None:
        self.query_whiten = query_whiten
        self.topic_model = topic_model
        self.smoothing = smoothing
        self.topic_prior = topic_prior
        self.query_components = query_components

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("topic_prior", 20.0)  # profilers saved before style_rel
        state.setdefault("query_components", 0)  # profilers saved before query_pc
        state.setdefault("query_model_", None)
        super().__setstate__(state)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state.pop("query_context_", None)  # the training rows': fit only, and large
        return state

    def fit(self, battles: pd.DataFrame, embeddings: Embeddings | None = None) -> UserProfiler:
        """Learn topics and population means from battles with ``user_id`` and ``prompt``."""
        self.fit_transform(battles, embeddings)
        return self

    def fit_transform(
        self,
        battles: pd.DataFrame,
        embeddings: Embeddings | None = None,
        progress: Progress | None = None,
        query_model: QueryComponents | None = None,
    ) -> UserProfiles:
        """Fit, and return the training users' profiles (embedding each query once).

        Parameters
        ----------
        battles : DataFrame
            Rows with ``user_id`` and ``prompt`` (docs/SPEC.md section 1).
        embeddings : array of shape (rows with a prompt, d), or mapping, optional
            Precomputed embeddings of the non-missing prompts, in row order, or a table
            of vectors by prompt text (:meth:`features.topics.TopicModel.fit`).
        progress : Progress, optional
            Told of the topic model's stages (:meth:`features.topics.TopicModel.fit`).
        query_model : QueryComponents, optional
            Fitted query components to apply rather than fit (a refit's, kept from the
            earlier fit of the same topic model, so that the components mean what its
            coefficients were fitted on). Used when it has ``query_components``
            components over vectors of this embedding's width; fitted afresh otherwise.
        """
        check_profiler_settings(self.smoothing, self.topic_prior, self.query_components)
        codes, names, prompts = battle_queries(battles)
        present = prompts.notna().to_numpy()
        if not present.any():
            raise ValueError("battles have no prompts: topic and style features need queries")
        texts = prompts[present].astype(str).tolist()
        model = self.topic_model if self.topic_model is not None else TopicModel()
        fitted = hasattr(model, "bertopic_")
        # one pass over the distinct prompts: embedded once, for the topics and components
        embedder = model.embedder_ if fitted else model.new_embedder()
        vectors, inverse, docs = distinct_vectors(embedder, texts, embeddings, progress)
        if fitted:
            topics = model.predict_distinct(docs, vectors)[inverse]
        else:
            topics = model.fit_distinct(
                docs, vectors, inverse, embedder=embedder, progress=progress
            ).labels_
        k, query = self.query_components, None
        self.query_model_ = fit_query_components(k, self.query_whiten, vectors, query_model)
        if self.query_model_ is not None:
            query = self.query_model_.transform(vectors)[inverse]
            self.query_mean_ = query.mean(axis=0)
            self.query_context_ = query
        # rows kept by text where the fit pipeline installed them (service.pipeline.reuse)
        style = cached_style_features(docs, getattr(self, "style_cache_", None))[inverse]
        self.topic_model_ = model
        self.topic_share_ = np.bincount(topics, minlength=model.n_topics_) / topics.size
        self.style_mean_ = style.mean(axis=0)
        self.labels_ = topics
        self.topic_style_mean_, self.topic_style_sd_ = topic_styles(
            style, topics, model.n_topics_, float(self.topic_prior)
        )
        self.feature_names_ = profile_feature_names(
            model.n_topics_,
            self.query_model_.get_feature_names_out() if self.query_model_ else (),
        )
        return self._profiles(codes, names, present, topics, style, query)

    def transform(
        self,
        battles: pd.DataFrame,
        embeddings: Embeddings | None = None,
        progress: Progress | None = None,
    ) -> UserProfiles:
        """Profiles of the users in ``battles`` (new users included) with the fitted model.

        ``progress`` is told of the stage ``"embedding queries"`` of their queries.
        """
        check_is_fitted(self, "feature_names_")
        codes, names, prompts = battle_queries(battles)
        present = prompts.notna().to_numpy()
        texts = prompts[present].astype(str).tolist()
        return self._text_profiles(codes, names, present, texts, embeddings, progress)

    def fitted_row_profiles(
        self, battles: pd.DataFrame, rows: npt.NDArray[np.intp]
    ) -> UserProfiles:
        """Profiles of the users of some of the fitted rows, from those rows alone.

        Each query keeps the topic and components it was fitted with (nothing is
        embedded again), so a user profiled from their earlier queries is read exactly as
        the rating predictor's training votes were.

        Parameters
        ----------
        battles : DataFrame
            The frame this profiler was fitted on, in the same row order.
        rows : array of int
            Positions in ``battles`` of the rows to profile (for example each user's
            earlier votes).

        Returns
        -------
        UserProfiles
            One row per user of ``rows``, sorted by id.
        """
        check_is_fitted(self, "labels_")
        _, _, prompts = battle_queries(battles)
        present = prompts.notna().to_numpy()
        if int(present.sum()) != self.labels_.size:
            raise ValueError("Argument 'battles' must be the frame the profiler was fitted on.")
        fitted_row = np.cumsum(present) - 1
        chosen = battles.iloc[rows]
        codes, names, chosen_prompts = battle_queries(chosen)
        kept = present[rows]
        index = fitted_row[rows[kept]]
        texts = chosen_prompts[kept].astype(str).tolist()
        style = cached_style_features(texts, getattr(self, "style_cache_", None))
        query = None if self.query_model_ is None else self.query_context_[index]
        return self._profiles(codes, names, kept, self.labels_[index], style, query)

    def transform_queries(self, queries: list[str], user_id: str = "you") -> UserProfiles:
        """The profile of one user known by ``queries``, without a frame.

        The same as :meth:`transform` of ``DataFrame({"user_id": user_id, "prompt":
        queries})`` (what a recommend request asks, many times a second, where building
        and factorising that frame cost more than the profile).

        Parameters
        ----------
        queries : list of str
            The user's queries (at least one; ``None`` for a vote without a prompt).
        user_id : str
            The profile's user id.

        Returns
        -------
        UserProfiles
            One row.
        """
        check_is_fitted(self, "feature_names_")
        if not queries or not all(isinstance(q, str) for q in queries):
            return self.transform(pd.DataFrame({"user_id": user_id, "prompt": queries}))
        codes = np.zeros(len(queries), dtype=np.intp)
        present = np.ones(len(queries), dtype=bool)
        names = np.asarray([str(user_id)], dtype=object)
        return self._text_profiles(codes, names, present, list(queries))

    def _text_profiles(
        self,
        codes: npt.NDArray[np.intp],
        names: npt.NDArray[np.object_],
        present: npt.NDArray[np.bool_],
        texts: list[str],
        embeddings: Embeddings | None = None,
        progress: Progress | None = None,
    ) -> UserProfiles:
        """The profiles of the users of ``codes`` from the texts of their ``present``
        queries: topics and components, style (each by its cache where installed)."""
        topics, query = self.topics_and_context(texts, embeddings, progress)
        style = cached_style_features(texts, getattr(self, "style_cache_", None))
        return self._profiles(codes, names, present, topics, style, query)

    def topics_and_context(
        self,
        texts: list[str],
        embeddings: Embeddings | None = None,
        progress: Progress | None = None,
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64] | None]:
        """Topic of each query, and its embedding components (None without them).

        Each distinct query is embedded once, for both
        (:func:`features.query_topics.topics_and_components`). Where
        :func:`features.embeddings.cache.cache_embeddings` gave the profiler a
        ``query_cache_``, both are kept by text and a repeated query is looked up
        (unless ``embeddings`` are given: they are used as they are).
        """
        check_is_fitted(self, "feature_names_")
        cache = getattr(self, "query_cache_", None)
        if cache is not None and embeddings is None:
            return cached_topics_and_components(
                self.topic_model_, self.query_model_, texts, cache, progress
            )
        return topics_and_components(
            self.topic_model_, self.query_model_, texts, embeddings, progress
        )

    def prompt_profiles(
        self,
        prompts: list[str],
        people: UserProfiles,
        rows: npt.ArrayLike,
        style_context: Literal["user", "query"] = "user",
    ) -> tuple[UserProfiles, npt.NDArray[np.intp]]:
        """One profile per prompt: its person's, with the prompt's topic and components.

        The context a vote on the prompt was fitted with (:mod:`features.per_prompt`).

        Parameters
        ----------
        prompts : list of str
            The prompts (each non-blank).
        people : UserProfiles
            The people's profiles (:meth:`transform`).
        rows : array_like of int
            ``(len(prompts),)`` row of ``people`` of each prompt's person.
        style_context : {"user", "query"}
            The predictor's (:class:`features.predictor.RatingPredictor`): with
            ``"query"`` the prompt's own style replaces the person's too.

        Returns
        -------
        profiles : UserProfiles
            ``len(prompts)`` rows, each its person's profile with ``topic:`` the prompt's
            topic one-hot and ``query_pc:`` the prompt's components; with ``"query"``
            also ``style_mean:``/``style_rel:`` the prompt's style.
        topics : ndarray of int
            ``(len(prompts),)`` topic of each prompt.
        """
        index = np.asarray(rows, dtype=np.intp)
        if index.shape != (len(prompts),):
            raise ValueError(
                f"Argument 'rows' must have one row per prompt ({len(prompts)}), "
                f"not shape {index.shape}."
            )
        if index.size and (index.min() < 0 or index.max() >= len(people.user_ids)):
            raise ValueError(f"Argument 'rows' must index the {len(people.user_ids)} profiles.")
        topics, components = self.topics_and_context(list(prompts))
        names = people.feature_names
        values = people.values[index].copy()
        topic_columns = people.columns("topic:")
        values[:, topic_columns] = np.eye(topic_columns.size)[topics]
        query_columns = people.columns("query_pc:")
        if components is not None and query_columns.size:
            values[:, query_columns] = components
        if style_context == "query":
            raw = style_features(list(prompts))
            values[:, people.columns("style_mean:")] = raw
            relative = people.columns("style_rel:")
            if relative.size:
                values[:, relative] = self.relative_style(raw, topics)
        ids = np.asarray([f"prompt:{i}" for i in range(len(prompts))], dtype=object)
        return UserProfiles(ids, values, names), np.asarray(topics, dtype=np.intp)

    def relative_style(
        self, style: npt.NDArray[np.float64], topics: npt.NDArray[np.intp]
    ) -> npt.NDArray[np.float64]:
        """Each query's style relative to its topic (``style_rel:``), clipped to 5 sd."""
        check_is_fitted(self, "topic_style_mean_")
        z = (style - self.topic_style_mean_[topics]) / self.topic_style_sd_[topics]
        return np.clip(z, -5.0, 5.0)

    def get_feature_names_out(self, input_features: Any = None) -> npt.NDArray[np.str_]:
        """The profile's column names."""
        check_is_fitted(self, "feature_names_")
        return np.asarray(self.feature_names_)

    def _profiles(
        self,
        codes: npt.NDArray[np.intp],
        names: npt.NDArray[Any],
        present: npt.NDArray[np.bool_],
        topics: npt.NDArray[np.intp],
        style: npt.NDArray[np.float64],
        query: npt.NDArray[np.float64] | None = None,
    ) -> UserProfiles:
        # profilers saved before it have no style_rel
        fitted_relative = hasattr(self, "topic_style_mean_")
        values = profile_values(
            codes,
            len(names),
            present,
            topics,
            style,
            smoothing=float(self.smoothing),
            topic_share=self.topic_share_,
            style_mean=self.style_mean_,
            relative=self.relative_style(style, topics) if fitted_relative else None,
            query=None if query is None else (query, self.query_mean_),
        )
        return UserProfiles(user_ids=names, values=values, feature_names=self.feature_names_)
