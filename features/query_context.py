"""What a query is about, as a few dense numbers: principal components of its embedding.

A topic model's hard clusters can miss the directions along which models' strengths vary:
on real Arena prompts the default k-means topics match the publishers' topic groups
poorly. :class:`QueryComponents` keeps, beside the topics, a few principal components of
each query's embedding (fitted on the *distinct* training prompts, so a prompt voted on
40 times counts once), each scaled to unit variance and clipped to 5 sd. The contextual
model (:mod:`ranking.contextual`) is linear in its context, so it can weigh any direction
of the embedding, and a user's mean components are where their queries sit.

The vectors come from :func:`features.query_vectors.distinct_vectors`, each distinct query
embedded once and shared with the topic model; :mod:`features.contexts` makes the
contextual model's contexts of them.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA
from sklearn.utils.validation import check_is_fitted

from features.projection import pca_transform
from ranking.types import FloatArray

__all__ = ["QueryComponents"]

logger = logging.getLogger(__name__)


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
        if n < k:
            logger.warning(
                "query components: %d distinct prompts of %d dimensions, so %d of %d components",
                len(x),
                x.shape[1],
                n,
                k,
            )
        self.pca_ = PCA(n, random_state=self.random_state).fit(x)
        spread = self.pca_.transform(x).std(axis=0)
        if not self.whiten:  # one scale: the average component has unit variance
            spread = np.full_like(spread, np.sqrt(np.mean(spread**2)))
        # prompts that embed alike (two of stop words only, by TF-IDF) leave a component
        # of rounding errors, which unit variance would blow up: it keeps scale 1
        self.scale_ = np.where(spread > 1e-9 * spread.max(initial=0.0), spread, 1.0)
        self.n_components_ = n
        return self

    def transform(self, vectors: npt.ArrayLike) -> FloatArray:
        """``(n, n_components_)`` unit-variance components, clipped to 5 sd."""
        check_is_fitted(self, "pca_")
        x = np.asarray(vectors, dtype=np.float64)
        if len(x) == 0:
            return np.zeros((0, self.n_components_))
        return np.clip(pca_transform(self.pca_, x) / self.scale_, -5.0, 5.0)

    def get_feature_names_out(self, input_features: Any = None) -> npt.NDArray[np.str_]:
        """``query_pc:<k>`` for each component."""
        check_is_fitted(self, "pca_")
        return np.asarray([f"query_pc:{k}" for k in range(self.n_components_)])
