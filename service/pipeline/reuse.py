"""What a fit takes from an earlier one: its rows kept by text, its topic model, its predictor.

``plb fit --reuse DIR`` and the service's background refit start from an earlier fit
(:class:`Earlier`): the prompts it embedded and measured are looked up by text
(:mod:`service.pipeline.text_store`) and only the new ones computed
(:func:`kept_rows`), its topic model gives the new prompts their topics instead of
topics being fitted again (:func:`reusable_topics`), and its rating predictor is where
the new one starts. A fit without an earlier one computes every row and keeps them all,
for the next.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from features.text_cache import TextCache
from features.text_rows import TextRows
from ranking.progress import Progress, start
from service.pipeline.artifacts import PREDICTOR_DIR, TOPICS_DIR
from service.pipeline.config import FitConfig
from service.pipeline.text_store import TEXTS_DIR, Keys, Shelf, open_shelf, text_keys

__all__ = [
    "Earlier",
    "KeptRows",
    "KeptStyle",
    "after_stage",
    "distinct_prompts",
    "embedding_identity",
    "keep_fitted_embeddings",
    "kept_rows",
    "reusable_topics",
    "style_identity",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Earlier:
    """An earlier fit to start from.

    Attributes
    ----------
    root : Path or None
        Its fit directory (None for one held only in memory).
    topic_model : TopicModel or None
        Its fitted topic model.
    predictor : RatingPredictor or None
        Its fitted rating predictor.
    shelves : tuple of Shelf
        Rows by text held in memory (the service's refits: the fit's and those added
        since); the fit directory's ``texts/`` for any other.
    """

    root: Path | None
    topic_model: Any = None
    predictor: Any = None
    shelves: tuple[Shelf, ...] = ()

    @classmethod
    def load(cls, fit_dir: str | Path) -> Earlier:
        """The earlier fit in ``fit_dir``: its topic model and predictor where it has them.

        Raises
        ------
        ValueError
            When ``fit_dir`` holds no fit (no ``manifest.json``).
        """
        root = Path(fit_dir)
        if not (root / "manifest.json").is_file():
            raise ValueError(f"{root} holds no fit (no manifest.json)")
        topic_model = predictor = None
        if (root / PREDICTOR_DIR).is_dir():  # its topic model is the fit's, saved with it
            from features.predictor import RatingPredictor

            predictor = RatingPredictor.load(root / PREDICTOR_DIR)
            topic_model = predictor.profiler_.topic_model_
        elif (root / TOPICS_DIR).is_dir():
            from features.topics import TopicModel

            topic_model = TopicModel.load(root / TOPICS_DIR)
        return cls(root, topic_model, predictor)

    def shelf(self, kind: str, identity: dict[str, Any]) -> Shelf:
        """The rows of ``kind`` by ``identity`` this fit kept (an empty shelf if none)."""
        for shelf in self.shelves:
            if shelf.kind == kind and shelf.identity == identity:
                return shelf
        return open_shelf(None if self.root is None else self.root / TEXTS_DIR, kind, identity)


def _shelf(earlier: Earlier | None, kind: str, identity: dict[str, Any]) -> Shelf:
    return Shelf(kind, identity) if earlier is None else earlier.shelf(kind, identity)


def reusable_topics(earlier: Earlier | None, config: FitConfig) -> Any:
    """The earlier fit's topic model where ``config`` asks for the same topics (backend,
    number, seed); None (a fresh fit of topics) otherwise, with a note why."""
    model = None if earlier is None else earlier.topic_model
    if model is None:
        return None
    from features.embeddings import default_embedding

    wanted = (config.embedding or default_embedding(), config.n_topics, config.seed)
    held = (model.embedder_.name, model.n_topics, model.random_state)
    if wanted != held:
        log.warning(
            "the earlier fit's topics were fitted with embedding, topics, seed %s, this fit "
            "asks for %s: topics fitted afresh",
            held,
            wanted,
        )
        return None
    return model


def distinct_prompts(battles: pd.DataFrame) -> list[str]:
    """The distinct prompt texts of a battle frame's votes with a user (those the rating
    predictor profiles), sorted."""
    voted = battles["prompt"].notna()
    if "user_id" in battles.columns:
        voted &= battles["user_id"].notna()
    prompts = battles.loc[voted, "prompt"].astype(str)
    return sorted(pd.unique(prompts.to_numpy(dtype=object)).tolist())


def embedding_identity(embedder: Any) -> dict[str, Any] | None:
    """What makes an embedding backend's vectors: its name and settings, and for a fitted
    TF-IDF the hash of the fitted pipeline; None for an unfitted TF-IDF (its vectors are
    not known before it is fitted)."""
    inner = getattr(embedder, "embedder", embedder)  # a serving cache's backend
    identity: dict[str, Any] = {"backend": str(inner.name)}
    for setting in ("max_tokens", "text", "dimensions", "random_state"):
        if hasattr(inner, setting):
            identity[setting] = getattr(inner, setting)
    if identity["backend"] == "tfidf":
        pipeline = getattr(inner, "pipeline", None)
        if pipeline is None:
            return None
        import pickle

        import joblib

        # hashed as saved and loaded: a fitted array's memory order is not what it holds
        identity["fitted"] = joblib.hash(pickle.loads(pickle.dumps(pipeline)))
    return identity


def style_identity() -> dict[str, Any]:
    """What makes a query's style row: the features, and the code of ``features.style*``."""
    import features.style
    from features.style import STYLE_FEATURES

    code = hashlib.blake2b(digest_size=8)
    for path in sorted(Path(features.style.__file__).parent.glob("style*.py")):
        code.update(path.read_bytes())
    return {"features": list(STYLE_FEATURES), "code": code.hexdigest()}


class KeptStyle(TextCache):
    """The style rows of a fit's prompts, by text, as the profiler reads a style cache
    (:func:`features.style.cached_style_features`): each row looked up in one
    table, a text it lacks computed and not kept."""

    def __init__(self, table: TextRows) -> None:
        super().__init__(max(1, len(table)))
        self.table = table

    def rows(self, texts: Sequence[str], compute: Any) -> Any:
        """The row of each text: looked up, or (texts the table lacks) computed; one
        array when the table holds them all."""
        table = self.table
        if table.holds_all(texts):
            return table.rows(texts)  # one lookup of them all
        missing = [t for t in dict.fromkeys(texts) if t not in table]
        extra = dict(zip(missing, compute(missing), strict=True))
        return [extra[t] if t in extra else table[t] for t in texts]


@dataclass(frozen=True)
class KeptRows:
    """A fit's rows by text: the embeddings and style rows of its distinct prompts.

    Attributes
    ----------
    embeddings : TextRows or None
        Every prompt's vector, for the topic model and the profiler, in the prompts'
        order; None where they are computed by the fit itself (a TF-IDF fitted anew).
    style : KeptStyle
        Every prompt's style row.
    shelves : tuple of Shelf
        What to keep for the next fit.
    counts : dict
        Per kind, rows ``kept`` (looked up) and ``computed``.
    """

    embeddings: TextRows | None
    style: KeptStyle
    shelves: tuple[Shelf, ...]
    counts: dict[str, dict[str, int]]


def _complete(
    shelf: Shelf, texts: list[str], compute: Any, wanted: Keys | None
) -> tuple[Shelf, TextRows, dict[str, int]]:
    """Every row of ``texts`` (their keys ``wanted``, if computed already), in their
    order: those ``shelf`` keeps, the others computed (``compute(missing)``) and added."""
    values, found = shelf.aligned(texts, wanted)
    missing = [t for t, f in zip(texts, found, strict=True) if not f]
    counts = {"kept": len(texts) - len(missing), "computed": len(missing)}
    if not missing:
        return shelf, TextRows(texts, values), counts
    rows = np.asarray(compute(missing))
    if values.shape[1] != rows.shape[1]:  # nothing kept: no width to fill in
        values = np.empty((len(texts), rows.shape[1]), dtype=rows.dtype)
    values[~found] = rows
    return shelf.add(missing, rows), TextRows(texts, values), counts


def kept_rows(
    texts: list[str],
    embedder: Any,
    earlier: Earlier | None,
    progress: Progress | None = None,
) -> KeptRows:
    """The embeddings and style rows of the distinct ``texts``, computing only what
    ``earlier`` did not keep.

    Parameters
    ----------
    texts : list of str
        The fit's distinct prompts.
    embedder : BERTopic-style backend or None
        What embeds them: the reused topic model's, or the backend a new one will make;
        None for a TF-IDF to be fitted (the fit embeds; :func:`keep_fitted_embeddings`).
    earlier : Earlier, optional
    progress : Progress, optional
        Told of the stage ``"prompts' rows kept by text"`` (looking them up, and
        measuring the new prompts' style), then ``"embedding queries"`` of what is
        embedded.
    """
    from features.embeddings.base import embed
    from features.style import style_features

    advance = start(progress, "prompts' rows kept by text", 1, "lookups")
    counts: dict[str, dict[str, int]] = {}
    # a refit looks the texts up on two shelves: they are hashed once
    wanted = None if earlier is None else text_keys(texts)
    style_shelf, style, counts["style"] = _complete(
        _shelf(earlier, "style", style_identity()), texts, style_features, wanted
    )
    identity = None if embedder is None else embedding_identity(embedder)
    if identity is None:
        advance(1)
        return KeptRows(None, KeptStyle(style), (style_shelf,), counts)

    def vectors(missing: list[str]) -> npt.NDArray[np.float32]:
        advance(1)  # the lookups are done: what is left is embedding
        return np.asarray(embed(embedder, missing, progress), dtype=np.float32)

    shelf, embeddings, counts["embeddings"] = _complete(
        _shelf(earlier, "embeddings", identity), texts, vectors, wanted
    )
    if not counts["embeddings"]["computed"]:
        advance(1)
    return KeptRows(embeddings, KeptStyle(style), (shelf, style_shelf), counts)


def keep_fitted_embeddings(
    kept: KeptRows, texts: list[str], topic_model: Any, progress: Progress | None = None
) -> KeptRows:
    """``kept`` with the vectors of a topic model's backend fitted by this fit (TF-IDF),
    embedded once more to be kept; ``kept`` itself where they are kept already."""
    if kept.embeddings is not None or topic_model is None:
        return kept
    identity = embedding_identity(topic_model.embedder_)
    if identity is None:
        return kept
    from features.embeddings.base import embed

    vectors = np.asarray(embed(topic_model.embedder_, texts, progress), dtype=np.float32)
    shelf = Shelf("embeddings", identity).add(texts, vectors)
    counts = {**kept.counts, "embeddings": {"kept": 0, "computed": len(texts)}}
    return KeptRows(None, kept.style, (shelf, *kept.shelves), counts)


def after_stage(progress: Progress | None, name: str) -> Progress | None:
    """``progress`` with a stage ``name`` begun now and done when the next one begins.

    For work that announces no stage of its own ahead of work that does (the profiles
    ahead of the rating predictor): its time is its own part of a fit's steps
    (:func:`service.pipeline.timings.timed_stages`), its bar done once the next begins.
    """
    if progress is None:
        return None
    advance: Any = start(progress, name, 1, "steps")

    def stage(next_name: str, total: int, unit: str) -> Any:
        nonlocal advance
        if advance is not None:
            advance(1)
            advance = None
        return progress(next_name, total, unit)

    return stage
