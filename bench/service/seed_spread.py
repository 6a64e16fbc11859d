"""Where a full fit's seed moves its predicted ratings (issue 33).

Bench Y (:mod:`bench.service.refit`) shows two full fits of the same votes with seeds 0
and 1 farther apart than the predictor's own cross-validation noise. This script fits a
simulated arena's votes several times and says which of the seed's draws does it::

    PYTHONPATH=. python -m bench.service.seed_spread [USERS]

``USERS`` (default 20,000, 20 votes each, about 350,000 distinct prompts: above the topic
model's sample of :data:`features.topic_sample.MAX_FIT_DOCUMENTS`) simulated users are
fitted with TF-IDF embeddings and seed 0, then with seed 1: as it is, with the topic
model's sample of prompts kept (seed 0's), with its k-means starts kept, and twice each
(seeds 0 and 1) with twenty k-means starts rather than three and with as many topics as
the simulator writes about (8, not 10). Each line prints the median and largest absolute
difference of every user's predicted ratings (Elo points) from the seed-0 fit's (or
between the two fits of a variant), after the predictor's cross-validation noise. A
diagnostic, run by hand: the draws are changed by patching the topic model's sample and
clusterer.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np

import features.topic_clusters as topic_clusters
import features.topics as topics
from bench.service.refit import _predicted, gap_text
from data.simulate import simulate
from features.topic_sample import fit_sample
from service.pipeline import FitConfig, fit_all

__all__ = ["main"]

#: Topics the simulator's prompts are written about (:data:`data.prompts.TOPICS`).
SIMULATED_TOPICS = 8


@contextmanager
def _draws(
    sample_seed: int | None = None, kmeans_seed: int | None = None, n_init: int = 3
) -> Iterator[None]:
    """Fits inside draw the topic model's sample with ``sample_seed`` and start k-means
    ``n_init`` times from ``kmeans_seed`` (None: the fit's own seed for either)."""
    from sklearn.cluster import KMeans

    def sample(n_docs: int, limit: int | None, seed: int) -> Any:
        return fit_sample(n_docs, limit, seed if sample_seed is None else sample_seed)

    def clusterer(sizes: Any, random_state: int) -> Any:
        seed = random_state if kmeans_seed is None else kmeans_seed
        return KMeans(sizes.n_topics, n_init=n_init, random_state=seed)

    with (
        mock.patch.object(topics, "fit_sample", sample),
        mock.patch.object(topic_clusters, "make_clusterer", clusterer),
    ):
        yield


def main(users: int = 20_000) -> None:
    """Fit ``users`` simulated users' votes with each draw changed; print the spreads."""
    battles = simulate(users, 20, 15, rng=0).battles
    print(f"{len(battles):,} votes, {battles['prompt'].nunique():,} distinct prompts", flush=True)

    def predicted(seed: int, n_topics: int = FitConfig.n_topics, **draws: Any) -> np.ndarray:
        started = time.perf_counter()
        with _draws(**draws):
            result = fit_all(battles, FitConfig(embedding="tfidf", seed=seed, n_topics=n_topics))
        print(f"  (a fit: {time.perf_counter() - started:.0f} s)", flush=True)
        return _predicted(result)

    first = fit_all(battles, FitConfig(embedding="tfidf", seed=0))  # as plb fit draws
    base = _predicted(first)
    noise = np.abs(base - first.predictor.training_predictions_)
    print(f"the predictor's CV noise: {gap_text(noise)}", flush=True)
    del first
    variants = {
        "seed 1 (every draw)": (predicted(1), base),
        "seed 1, the sample kept (k-means starts only)": (predicted(1, sample_seed=0), base),
        "seed 1, the k-means starts kept (sample only)": (predicted(1, kmeans_seed=0), base),
        "seeds 0 and 1, twenty k-means starts": (predicted(0, n_init=20), predicted(1, n_init=20)),
        f"seeds 0 and 1, {SIMULATED_TOPICS} topics": (
            predicted(0, SIMULATED_TOPICS),
            predicted(1, SIMULATED_TOPICS),
        ),
    }
    for name, (one, other) in variants.items():
        print(f"{name}: {gap_text(np.abs(one - other))}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
