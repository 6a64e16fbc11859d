"""A model2vec model distilled from all-MiniLM-L6-v2 once per machine: the ``static``
backend, which needs no PyTorch at run time once distilled.

The registry of backends is :mod:`features.embeddings`.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from features.embeddings.base import ProgressEmbedder
from features.embeddings.model_files import cache_dir, minilm_path, offline
from ranking.progress import Progress, start

__all__ = ["STATIC_DIMENSIONS", "StaticEmbedder", "distilled_static_model"]

logger = logging.getLogger(__name__)

STATIC_DIMENSIONS = 256


class StaticEmbedder(ProgressEmbedder):
    """A model2vec static model distilled from all-MiniLM-L6-v2 (256 dimensions, unit length).

    The distillation runs once per machine (about 20 seconds on 2 cores) and is cached in
    ``cache_dir() / "static-minilm-256"``; after that, loading takes milliseconds and
    embedding tens of thousands of queries a second.
    """

    def __init__(self) -> None:
        super().__init__()
        self._model: Any = None

    @property
    def name(self) -> str:
        return "static"

    def batches(self, documents: Sequence[str]) -> list[npt.NDArray[np.intp]]:
        """Positions of ``documents`` in batches of 4,096: a static model embeds every
        document alone, so any split gives the vectors of :meth:`embed`."""
        positions = np.arange(len(documents), dtype=np.intp)
        return [positions[i : i + 4096] for i in range(0, positions.size, 4096)]

    def embed(
        self, documents: Sequence[str], verbose: bool = False, *, progress: Progress | None = None
    ) -> npt.NDArray[np.float32]:
        """Embed documents into an ``(n, 256)`` array of unit vectors.

        With ``progress``, batch by batch (:meth:`batches`), telling it of the stage
        ``"embedding queries"``, in queries.
        """
        if self._model is None:
            self._model = _load_static()
        documents = list(documents)
        if progress is None:
            vectors = np.asarray(
                self._model.encode(documents, show_progress_bar=verbose), dtype=np.float32
            )
        else:
            advance = start(progress, "embedding queries", len(documents), "queries")
            blocks = []
            for batch in self.batches(documents):  # in order: the blocks stack up
                blocks.append(self._model.encode([documents[i] for i in batch]))
                advance(batch.size)
            vectors = np.asarray(
                np.concatenate(blocks) if blocks else self._model.encode([]), dtype=np.float32
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None
        return state


@lru_cache(maxsize=1)
def _load_static() -> Any:
    from model2vec import StaticModel

    return StaticModel.from_pretrained(str(distilled_static_model()))


def distilled_static_model(target: Path | None = None) -> Path:
    """Path of the static model distilled from all-MiniLM-L6-v2, distilling it if absent.

    Parameters
    ----------
    target : Path, optional
        Where the model lives; ``cache_dir() / "static-minilm-256"`` by default.

    Returns
    -------
    Path
        A folder that ``model2vec.StaticModel.from_pretrained`` reads.
    """
    target = target or cache_dir() / f"static-minilm-{STATIC_DIMENSIONS}"
    if (target / "config.json").exists():
        return target
    offline()
    from model2vec.distill import distill
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    logger.warning("distilling a static model from all-MiniLM-L6-v2 into %s (once)", target)
    model = distill(model_name=str(minilm_path()), pca_dims=STATIC_DIMENSIONS)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".static-", dir=target.parent))
    try:
        model.save_pretrained(str(staging))
        try:
            staging.rename(target)
        except OSError:  # another process finished first: keep theirs
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
