"""The topic model: BERTopic with injected, measured sub-models, as a scikit-learn estimator.

:class:`TopicModel` embeds each distinct query (:mod:`features.embeddings`), reduces the
embeddings (PCA or UMAP), clusters them (k-means or HDBSCAN), and describes each cluster
by its top words (class-based TF-IDF over distinct prompts, :mod:`features.topic_words`:
no stop words of common languages or code, no identifiers, no word of fewer than
``min_df`` prompts). Every query gets a topic: HDBSCAN's outliers are
given the topic whose centroid embedding is most similar (cosine), during fit and for
new queries.

With many distinct prompts (more than ``max_fit_documents``, 100,000 by default), the
reducer, the clusterer and the top words are fitted on a random sample of them, and the
fitted model then gives every other prompt its topic (:mod:`features.topic_sample`).

The defaults (:data:`features.topic_settings.DEFAULTS`) are the choice measured in
``bench/features/topics.py``: see the README's "Topics" section for the table behind them.
BERTopic is built and fitted by :mod:`features.topic_clusters`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from features.embeddings import default_embedding
from features.persistence import Folder
from features.query_vectors import distinct_vectors
from features.topic_clusters import centroids, cluster_topics, nearest_topics, new_bertopic
from features.topic_labels import name_topic
from features.topic_sample import MAX_FIT_DOCUMENTS, fit_sample, predict_in_batches
from features.topic_settings import DEFAULTS, as_queries, check_topic_settings
from features.topic_sizes import topic_sizes, words_min_df
from features.topic_words import DEFAULT_MIN_DF, describe_topics
from ranking.progress import Progress, start

__all__ = ["Embeddings", "Topic", "TopicModel"]

logger = logging.getLogger(__name__)

_FOLDER = Folder("topic_model.joblib", "topics.json", "plb-topic-model/1", "topic model")

#: Precomputed embeddings: one row per query, or a table of vectors by query text.
Embeddings = npt.ArrayLike | Mapping[str, npt.ArrayLike]


@dataclass(frozen=True)
class Topic:
    """One topic: its id, how many training queries it holds, and its top words."""

    topic: int
    size: int
    share: float
    words: tuple[str, ...]

    @property
    def label(self) -> str:
        """A readable name: the first four top words."""
        return ", ".join(self.words[:4]) or f"topic {self.topic}"

    @property
    def name(self) -> str:
        """The name a person would use ("cooking"), from a curated list by the top
        words, or its first two words (:func:`features.topic_labels.name_topic`)."""
        return name_topic(self.words)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (SPEC ``GET /v1/topics``), with ``label`` and ``name``."""
        return {**asdict(self), "words": list(self.words), "label": self.label, "name": self.name}


class TopicModel(TransformerMixin, BaseEstimator):
    """Topics of queries: BERTopic over offline sentence embeddings.

    Parameters
    ----------
    embedding : {"minilm", "minilm-int8", "minilm-onnx", "static", "tfidf"} or None
        Embedding backend (:func:`features.embeddings.make_embedder`); None picks
        :func:`features.embeddings.default_embedding`.
    reducer : {"pca", "umap"}
        Dimension reduction before clustering.
    clusterer : {"kmeans", "hdbscan"}
        Clustering of the reduced embeddings. HDBSCAN chooses the number of topics itself,
        and ``n_topics`` then caps it (BERTopic merges the most similar topics).
    n_topics : int
        Number of topics (k-means), or the most kept (HDBSCAN).
    n_components : int
        Dimensions kept by the reducer (UMAP uses at most 5).
    min_topic_size : int
        Smallest HDBSCAN cluster.
    top_n_words : int
        Words kept per topic.
    min_df : int
        Distinct prompts, of the corpus and of the topic, that must contain a word
        before it may name the topic (a prompt asked many times counts once).
    random_state : int
        Seed of every randomised step, the sample of ``max_fit_documents`` included.
    max_fit_documents : int or None
        Distinct prompts the reducer, the clusterer and the top words are fitted on at
        most: where there are more, a random sample of this many (drawn with
        ``random_state``), and the fitted model gives the others their topics, batch by
        batch. None fits on every prompt. The default,
        :data:`features.topic_sample.MAX_FIT_DOCUMENTS` (100,000), is ten times the
        sample where quality stopped improving in benchmark X (``bench/features/topic_sample.py``)
        and leaves any fit of no more distinct prompts exactly as it was.

    Attributes
    ----------
    bertopic_ : bertopic.BERTopic
        The fitted topic model.
    n_topics_ : int
        Number of topics found; topic ids are ``0 .. n_topics_ - 1``.
    topics_ : list of Topic
        Size and top words of each topic.
    labels_ : ndarray of int
        Topic of each query given to ``fit``.
    n_fit_documents_ : int
        Distinct prompts the topics were fitted on (all, or the sample).
    """

    def __init__(
        self,
        embedding: str | None = None,
        reducer: str = DEFAULTS["reducer"],
        clusterer: str = DEFAULTS["clusterer"],
        n_topics: int = DEFAULTS["n_topics"],
        n_components: int = DEFAULTS["n_components"],
        min_topic_size: int = 10,
        top_n_words: int = 10,
        random_state: int = 0,
        min_df: int = DEFAULT_MIN_DF,
        max_fit_documents: int | None = MAX_FIT_DOCUMENTS,
    ) -> None:
        self.embedding = embedding
        self.reducer = reducer
        self.clusterer = clusterer
        self.n_topics = n_topics
        self.n_components = n_components
        self.min_topic_size = min_topic_size
        self.top_n_words = top_n_words
        self.random_state = random_state
        self.min_df = min_df
        self.max_fit_documents = max_fit_documents

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A model saved before ``min_df`` existed loads with the default (used by fit only).
        state.setdefault("min_df", DEFAULT_MIN_DF)
        state.setdefault("max_fit_documents", None)  # fitted on every prompt before it
        super().__setstate__(state)

    # -- fitting ---------------------------------------------------------------------------

    def fit(
        self,
        X: Any,
        y: Any = None,
        embeddings: Embeddings | None = None,
        progress: Progress | None = None,
    ) -> TopicModel:
        """Fit topics to queries.

        Parameters
        ----------
        X : sequence of str
            Queries; duplicates are fitted once but labelled each.
        y : ignored
        embeddings : array of shape (len(X), d), or mapping of str to vector, optional
            Precomputed embeddings of ``X`` from the same backend (skips embedding): one
            row per query, or a table by query text, whose missing queries the backend
            embeds. The table is used, not kept.
        progress : Progress, optional
            Told of the stages ``"embedding queries"`` (the distinct queries, unless
            precomputed), ``"topics"`` (the clustering) and, after a fit on a sample
            (``max_fit_documents``), ``"topics of the other prompts"``.

        Returns
        -------
        TopicModel
            ``self``, fitted.
        """
        self._check_params()
        queries = as_queries(X)
        if not queries:
            raise ValueError("Argument 'queries' must hold at least one query, not 0.")
        embedder = self.new_embedder()
        vectors, inverse, docs = distinct_vectors(embedder, queries, embeddings, progress)
        return self.fit_distinct(docs, vectors, inverse, embedder=embedder, progress=progress)

    def new_embedder(self) -> Any:
        """A new backend of ``embedding`` (:func:`features.embeddings.make_embedder`): what
        :meth:`fit` embeds with, and keeps as ``embedder_``."""
        from features.embeddings import make_embedder

        self._check_params()
        return make_embedder(self.embedding or default_embedding())

    def fit_distinct(
        self,
        docs: list[str],
        vectors: npt.NDArray[np.floating[Any]],
        inverse: npt.ArrayLike,
        *,
        embedder: Any = None,
        progress: Progress | None = None,
    ) -> TopicModel:
        """Fit topics to distinct queries already embedded: :meth:`fit` after its embedding.

        Parameters
        ----------
        docs : list of str
            The distinct queries, as :func:`features.query_vectors.distinct_vectors`
            gives them (sorted).
        vectors : ndarray of shape (len(docs), d)
            Their embeddings by ``embedder``.
        inverse : array of int
            The row of ``docs`` of each query (``labels_`` follows it).
        embedder : BERTopic-style backend, optional
            The backend that embedded ``vectors`` (a TF-IDF one is fitted by it), kept
            for new queries; :meth:`new_embedder` when omitted.
        progress : Progress, optional
            Told of the stages of :meth:`fit` after the embedding.

        Returns
        -------
        TopicModel
            ``self``, fitted.
        """
        self._check_params()
        if not docs:
            raise ValueError("Argument 'docs' must hold at least one query, not 0.")
        if vectors.ndim != 2 or vectors.shape[0] != len(docs):
            raise ValueError(
                f"Argument 'vectors' must have one row per query ({len(docs)}), "
                f"not shape {vectors.shape}."
            )
        self.embedder_ = embedder if embedder is not None else self.new_embedder()
        self.labels_ = self._fit_topics(docs, vectors, progress)[np.asarray(inverse, np.intp)]
        self.topics_ = self._describe(self.labels_)
        return self

    def _fit_topics(
        self,
        docs: list[str],
        vectors: npt.NDArray[np.floating[Any]],
        progress: Progress | None,
    ) -> npt.NDArray[np.intp]:
        """The topic of each of the distinct ``docs``: fitted on them, or on a sample of
        ``max_fit_documents`` and predicted for the others."""
        chosen = fit_sample(len(docs), self.max_fit_documents, self.random_state)
        if chosen is None:
            self.n_fit_documents_ = len(docs)
            return self._fit_sample(docs, vectors, progress)
        logger.info("topics: fitted on %d of %d distinct prompts", chosen.size, len(docs))
        self.n_fit_documents_ = int(chosen.size)
        topics = self._fit_sample([docs[i] for i in chosen], vectors[chosen], progress)
        labels = np.empty(len(docs), dtype=np.intp)
        labels[chosen] = topics
        others = np.ones(len(docs), dtype=bool)
        others[chosen] = False
        rest = np.flatnonzero(others)
        labels[rest] = predict_in_batches(self._predict, docs, vectors, rest, progress)
        return labels

    def _fit_sample(
        self,
        docs: list[str],
        vectors: npt.NDArray[np.floating[Any]],
        progress: Progress | None,
    ) -> npt.NDArray[np.intp]:
        """Fit BERTopic, the centroids and the top words on ``docs``; their topics."""
        advance = start(progress, "topics", 1, "fits")
        model = self._bertopic(docs, vectors.shape[1])
        topics = cluster_topics(model, docs, vectors)
        self.centroids_ = centroids(vectors, topics)
        self.bertopic_ = model
        self.n_topics_ = int(topics.max()) + 1
        min_df = words_min_df(self.min_df, len(docs), self.n_topics_)
        words = describe_topics(docs, topics, self.n_topics_, min_df=min_df, top_n=self.top_n_words)
        model.topic_representations_ = dict(enumerate(words))  # what get_topic answers
        advance(1)
        return topics

    def _check_params(self) -> None:
        check_topic_settings(self.get_params(deep=False))

    def _bertopic(self, docs: list[str], width: int) -> Any:
        """BERTopic (:func:`features.topic_clusters.new_bertopic`) of the asked sizes,
        clipped to what the distinct ``docs`` of ``width`` allow
        (:func:`features.topic_sizes.topic_sizes`)."""
        sizes = topic_sizes(
            reducer=self.reducer,
            clusterer=self.clusterer,
            n_topics=self.n_topics,
            n_components=self.n_components,
            min_topic_size=self.min_topic_size,
            n_docs=len(docs),
            width=width,
        )
        return new_bertopic(
            self.embedder_,
            sizes,
            docs,
            random_state=self.random_state,
            top_n_words=self.top_n_words,
        )

    def _describe(self, labels: npt.NDArray[np.intp]) -> list[Topic]:
        sizes = np.bincount(labels, minlength=self.n_topics_)
        return [
            Topic(
                topic=topic,
                size=int(sizes[topic]),
                share=float(sizes[topic] / max(1, len(labels))),
                words=tuple(word for word, _ in self.bertopic_.get_topic(topic) or [] if word),
            )
            for topic in range(self.n_topics_)
        ]

    # -- using a fitted model --------------------------------------------------------------

    def predict(
        self, X: Any, embeddings: Embeddings | None = None, progress: Progress | None = None
    ) -> npt.NDArray[np.intp]:
        """Topic id of each query, in ``0 .. n_topics_ - 1``.

        Parameters
        ----------
        X : sequence of str
            Queries.
        embeddings : array of shape (len(X), d), or mapping of str to vector, optional
            Their precomputed embeddings from the fitted backend (see :meth:`fit`).
        progress : Progress, optional
            Told of the stage ``"embedding queries"``, unless precomputed.
        """
        check_is_fitted(self, "bertopic_")
        queries = as_queries(X)
        if not queries:
            return np.zeros(0, dtype=np.intp)
        vectors, inverse, docs = distinct_vectors(self.embedder_, queries, embeddings, progress)
        return self._predict(docs, vectors)[inverse]

    def predict_distinct(
        self, docs: list[str], vectors: npt.NDArray[np.floating[Any]]
    ) -> npt.NDArray[np.intp]:
        """Topic id of each of some distinct queries already embedded.

        Parameters
        ----------
        docs : list of str
            The queries.
        vectors : ndarray of shape (len(docs), d)
            Their embeddings by the fitted backend (``embedder_``).
        """
        check_is_fitted(self, "bertopic_")
        if not docs:
            return np.zeros(0, dtype=np.intp)
        return self._predict(docs, vectors)

    def _predict(
        self, docs: list[str], vectors: npt.NDArray[np.floating[Any]]
    ) -> npt.NDArray[np.intp]:
        topics = np.asarray(self.bertopic_.transform(docs, vectors)[0], dtype=np.intp)
        return nearest_topics(vectors, topics, self.centroids_)

    def transform(self, X: Any, embeddings: Embeddings | None = None) -> npt.NDArray[np.float64]:
        """One-hot topic membership, shape ``(len(X), n_topics_)``."""
        topics = self.predict(X, embeddings)
        return np.eye(self.n_topics_)[topics]

    def get_feature_names_out(self, input_features: Any = None) -> npt.NDArray[np.str_]:
        """``topic_<id>`` for each column of :meth:`transform`."""
        check_is_fitted(self, "bertopic_")
        return np.asarray([f"topic_{topic}" for topic in range(self.n_topics_)])

    def topic_table(self) -> pd.DataFrame:
        """The topics as a frame: topic, size, share, label, words."""
        check_is_fitted(self, "bertopic_")
        return pd.DataFrame([topic.to_dict() for topic in self.topics_])

    # -- persistence -----------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Save into the folder ``path`` (created): the model, and ``topics.json`` to read.

        The embedding backend is saved by name and settings (a fitted TF-IDF pipeline
        whole); network weights are loaded again from their package or cache by
        :meth:`load`.
        """
        check_is_fitted(self, "bertopic_")
        summary = {
            "params": self.get_params(),
            "embedding": self.embedder_.name,
            "topics": [topic.to_dict() for topic in self.topics_],
        }
        return _FOLDER.save(self, path, summary)

    @classmethod
    def load(cls, path: str | Path) -> TopicModel:
        """Load a model written by :meth:`save`.

        Raises
        ------
        ValueError
            If ``path`` holds no topic model of this format.
        """
        return _FOLDER.load(cls, path)
