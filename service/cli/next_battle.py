"""``plb next-battle``: the pair a user known by queries (and a few votes) should vote on."""

from __future__ import annotations

import argparse
from typing import Any

from ranking.next_battle import TARGETS
from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import add_output_options, emit
from service.cli.recommend import load_predictor_and_votes, read_queries
from service.live.next_battle import last_pair, next_battle_document
from service.live.recommendation import recommendation

__all__ = ["add_parser", "format_next_battle"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb next-battle``."""
    parser = subparsers.add_parser(
        "next-battle",
        help=COMMANDS["next-battle"].help,
        description="Read the ranking 'plb recommend' predicts from a user's queries (and "
        "votes), and name the pair of models whose vote is expected to tell most about "
        "which model is that user's best: the largest expected drop in the entropy of "
        "p_best, in bits.",
    )
    parser.add_argument("fit_dir", metavar="DIR", help="a fit directory of 'plb fit --out DIR'")
    parser.add_argument(
        "--queries", required=True, metavar="FILE", help="the user's queries, as 'plb recommend'"
    )
    parser.add_argument(
        "--votes", metavar="FILE", help="a battle log of the user's own votes, as 'plb recommend'"
    )
    parser.add_argument(
        "--target",
        choices=TARGETS,
        default="best",
        help="tell most about which model is best (default), or about the whole ranking",
    )
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Execute ``plb next-battle``."""
    queries = read_queries(args.queries)
    _, predictor, votes = load_predictor_and_votes(args)
    progress.note("choosing the next battle")
    board = recommendation(predictor, queries, votes)
    document = next_battle_document(board, args.target, last_pair(votes))
    emit(document, format_next_battle(document), args.format)


def format_next_battle(document: dict[str, Any]) -> str:
    """The suggested battle in a few lines."""
    a, b = document["model_a"], document["model_b"]
    about = "your ranking" if document["target"] == "ranking" else "your best model"
    lines = [
        f"Vote next: {a} vs {b}",
        "",
        f"Expected to tell {document['information']:.3f} bits about {about} (the entropy "
        f"of who is your best is {document['entropy']:.3f} bits now). {a} is "
        f"{document['p_best_a']:.0%} likely your best, {b} {document['p_best_b']:.0%}; "
        f"{a} wins with probability {document['p_a']:.0%}.",
    ]
    if not document.get("informative", True):
        lines.append("One vote will hardly change these odds, but no other vote tells more.")
    skipped = document.get("skipped")
    if skipped:
        lines.append(
            f"Not {skipped['model_a']} vs {skipped['model_b']} again: you have just voted "
            "on it (your vote counts already)."
        )
    if document["alternatives"]:
        others = ", ".join(
            f"{p['model_a']} vs {p['model_b']} ({p['information']:.3f})"
            for p in document["alternatives"]
        )
        lines.append(f"Next best: {others}.")
    return "\n".join(lines)
