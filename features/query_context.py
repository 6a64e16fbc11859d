"""What a query is about, as a few dense numbers: principal components of its embedding.

A topic model's hard clusters can miss the directions along which models' strengths vary:
on real Arena prompts the default k-means topics match the publishers' topic groups
poorly. :class:`QueryComponents` keeps, beside the topics, a few principal components of
each query's embedding (fitted on the *distinct* training prompts, so a prompt voted on
40 times counts once), each scaled to unit variance and clipped to 5 sd. The contextual
model (:mod:`ranking.contextual`) is linear in its context, so it can weigh any direction
of the embedding, and a user's mean components are where their queries sit.

:func:`row_vectors` embeds each distinct query once (or looks it up), for the profiler to
share between the topic model and these components.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA
from sklearn.utils.validation import check_is_fitted

from ranking.progress import Progress
from ranking.types import FloatArray

if TYPE_CHECKING:
    from features.profile import UserProfiler, UserProfiles

__all__ = ["QueryComponents", "row_vectors", "user_query_context", "vote_query_context"]


class QueryComponents(BaseEstimator):
    """Standardised principal components of query embeddings.

    Parameters
    ----------
    n_components : int
        Components kept (fewer when there are fewer distinct prompts or dimensions).
    random_state : int
        Seed of the PCA solver.

    Attributes
    ----------
    pca_ : sklearn.decomposition.PCA
    scale_ : ndarray
        Standard deviation of each component over the fitted prompts.
    n_components_ : int
    """

    def __init__(self, n_components: int = 8, whiten: bool = True, random_state: int = 0) -> None:
        self.n_components = n_components
        self.whiten = whiten
        self.random_state = random_state

    def fit(self, vectors: npt.ArrayLike, y: Any = None) -> QueryComponents:
        """Fit on the embeddings of distinct prompts, ``(n, d)``."""
        k = self.n_components
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"Argument 'n_components' must be a positive integer, not {k!r}.")
        x = np.asarray(vectors, dtype=np.float64)
        if x.ndim != 2 or len(x) < 2:
            raise ValueError(
                f"Argument 'vectors' must be 2-d with at least 2 rows, not shape {x.shape}."
            )
        n = max(1, min(int(k), len(x) - 1, x.shape[1]))
        self.pca_ = PCA(n, random_state=self.random_state).fit(x)
        spread = self.pca_.transform(x).std(axis=0)
        if not self.whiten:  # one scale: the average component has unit variance
            spread = np.full_like(spread, np.sqrt(np.mean(spread**2)))
        self.scale_ = np.where(spread > 0, spread, 1.0)
        self.n_components_ = n
        return self

    def transform(self, vectors: npt.ArrayLike) -> FloatArray:
        """``(n, n_components_)`` unit-variance components, clipped to 5 sd."""
        check_is_fitted(self, "pca_")
        x = np.asarray(vectors, dtype=np.float64)
        if len(x) == 0:
            return np.zeros((0, self.n_components_))
        return np.clip(np.asarray(self.pca_.transform(x)) / self.scale_, -5.0, 5.0)

    def get_feature_names_out(self, input_features: Any = None) -> npt.NDArray[np.str_]:
        """``query_pc:<k>`` for each component."""
        check_is_fitted(self, "pca_")
        return np.asarray([f"query_pc:{k}" for k in range(self.n_components_)])


def row_vectors(
    embedder: Any,
    texts: list[str],
    embeddings: Mapping[str, npt.ArrayLike] | npt.ArrayLike | None = None,
    progress: Progress | None = None,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.intp], list[str]]:
    """Embeddings of the distinct ``texts``, each embedded once.

    Parameters
    ----------
    embedder : BERTopic-style backend
        Embeds what ``embeddings`` lacks (:func:`features.embeddings.embed`).
    texts : list of str
        Queries, duplicates allowed.
    embeddings : mapping of str to vector, or array of shape (len(texts), d), optional
        Precomputed embeddings by text, or one row per query.
    progress : Progress, optional
        Told of the stage ``"embedding queries"`` of what is embedded.

    Returns
    -------
    vectors : ndarray of float32
        ``(n_distinct, d)``.
    inverse : ndarray of int
        ``(len(texts),)`` row of ``vectors`` of each text.
    docs : list of str
        The distinct texts, in the rows' order.
    """
    from features.embeddings import embed

    distinct, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    docs = [str(d) for d in distinct]
    if embeddings is not None and not isinstance(embeddings, Mapping):
        rows = np.asarray(embeddings, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise ValueError(
                f"Argument 'embeddings' must have one row per query ({len(texts)}), "
                f"not shape {rows.shape}."
            )
        first = np.zeros(len(docs), dtype=np.intp)
        first[inverse[::-1]] = np.arange(len(texts))[::-1]
        return rows[first], inverse.astype(np.intp), docs
    table: Mapping[str, npt.ArrayLike] = embeddings if embeddings is not None else {}
    found: list[Any] = [table.get(doc) for doc in docs]
    missing = [i for i, row in enumerate(found) if row is None]
    if missing:
        computed = np.asarray(embed(embedder, [docs[i] for i in missing], progress), np.float32)
        for position, i in enumerate(missing):
            found[i] = computed[position]
    if not found:
        return np.zeros((0, 0), dtype=np.float32), inverse.astype(np.intp), docs
    vectors = np.stack([np.asarray(row, dtype=np.float32) for row in found])
    return vectors, inverse.astype(np.intp), docs


def vote_query_context(profiler: UserProfiler, present: npt.NDArray[np.bool_]) -> FloatArray:
    """What each training vote's query is about: its topic (one-hot), then its components.

    ``present`` marks the fitted rows with a prompt; the others get the population's
    topic shares and mean components.
    """
    topics = np.tile(profiler.topic_share_, (len(present), 1))
    topics[present] = np.eye(profiler.topic_share_.size)[profiler.labels_]
    if getattr(profiler, "query_model_", None) is None:  # profilers saved before them
        return topics
    query = np.tile(profiler.query_mean_, (len(present), 1))
    query[present] = profiler.query_context_
    return np.hstack([topics, query])


def user_query_context(profiles: UserProfiles) -> FloatArray:
    """Users' counterpart of :func:`vote_query_context`: topic shares, mean components."""
    return profiles.to_frame().filter(regex="^(topic|query_pc):").to_numpy()
