"""What every embedding backend of this project is, and how any backend is called.

:class:`ProgressEmbedder` is a BERTopic :class:`~bertopic.backend.BaseEmbedder` whose
``embed`` also takes a ``progress`` and tells it of the queries embedded: every backend
of :mod:`features.embeddings` (:mod:`.minilm`, :mod:`.minilm_onnx`, :mod:`.static`,
:mod:`.tfidf`) and the serving cache of :mod:`.cache` is one. :func:`embed` calls any
backend, ours or BERTopic's, the way it can be called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from bertopic.backend import BaseEmbedder

from ranking.progress import Progress

__all__ = ["ProgressEmbedder", "embed"]


class ProgressEmbedder(BaseEmbedder):
    """A BERTopic backend whose ``embed`` tells a :class:`~ranking.progress.Progress` of
    the stage ``"embedding queries"``, in queries."""

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[Any]:
        """Embed ``documents`` into an ``(n, d)`` array, telling ``progress`` of it."""
        raise NotImplementedError


def embed(
    embedder: BaseEmbedder, documents: Sequence[str], progress: Progress | None = None
) -> npt.NDArray[np.floating[Any]]:
    """``embedder.embed(documents)``, telling ``progress`` of it where the backend can.

    The backends of this project (:class:`ProgressEmbedder`) count the queries they have
    embedded (the stage ``"embedding queries"``); any other BERTopic backend is called as
    BERTopic calls it.
    """
    if isinstance(embedder, ProgressEmbedder):
        return embedder.embed(documents, progress=progress)
    return np.asarray(embedder.embed(list(documents)))
