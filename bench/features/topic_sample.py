"""Benchmark X (issue 33): the topic model fitted on a sample of the distinct prompts.

``TopicModel(max_fit_documents=m)`` fits its reducer, clusterer and top words on ``m``
distinct prompts drawn at random and gives the others their topics from the fitted
model. How large must ``m`` be? For each sample size, against the fit on every prompt
(``max_fit_documents=None``) in the same run, on the same embeddings:

* agreement of the labels with the full fit's (adjusted Rand index, NMI), beside the
  full fit's agreement with itself under another seed (k-means' own noise);
* recovery of the truth: the simulator's 8 topics, or, on bench K's 500 real Arena
  prompts, the publishers' 8 topic groups and 250 clusters;
* held-out fit: the mean cosine of every prompt (most of them outside the sample) to
  its topic's centroid, computed over all prompts;
* the time of the fit, the prediction of the others included (the embedding excluded:
  it is the same for both, timed once).

The synthetic corpus is the simulator's prompt generator (:func:`data.prompts.generate_prompts`,
8 topics), distinct texts, embedded by the ``tfidf`` backend, the one bench R fits with.
The real prompts are embedded by the default backend (TF-IDF where it cannot run).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from bench.common import Row, error_text, make_row
from data.prompts import TOPICS, generate_prompts
from features.embeddings import make_embedder
from features.topic_sample import MAX_FIT_DOCUMENTS
from features.topic_settings import DEFAULTS
from features.topics import TopicModel

__all__ = ["run"]

logger = logging.getLogger("bench")


@dataclass(frozen=True)
class _Plan:
    n_docs: int
    sizes: tuple[int, ...]
    real_sizes: tuple[int, ...]
    seeds: tuple[int, ...]


_FULL = _Plan(200_000, (5_000, 10_000, 20_000, 50_000, 100_000), (100, 200, 300, 400), (0, 1))
_QUICK = _Plan(3_000, (300, 1_000), (60,), (0, 1))


@dataclass(frozen=True)
class _Fit:
    labels: np.ndarray
    seconds: float
    cosine: float  # mean cosine of each prompt to its topic's centroid


def _simulated(n_docs: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """``n_docs`` distinct simulated prompts, sorted, and their true topics."""
    rng = np.random.default_rng(seed)
    chosen: dict[str, int] = {}
    while len(chosen) < n_docs:
        n = int((n_docs - len(chosen)) * 1.4) + 100
        topics = rng.integers(0, len(TOPICS), n)
        for text, topic in zip(
            generate_prompts(topics, rng.standard_normal((n, 3)), rng), topics, strict=True
        ):
            chosen.setdefault(text, int(topic))
    docs = sorted(list(chosen)[:n_docs])  # the first drawn, in the order a fit sorts them
    return docs, np.asarray([chosen[d] for d in docs])


def _cosine(vectors: np.ndarray, labels: np.ndarray) -> float:
    """Mean cosine of each (unit) vector to the unit mean of its label's vectors."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sums = np.zeros((int(labels.max()) + 1, unit.shape[1]))
    np.add.at(sums, labels, unit)
    sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return float(np.mean(np.sum(unit * sums[labels], axis=1)))


def _fit(docs: list[str], vectors: np.ndarray, limit: int | None, seed: int, n_topics: int) -> _Fit:
    model = TopicModel("tfidf", n_topics=n_topics, max_fit_documents=limit, random_state=seed)
    start = time.perf_counter()
    model.fit(docs, embeddings=vectors)
    seconds = time.perf_counter() - start
    return _Fit(model.labels_, seconds, _cosine(vectors, model.labels_))


def _agreement(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    return float(adjusted_rand_score(a, b)), float(normalized_mutual_info_score(a, b))


def _rows(
    what: str,
    data: str,
    docs: list[str],
    vectors: np.ndarray,
    truths: dict[str, np.ndarray],
    sizes: tuple[int, ...],
    seeds: tuple[int, ...],
    n_topics: int,
) -> list[Row]:
    """One row for the full fit and one a sample size, each beside the full fit."""
    full = [_fit(docs, vectors, None, seed, n_topics) for seed in seeds[:2]]
    own = _agreement(full[0].labels, full[1].labels)

    def truth_text(fits: list[_Fit]) -> str:
        return "; ".join(
            f"{name}: ARI {np.mean([adjusted_rand_score(t, f.labels) for f in fits]):.3f}, "
            f"NMI {np.mean([normalized_mutual_info_score(t, f.labels) for f in fits]):.3f}"
            for name, t in truths.items()
        )

    rows = [
        make_row(
            f"{what}: fitted on every prompt",
            data,
            ours=full[0].seconds,
            notes=f"seeds {seeds[0]}, {seeds[1]}: agree with each other at ARI {own[0]:.3f}, "
            f"NMI {own[1]:.3f} (k-means' own noise); {truth_text(full)}; centroid cosine "
            f"{full[0].cosine:.4f}; ours: seconds of the fit (seed {seeds[0]})",
        )
    ]
    for size in sizes:
        if size >= len(docs):
            continue
        fits = [_fit(docs, vectors, size, seed, n_topics) for seed in seeds]
        agree = np.mean([_agreement(full[0].labels, f.labels) for f in fits], axis=0)
        default = " (the default)" if size == MAX_FIT_DOCUMENTS else ""
        seconds = float(np.median([f.seconds for f in fits]))
        rows.append(
            make_row(
                f"{what}: fitted on a sample of {size:,}{default}",
                data,
                ours=seconds,
                reference=full[0].seconds,
                notes=f"{len(seeds)} sample seeds: agree with the full fit at ARI "
                f"{agree[0]:.3f}, NMI {agree[1]:.3f} (full fit vs itself: {own[0]:.3f}, "
                f"{own[1]:.3f}); {truth_text(fits)}; centroid cosine "
                f"{np.mean([f.cosine for f in fits]):.4f} (full {full[0].cosine:.4f}); "
                "ours: median seconds of the fit, the others' topics included; "
                "reference: the full fit's",
            )
        )
    return rows


def _simulated_rows(plan: _Plan) -> list[Row]:
    docs, truth = _simulated(plan.n_docs)
    start = time.perf_counter()
    vectors = np.asarray(make_embedder("tfidf").embed(docs), dtype=np.float32)
    embed_s = time.perf_counter() - start
    data = (
        f"simulator: {len(docs):,} distinct prompts, 8 true topics, tfidf vectors "
        f"(embedded once, {embed_s:.0f} s)"
    )
    truths = {"8 true topics": truth}
    n_topics = int(DEFAULTS["n_topics"])
    return _rows("simulator", data, docs, vectors, truths, plan.sizes, plan.seeds, n_topics)


def _real_rows(plan: _Plan, quick: bool) -> list[Row]:
    from bench.features.topics_real import _load_real

    real = _load_real(quick)
    if isinstance(real, str):
        return [make_row("real prompts", "—", ours="skipped", notes=real)]
    backend = str(DEFAULTS["embedding"])
    try:
        vectors = np.asarray(make_embedder(backend).embed(real.docs), dtype=np.float32)
    except Exception as exc:  # where the network cannot run, TF-IDF
        logger.warning("topic sample: %s, so tfidf", error_text(exc))
        backend = "tfidf"
        vectors = np.asarray(make_embedder(backend).embed(real.docs), dtype=np.float32)
    data = f"{len(real.docs)} real Arena prompts (bench K), {backend} vectors"
    truths = {"8 coarse": real.coarse, f"{len(set(real.fine))} clusters": real.fine}
    order = np.argsort(np.asarray(real.docs, dtype=object), kind="stable")
    docs = [real.docs[i] for i in order]
    truths = {name: t[order] for name, t in truths.items()}
    sizes = plan.real_sizes
    n_topics = int(DEFAULTS["n_topics"])
    return _rows("real", data, docs, vectors[order], truths, sizes, plan.seeds, n_topics)


def run(quick: bool = False) -> list[Row]:
    """Run benchmark X: the topic model fitted on samples of each size, beside the fit
    on every prompt, on simulated prompts and on bench K's real ones."""
    plan = _QUICK if quick else _FULL
    rows = _simulated_rows(plan)
    try:
        rows += _real_rows(plan, quick)
    except Exception as exc:  # keep the simulator's rows
        rows.append(make_row("real prompts", "—", ours="error", notes=error_text(exc)))
    return rows
