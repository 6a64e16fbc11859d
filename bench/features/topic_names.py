"""Benchmark V (issue 32): topic names, and whether a prompt fits its topic, on real prompts.

What the "why" calls a topic (``explanation.topics[].name``) is measured here on prompts
the names were not written for. A ``TopicModel(n_topics=10)`` with the default embedding
(MiniLM ONNX) is fitted on a seeded random 420 of the 500 Arena-Hard v0.1 prompts
(``../shared/data/real-prompts/arena-hard-v0.1.jsonl``, seed 0); then

* its topics are named by :func:`features.topic_labels.name_topic`: how many get a
  curated name, how many keep the two-words fallback ("issue and length");
* the training prompts' closeness to their own topic (:func:`topic_closeness`): its 1st,
  5th, 10th and 50th percentiles, and the share under the embedder's threshold
  (:func:`closeness_threshold`);
* the share that fit a topic (:func:`fits_topic`) of the 80 held-out Arena-Hard prompts,
  of LLMFAO's prompts (``../shared/data/llmfao/prompts.jsonl``) and of a short fixed list
  of everyday prompts (:data:`EVERYDAY`: a wedding toast, tax questions, a recipe, small
  talk), none of which the names were tuned on;
* one row per prompt of LLMFAO, of the everyday list and of the first
  :data:`HELD_ROWS` held-out ones: the prompt cut to 80 characters, its closeness, and
  whether its topic is named for it, and which.

Each set of prompts is read in one call, in the same order every run, so the figures repeat
exactly (but for the fit's seconds): a MiniLM ONNX vector depends on its batch mates
(padding, int8 activation scales), and the same prompts read in other company move by a
few hundredths. Nothing of :mod:`features.topic_labels` is tuned here: the figures are
re-measured. The
prompts file is ``$PLB_REAL_PROMPTS`` where set (as for ``plb simulate``), else the shared
Arena-Hard file; ``python -m bench.features.topic_names --prompts FILE`` reads another (JSON
Lines, a ``prompt`` or ``text`` field, ``cluster`` optional; given twice, both are
reported). Where a file is absent its rows say so. ``--quick``: 120 prompts of the file,
100 to fit 5 topics, a few rows of each kind.

``python -m bench.features.topic_names [--quick] [--prompts FILE]`` prints the rows;
``python -m bench.run topic_names`` writes them into bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.common import SHARED_DATA, Row, make_row

__all__ = ["EVERYDAY", "HELD_ROWS", "LLMFAO_PROMPTS", "SEED", "TRAIN", "read_prompts", "run"]

logger = logging.getLogger("bench")

_SHARED = SHARED_DATA
#: LLMFAO's prompts beside the repository.
LLMFAO_PROMPTS = _SHARED / "llmfao" / "prompts.jsonl"
#: Prompts the topic model is fitted on (the rest of the file is held out).
TRAIN = 420
#: Seed of the random split.
SEED = 0
#: Topics of the model.
N_TOPICS = 10
#: Held-out prompts shown one per row (the share is over all of them).
HELD_ROWS = 25
#: Everyday prompts, far from Arena-Hard's technical ones.
EVERYDAY = (
    "Write a toast for my sister's wedding",
    "Can you help me with a wedding toast for my best friend? Something funny.",
    "How do I file my taxes as a freelancer in Germany?",
    "What deductions can I claim on my tax return?",
    "Give me a recipe for vegan lasagna",
    "hi, how are you today?",
)
_CUT = 80


@dataclass(frozen=True)
class _Read:
    """How a fitted model reads some prompts."""

    texts: list[str]
    closeness: npt.NDArray[np.float64]
    names: list[str]
    fits: npt.NDArray[np.bool_]


def read_prompts(path: Path) -> tuple[list[str], list[str]]:
    """The prompts of a JSON Lines file and their clusters ("" where none is given).

    Parameters
    ----------
    path : Path
        One object a line, the text in ``prompt`` (or ``text``, as LLMFAO's), the
        publishers' ``cluster`` optional.

    Raises
    ------
    ValueError
        When a line has neither a ``prompt`` nor a ``text`` string.
    """
    texts: list[str] = []
    clusters: list[str] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            text = record.get("prompt", record.get("text"))
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{path}:{number}: no 'prompt' or 'text' string")
            texts.append(text)
            clusters.append(str(record.get("cluster") or ""))
    return texts, clusters


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _CUT else flat[: _CUT - 1] + "…"


def _share(fits: npt.NDArray[np.bool_]) -> str:
    return f"{fits.mean():.0%} ({int(fits.sum())} of {fits.size})" if fits.size else "—"


def _read(model: Any, texts: Sequence[str], threshold: float) -> _Read:
    from features.topic_labels import fits_topic, topic_closeness

    texts = list(texts)
    topics = np.asarray(model.predict(texts), dtype=np.intp)
    closeness = topic_closeness(model, texts, topics)
    names = [model.topics_[t].name for t in topics]
    return _Read(texts, closeness, names, fits_topic(texts, closeness, names, threshold))


def _prompt_rows(read: _Read, data: str, notes: Sequence[str] = ()) -> list[Row]:
    from features.topic_labels import TOPIC_NAMES

    rows = []
    for i, text in enumerate(read.texts):
        name = read.names[i]
        kind = "" if name in TOPIC_NAMES else " (two words)"
        said = f"named: {name}{kind}" if read.fits[i] else f"not named (its topic: {name}{kind})"
        extra = f"; {notes[i]}" if i < len(notes) and notes[i] else ""
        rows.append(make_row(_cut(text), data, ours=f"{read.closeness[i]:.2f}", notes=said + extra))
    return rows


def _skipped(what: str, reason: str) -> Row:
    return make_row(what, "—", ours="skipped", notes=reason)


def _topic_rows(model: Any, data: str) -> list[Row]:
    from features.topic_labels import TOPIC_NAMES

    topics = list(model.topics_)
    curated = [t.name for t in topics if t.name in TOPIC_NAMES]
    fallback = [t.name for t in topics if t.name not in TOPIC_NAMES]
    rows = [
        make_row(
            "topics with a curated name",
            data,
            ours=f"{len(curated)} of {len(topics)}",
            notes=", ".join(curated) or "none",
        ),
        make_row(
            "topics named by their first two words (fallback)",
            data,
            ours=f"{len(fallback)} of {len(topics)}",
            notes=", ".join(fallback) or "none",
        ),
    ]
    for t in topics:
        kind = "curated" if t.name in TOPIC_NAMES else "two words"
        rows.append(
            make_row(
                f"topic {t.topic}: {t.name}",
                f"{t.size} training prompts",
                ours=kind,
                notes="top words: " + ", ".join(t.words[:6]),
            )
        )
    return rows


def _file_rows(path: Path, quick: bool) -> list[Row]:
    """Every row of one prompts file: the fit, its topics, closeness and fits."""
    from features.topic_labels import closeness_threshold, topic_closeness
    from features.topics import TopicModel

    if not path.is_file():
        return [_skipped("topic names on real prompts", f"skipped: {path} is absent")]
    texts, clusters = read_prompts(path)
    if quick:
        texts, clusters = texts[:120], clusters[:120]
    n_train = 100 if quick else min(TRAIN, round(0.84 * len(texts)))
    order = np.random.default_rng(SEED).permutation(len(texts))
    train = [texts[i] for i in order[:n_train]]
    held = [int(i) for i in order[n_train:]]
    n_topics = 5 if quick else N_TOPICS
    data = f"{n_train} of {len(texts)} prompts of {path.name} (seed {SEED})"

    logger.info("topic_names: fitting %d topics on %d prompts of %s", n_topics, n_train, path)
    start = time.perf_counter()
    model = TopicModel(n_topics=n_topics).fit(train)
    seconds = time.perf_counter() - start
    threshold = closeness_threshold(model)
    rows = [
        make_row(
            "fit the topic model",
            data,
            ours=seconds,
            notes=f"TopicModel(n_topics={n_topics}), embedder {model.embedder_.name}, "
            f"{model.n_topics_} topics; closeness threshold {threshold:g}",
        ),
        *_topic_rows(model, data),
    ]

    logger.info("topic_names: closeness of the training prompts")
    own = topic_closeness(model, train, model.labels_)
    p1, p5, p10, p50 = np.percentile(own, [1, 5, 10, 50])
    rows += [
        make_row(
            "training prompts' closeness to their own topic",
            data,
            ours=f"p1 {p1:.3f}, p5 {p5:.3f}, p10 {p10:.3f}, p50 {p50:.3f}",
            notes="cosine of the prompt's embedding and its topic's centroid",
        ),
        make_row(
            "training prompts under the threshold",
            data,
            ours=f"{(own < threshold).mean():.1%}",
            notes=f"closeness < {threshold:g} ({int((own < threshold).sum())} of {own.size})",
        ),
    ]

    logger.info("topic_names: %d held-out prompts", len(held))
    held_read = _read(model, [texts[i] for i in held], threshold)
    trained = {clusters[i] for i in order[:n_train]} - {""}
    mate = np.array([bool(clusters[i]) and clusters[i] in trained for i in held], dtype=bool)
    mate_note = (
        f"; with their cluster mate among the training prompts {_share(held_read.fits[mate])}, "
        f"without {_share(held_read.fits[~mate])}"
        if any(clusters)
        else ""
    )
    held_data = f"{len(held)} held-out prompts of {path.name}"
    rows.append(
        make_row(
            "held-out prompts that fit a topic",
            held_data,
            ours=_share(held_read.fits),
            notes=f"median closeness {np.median(held_read.closeness):.2f}{mate_note}",
        )
    )

    if LLMFAO_PROMPTS.is_file():
        logger.info("topic_names: LLMFAO's prompts")
        llmfao = read_prompts(LLMFAO_PROMPTS)[0]
        llm_read = _read(model, llmfao[:4] if quick else llmfao, threshold)
        rows.append(
            make_row(
                "LLMFAO prompts that fit a topic",
                f"{len(llm_read.texts)} LLMFAO prompts",
                ours=_share(llm_read.fits),
                notes=f"median closeness {np.median(llm_read.closeness):.2f}; "
                f"{len(set(llm_read.texts))} distinct texts",
            )
        )
    else:
        llm_read = None
        rows.append(_skipped("LLMFAO prompts", f"skipped: {LLMFAO_PROMPTS} is absent"))

    every_read = _read(model, EVERYDAY[:2] if quick else EVERYDAY, threshold)
    rows.append(
        make_row(
            "everyday prompts that fit a topic",
            f"{len(every_read.texts)} everyday prompts",
            ours=_share(every_read.fits),
            notes="a wedding toast, tax questions, a recipe, small talk",
        )
    )

    shown = 3 if quick else HELD_ROWS
    held_shown = _Read(
        held_read.texts[:shown],
        held_read.closeness[:shown],
        held_read.names[:shown],
        held_read.fits[:shown],
    )
    cluster_notes = [f"cluster: {clusters[i]}" if clusters[i] else "" for i in held[:shown]]
    if llm_read is not None:
        rows += _prompt_rows(llm_read, "LLMFAO")
    rows += _prompt_rows(held_shown, f"held out of {path.name}", cluster_notes)
    rows += _prompt_rows(every_read, "everyday")
    return rows


def run(quick: bool = False, prompts: Sequence[Path] | None = None) -> list[Row]:
    """Run benchmark V; ``quick`` fits 5 topics on 100 prompts and shows a few rows.

    Parameters
    ----------
    quick : bool
        Tiny run (module docstring).
    prompts : sequence of Path, optional
        The prompts files, each reported in turn; by default ``$PLB_REAL_PROMPTS`` or the
        shared Arena-Hard file.
    """
    from data.real_prompts import default_real_prompts_path

    if not prompts:
        default = default_real_prompts_path()
        if default is None:
            return [
                _skipped(
                    "topic names on real prompts",
                    "skipped: ../shared/data/real-prompts/arena-hard-v0.1.jsonl is absent",
                )
            ]
        prompts = [default]
    rows: list[Row] = []
    for path in prompts:
        rows += _file_rows(Path(path), quick)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the rows (``python -m bench.features.topic_names [--quick] [--prompts FILE]``)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.features.topic_names", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--quick", action="store_true", help="120 prompts, 5 topics, a few rows of each kind"
    )
    parser.add_argument(
        "--prompts",
        type=Path,
        action="append",
        metavar="FILE",
        help="a prompts file (JSON Lines); give it twice to report on two",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for row in run(args.quick, args.prompts):
        print(row)


if __name__ == "__main__":
    main()
