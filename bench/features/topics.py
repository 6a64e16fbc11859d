"""Benchmark D (issue 4): topic recovery, speed and cold-start latency of the topic model.

The corpus is the simulator's distinct prompts, whose true topic is known. For every
embedding backend, the queries are embedded once (timed), then every reducer/clusterer
pair is fitted on those embeddings (timed) and scored against the true topics by the
adjusted Rand index (ARI) and normalised mutual information (NMI). Fit time per 1,000
queries is embedding plus clustering; transform time per 1,000 is embedding plus
``TopicModel.predict`` on unseen queries. The reference of the ratio column is the
full-precision MiniLM backend with the same reducer and clusterer.

Then the default model alone: its ARI over several numbers of topics and corpora
(benchmark D, ``run``), and, as benchmark E (``run_scale``), a fit on 100,000 queries and
20 new queries topic-labelled in a warm process, each beside the same model with the
previous default embedding (``minilm-int8``) in the same run.

Benchmark K, the same questions on real Arena prompts, is :mod:`bench.features.topics_real`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from bench.common import Row, best_of, error_text, make_row
from data.simulate import simulate
from features.embeddings import BACKENDS, make_embedder
from features.topic_settings import CLUSTERERS, DEFAULTS, REDUCERS
from features.topics import TopicModel

__all__ = ["cluster_scores", "per_thousand", "run", "run_scale"]

logger = logging.getLogger("bench")

ARI_GOAL = 0.6
FIT_GOAL_S = 300.0
TRANSFORM_GOAL_S = 0.1
REFERENCE = "minilm"


@dataclass(frozen=True)
class _Plan:
    grid_queries: int
    held_out: int
    large_queries: int
    topic_counts: tuple[int, ...]
    seeds: tuple[int, ...]


_FULL = _Plan(10_000, 1_000, 100_000, (6, 8, 10, 12, 16), (0, 1, 2))
#: Quick: every backend, reducer and clusterer and every kind of row, on fewer prompts
#: (the embedding and UMAP's fits grow with them) and one number of topics.
_QUICK = _Plan(150, 30, 500, (8,), (0,))


def _corpus(n_queries: int, seed: int) -> tuple[list[str], np.ndarray]:
    """``n_queries`` distinct simulated prompts and their true topics."""
    n_users = max(20, n_queries // 40)
    battles = simulate(n_users, 50, 15, rng=seed).battles
    distinct = battles.drop_duplicates("prompt")
    order = np.random.default_rng(seed).permutation(len(distinct))[:n_queries]
    chosen = distinct.iloc[order]
    return chosen["prompt"].tolist(), chosen["topic"].astype(str).to_numpy()


def cluster_scores(truth: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """ARI and NMI of ``labels`` against ``truth``."""
    return (
        float(adjusted_rand_score(truth, labels)),
        float(normalized_mutual_info_score(truth, labels)),
    )


def per_thousand(seconds: float, n: int) -> float:
    """``seconds`` for ``n`` items, per 1,000 of them."""
    return seconds / n * 1000.0


def _grid_rows(plan: _Plan, quick: bool) -> list[Row]:
    docs, truth = _corpus(plan.grid_queries + plan.held_out, seed=0)
    train, test = docs[: plan.grid_queries], docs[plan.grid_queries :]
    truth = truth[: plan.grid_queries]
    label = f"simulator: {len(train):,} distinct prompts, 8 true topics, k-means k = 8"
    results: dict[tuple[str, str, str], dict[str, float]] = {}
    errors: dict[tuple[str, str, str], str] = {}
    for backend in BACKENDS:
        try:
            embedder = make_embedder(backend)
            embedder.embed(train[:8])  # load the weights (and distil once) outside the timer
            start = time.perf_counter()
            vectors = embedder.embed(train)
            embed_s = time.perf_counter() - start
        except Exception as exc:  # a backend that cannot run here is a row, not a crash
            for reducer in REDUCERS:
                for clusterer in CLUSTERERS:
                    errors[(backend, reducer, clusterer)] = error_text(exc)
            continue
        for reducer in REDUCERS:
            for clusterer in CLUSTERERS:
                key = (backend, reducer, clusterer)
                logger.info("topics: %s", "/".join(key))
                model = TopicModel(backend, reducer, clusterer, n_topics=8)
                start = time.perf_counter()
                if backend == "tfidf":  # a pipeline fitted on the corpus: the model embeds
                    model.fit(train)
                    fit_s = time.perf_counter() - start
                else:
                    model.fit(train, embeddings=vectors)
                    fit_s = embed_s + time.perf_counter() - start
                start = time.perf_counter()
                model.predict(test)
                transform_s = time.perf_counter() - start
                ari, nmi = cluster_scores(truth, model.labels_)
                results[key] = {
                    "ari": ari,
                    "nmi": nmi,
                    "fit": per_thousand(fit_s, len(train)),
                    "transform": per_thousand(transform_s, len(test)),
                    "topics": model.n_topics_,
                }
    rows = []
    for key in sorted(set(results) | set(errors)):
        backend, reducer, clusterer = key
        what = f"topics: {backend} + {reducer} + {clusterer}"
        if key in errors:
            rows.append(make_row(what, label, ours="error", notes=errors[key]))
            continue
        got = results[key]
        reference = results.get((REFERENCE, reducer, clusterer))
        rows.append(
            make_row(
                what,
                label,
                ours=got["fit"],
                reference=None if reference is None else reference["fit"],
                goal=f"ARI ≥ {ARI_GOAL}",
                met=None if quick else got["ari"] >= ARI_GOAL,
                notes=(
                    f"ARI {got['ari']:.3f}, NMI {got['nmi']:.3f}, {got['topics']} topics; "
                    f"ours/reference: fit s per 1,000 queries; transform "
                    f"{got['transform']:.3f} s per 1,000"
                ),
            )
        )
    return rows


def _topic_count_rows(plan: _Plan) -> list[Row]:
    rows = []
    embedder = make_embedder(DEFAULTS["embedding"])
    corpora = [_corpus(plan.grid_queries, seed) for seed in plan.seeds]
    vectors = [embedder.embed(docs) for docs, _ in corpora]
    for k in plan.topic_counts:
        aris = []
        for (docs, truth), embedded in zip(corpora, vectors, strict=True):
            model = TopicModel(n_topics=k).fit(docs, embeddings=embedded)
            aris.append(cluster_scores(truth, model.labels_)[0])
        rows.append(
            make_row(
                f"default model, n_topics = {k}",
                f"simulator: {plan.grid_queries:,} prompts × {len(plan.seeds)} seeds, 8 true",
                ours=f"ARI {np.mean(aris):.3f}",
                notes="per seed " + ", ".join(f"{a:.3f}" for a in aris),
            )
        )
    return rows


#: What benchmark E sets the default embedding beside: the default before ONNX Runtime.
LARGE_REFERENCE = "minilm-int8"


@dataclass(frozen=True)
class _Large:
    """One topic model fitted on the large corpus, and its warm transforms."""

    fit_s: float
    scores: tuple[float, float]  # ARI, NMI against the simulator's topics
    n_topics: int
    warm_s: list[float]  # seconds of each batch of 20 new queries


def _fit_large(docs: list[str], truth: np.ndarray, embedding: str | None) -> _Large:
    """Fit the default model with ``embedding`` on ``docs``, then label 10 batches of 20."""
    start = time.perf_counter()
    model = TopicModel(embedding).fit(docs)
    fit_s = time.perf_counter() - start
    new, _ = _corpus(200, seed=4)
    model.predict(new[:20])  # warm
    batches = [new[i : i + 20] for i in range(0, 200, 20)]
    times = [best_of(partial(model.predict, batch), repeat=1)[0] for batch in batches]
    return _Large(fit_s, cluster_scores(truth, model.labels_), model.n_topics_, times)


def _large_rows(plan: _Plan, quick: bool) -> list[Row]:
    docs, truth = _corpus(plan.large_queries, seed=3)
    label = f"simulator: {len(docs):,} distinct prompts"
    ours = _fit_large(docs, truth, None)
    reference = _fit_large(docs, truth, LARGE_REFERENCE)
    defaults = ", ".join(f"{key} {value}" for key, value in DEFAULTS.items())
    warm_s, warm_reference_s = float(np.median(ours.warm_s)), float(np.median(reference.warm_s))
    return [
        make_row(
            "default model: fit (embed, reduce, cluster, describe)",
            label,
            ours=ours.fit_s,
            reference=reference.fit_s,
            goal=f"≤ {FIT_GOAL_S:.0f} s",
            met=None if quick else ours.fit_s <= FIT_GOAL_S,
            notes=f"{defaults}; ARI {ours.scores[0]:.3f}, NMI {ours.scores[1]:.3f}, "
            f"{ours.n_topics} topics; reference: the same model with {LARGE_REFERENCE}, "
            f"fitted after it in the same run (ARI {reference.scores[0]:.3f}, "
            f"NMI {reference.scores[1]:.3f})",
        ),
        make_row(
            "default model: topics of 20 new queries, warm process",
            "10 batches of 20 unseen prompts",
            ours=warm_s,
            reference=warm_reference_s,
            goal=f"≤ {TRANSFORM_GOAL_S * 1000:.0f} ms",
            met=None if quick else warm_s <= TRANSFORM_GOAL_S,
            notes=f"median of 10 batches; slowest {max(ours.warm_s) * 1000:.0f} ms; "
            f"reference: {LARGE_REFERENCE}'s model (slowest "
            f"{max(reference.warm_s) * 1000:.0f} ms)",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    """Run benchmark D, the grid; ``quick`` uses a few hundred queries and no goal."""
    plan = _QUICK if quick else _FULL
    rows: list[Row] = []
    try:
        rows += _grid_rows(plan, quick)
    except Exception as exc:  # keep the other part's rows
        rows.append(make_row("backend grid", "simulator", ours="error", notes=error_text(exc)))
    return rows + _topic_count_rows(plan)


def run_scale(quick: bool = False) -> list[Row]:
    """Run benchmark E: the default model on 100,000 queries and 20 new ones warm, beside
    the same model with :data:`LARGE_REFERENCE` in the same run."""
    return _large_rows(_QUICK if quick else _FULL, quick)
