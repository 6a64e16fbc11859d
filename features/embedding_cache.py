"""A bounded cache of query embeddings by text, for serving: a repeated query is free.

:class:`CachedEmbedder` wraps an embedding backend (:mod:`features.embeddings`): the
texts it has seen are looked up, the others embedded in one call and kept, the least
recently used dropped beyond ``max_items``. Only the service installs it
(:meth:`features.predictor.RatingPredictor.cache_embeddings`), so a fit never depends on
what was embedded before. A cached vector is the one computed when the text was first
seen, in that call's batch: at full precision within about 1e-6 of embedding it again
among other texts (a vector depends on its batch mates only through padding); with the
int8 backend, whose activation scales are per batch, up to about 0.1 apart.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from bertopic.backend import BaseEmbedder

from ranking.progress import Progress

__all__ = ["CacheInfo", "CachedEmbedder", "cache_embeddings"]


@dataclass(frozen=True)
class CacheInfo:
    """How a :class:`CachedEmbedder` has done: texts found, texts embedded, texts kept."""

    hits: int
    misses: int
    size: int
    max_items: int


class CachedEmbedder(BaseEmbedder):
    """``embedder`` with a least-recently-used cache of ``max_items`` vectors by text.

    Thread-safe: the service embeds from several threads at once. Two threads missing
    the same text may both embed it; the second vector kept is as good as the first.

    Parameters
    ----------
    embedder : BaseEmbedder
        A backend of :mod:`features.embeddings` (its ``embed`` and ``name``).
    max_items : int
        The most vectors kept; at least 1.
    """

    def __init__(self, embedder: Any, max_items: int = 10_000) -> None:
        super().__init__()
        if max_items < 1:
            raise ValueError(f"Argument 'max_items' must be at least 1, not {max_items}.")
        self.embedder = embedder
        self.max_items = max_items
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def name(self) -> str:
        """The wrapped backend's name (what a saved topic model records)."""
        return str(self.embedder.name)

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embeddings of ``documents``, ``(n, d)``: cached ones looked up, the rest embedded."""
        from features.embeddings import embed

        documents = [str(d) for d in documents]
        with self._lock:
            found = {d: self._vectors.get(d) for d in dict.fromkeys(documents)}
            for text, vector in found.items():
                if vector is not None:
                    self._vectors.move_to_end(text)
        missing = [text for text, vector in found.items() if vector is None]
        if missing:
            computed = np.asarray(embed(self.embedder, missing, progress), dtype=np.float32)
            with self._lock:
                for text, vector in zip(missing, computed, strict=True):
                    found[text] = vector
                    self._vectors[text] = vector
                    self._vectors.move_to_end(text)
                while len(self._vectors) > self.max_items:
                    self._vectors.popitem(last=False)
        with self._lock:
            self._hits += len(documents) - len(missing)
            self._misses += len(missing)
        if not documents:
            return np.zeros((0, 0), dtype=np.float32)
        rows = [found[d] for d in documents]
        return np.stack([row for row in rows if row is not None]).astype(np.float32, copy=False)

    def cache_info(self) -> CacheInfo:
        """Texts found and embedded so far (a text repeated in one call counts each time)."""
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._vectors), self.max_items)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its vectors or its lock (a worker starts with an empty cache)."""
        state = self.__dict__.copy()
        state["_vectors"] = OrderedDict()
        state["_lock"] = None
        state["_hits"] = state["_misses"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def cache_embeddings(predictor: Any, max_items: int = 10_000) -> CachedEmbedder | None:
    """Give a fitted rating predictor's topic model a :class:`CachedEmbedder`.

    Every query the predictor embeds from then on (its predictions from queries, the
    service's priors of personal boards) goes through the one cache. Installing it again
    keeps the cache there (its size set anew).

    Parameters
    ----------
    predictor : RatingPredictor
        Fitted; its ``profiler_.topic_model_.embedder_`` (fitted attributes) is wrapped.
    max_items : int
        The most vectors kept; 0 takes the cache away.

    Returns
    -------
    CachedEmbedder or None
        The cache, or None with ``max_items`` 0 or a predictor without a topic model.
    """
    model = getattr(getattr(predictor, "profiler_", None), "topic_model_", None)
    embedder = getattr(model, "embedder_", None)
    if model is None or embedder is None:
        return None
    inner = embedder.embedder if isinstance(embedder, CachedEmbedder) else embedder
    if max_items == 0:
        model.embedder_ = inner
        return None
    if isinstance(embedder, CachedEmbedder):
        embedder.max_items = max_items
        return embedder
    model.embedder_ = CachedEmbedder(inner, max_items)
    return model.embedder_
