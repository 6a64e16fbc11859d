"""``plb topics``: the topics of the users' queries, with sizes and top words."""

from __future__ import annotations

import argparse
import os
from typing import Any

import pandas as pd

from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import (
    add_input_options,
    add_output_options,
    add_seed_option,
    add_topic_options,
    check_seed,
    check_topic_options,
    emit,
    load_input,
)
from service.cli.errors import UsageError
from service.cli.tables import format_table

__all__ = ["add_parser"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb topics``."""
    parser = subparsers.add_parser(
        "topics",
        help=COMMANDS["topics"].help,
        description="Fit the topic model (BERTopic over offline sentence embeddings) to the "
        "prompts of the battle log and print each topic's size and top words. The "
        "defaults are the measured choice of bench/features/topics.py (README, 'Query features').",
    )
    add_topic_options(parser)
    parser.add_argument("--reducer", choices=("pca", "umap"), default="pca", help="default: pca")
    parser.add_argument(
        "--clusterer", choices=("kmeans", "hdbscan"), default="kmeans", help="default: kmeans"
    )
    parser.add_argument(
        "--compare",
        metavar="COLUMN",
        help="also score the topics against a label column of the log (adjusted Rand index, "
        "NMI), e.g. the simulator's 'topic'",
    )
    parser.add_argument("--out", metavar="DIR", help="save the fitted topic model into DIR")
    add_seed_option(parser)
    add_input_options(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Execute ``plb topics``."""
    check_topic_options(args)
    check_seed(args)
    if args.out and os.path.isfile(args.out):
        raise UsageError(f"--out {args.out!r} is a file; give a directory for the topic model")
    battles = load_input(args)
    if args.compare and args.compare not in battles.columns:
        raise UsageError(f"--compare: the log has no column {args.compare!r}")
    if "prompt" not in battles.columns or battles["prompt"].isna().all():
        raise UsageError("the battle log has no prompts: topics need the users' queries")
    rows = battles[battles["prompt"].notna()]
    queries = rows["prompt"].astype(str).tolist()

    from features.topics import TopicModel  # heavy imports: only for this command

    progress.note(f"fitting topics to {len(queries):,} queries")
    with progress.stages() as stages:
        model = TopicModel(
            args.embedding,
            reducer=args.reducer,
            clusterer=args.clusterer,
            n_topics=args.n_topics,
            random_state=args.seed,
        ).fit(queries, progress=stages)
    document: dict[str, Any] = {
        "n_queries": len(queries),
        "n_distinct": int(rows["prompt"].nunique()),
        "embedding": model.embedder_.name,
        "reducer": args.reducer,
        "clusterer": args.clusterer,
        "topics": [topic.to_dict() for topic in model.topics_],
    }
    if args.compare:
        document["compare"] = _compare(rows[args.compare], model.labels_, args.compare)
    if args.out:
        document["out"] = str(model.save(args.out))
    emit(document, format_topics(document), args.format)


def _compare(labels: pd.Series, topics: Any, column: str) -> dict[str, Any]:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    known = labels.notna().to_numpy()
    truth = labels[known].astype(str).to_numpy()
    return {
        "column": column,
        "adjusted_rand_index": float(adjusted_rand_score(truth, topics[known])),
        "nmi": float(normalized_mutual_info_score(truth, topics[known])),
    }


def format_topics(document: dict[str, Any]) -> str:
    """The topics as a table, largest first."""
    head = (
        f"{len(document['topics'])} topics of {document['n_queries']:,} queries "
        f"({document['n_distinct']:,} distinct); embedding {document['embedding']}, "
        f"{document['reducer']} + {document['clusterer']}"
    )
    compare = document.get("compare")
    if compare:
        head += (
            f"\nAgainst column {compare['column']!r}: adjusted Rand index "
            f"{compare['adjusted_rand_index']:.3f}, NMI {compare['nmi']:.3f}"
        )
    topics = sorted(document["topics"], key=lambda t: -t["size"])
    rows = [(t["topic"], t["size"], f"{t['share']:.1%}", ", ".join(t["words"][:8])) for t in topics]
    return head + "\n\n" + format_table(("topic", "queries", "share", "top words"), rows)
