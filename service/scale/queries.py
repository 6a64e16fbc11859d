"""The query features on a cluster: embeddings on the workers, the fits on the client.

The topic model, profiles and rating predictor need all queries at once and are fitted
on the client by the local path's own step
(:func:`service.pipeline.steps.fit_query_features`); embedding the queries is the costly part,
and it runs on the workers. A MiniLM embedding depends slightly on the other queries in
its batch (padding, and int8 activation scales), so the workers embed exactly the
batches the backend would make for the topic model's own call
(:meth:`features.embeddings.minilm.MiniLMEmbedder.batches`), and the fit then looks the vectors
up by query (``fit(..., embeddings={query: vector})``): the local fit's vectors, topics
and predictor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from service.pipeline.steps import has_prompts
from service.scale import tasks

__all__ = ["PendingEmbeddings", "submit_embeddings"]


@dataclass(frozen=True)
class PendingEmbeddings:
    """Embedding tasks on the cluster: each future embeds one group of batches.

    Attributes
    ----------
    docs : list of str
        The distinct queries the topic model will be fitted on.
    groups : list of list of ndarray
        Positions in ``docs`` of each task's batches.
    futures : list of distributed.Future
        One a group; empty when the backend is fitted on its corpus (``tfidf``), which
        the client then runs itself.
    """

    docs: list[str]
    groups: list[list[npt.NDArray[np.intp]]]
    futures: list[Any]

    def table(self, results: list[list[npt.NDArray[np.float32]]]) -> dict[str, Any] | None:
        """``{query: vector}`` from the gathered ``futures``; None when there were none."""
        if not self.futures:
            return None
        table: dict[str, Any] = {}
        for group, blocks in zip(self.groups, results, strict=True):
            for batch, block in zip(group, blocks, strict=True):
                table.update(zip((self.docs[j] for j in batch), block, strict=True))
        return table


def submit_embeddings(
    client: Any, battles: pd.DataFrame, embedding: str | None, workers: int
) -> PendingEmbeddings | None:
    """Start embedding the voters' distinct prompts on the workers; None without prompts."""
    if not has_prompts(battles):
        return None
    from features.embeddings import default_embedding, make_embedder

    backend = embedding or default_embedding()
    voted = battles["user_id"].notna() & battles["prompt"].notna()
    prompts = battles.loc[voted, "prompt"].astype(str).to_numpy(dtype=object)
    docs: list[str] = np.unique(prompts).tolist()  # the topic model's distinct queries
    embedder = make_embedder(backend)
    if not hasattr(embedder, "batches"):
        return PendingEmbeddings(docs, [], [])
    batches = embedder.batches(docs)
    per_task = max(1, math.ceil(len(batches) / (4 * workers)))
    groups = [batches[i : i + per_task] for i in range(0, len(batches), per_task)]
    futures = [
        client.submit(tasks.embed_batches, backend, [[docs[j] for j in b] for b in group])
        for group in groups
    ]
    return PendingEmbeddings(docs, groups, futures)
