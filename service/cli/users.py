"""``plb users``: per-user leaderboards and their agreement with the aggregate."""

from __future__ import annotations

import argparse

import numpy as np

from ranking.analysis import UserAnalysis, analyse_users
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.users import SHRINKAGE
from service.cli.common import (
    LeftOut,
    add_input_options,
    add_method_option,
    add_output_options,
    add_seed_option,
    battles_phrase,
    check_at_least,
    check_seed,
    emit,
    read_log,
)
from service.cli.tables import format_table

__all__ = ["add_parser", "format_users"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb users``."""
    parser = subparsers.add_parser(
        "users",
        help="per-user leaderboards and their agreement with the aggregate",
        description="Fit every user's Bradley-Terry or Elo ratings at once (shrunk toward the "
        "aggregate by default) and measure each user's Spearman and Kendall agreement with "
        "the aggregate ranking over the models that user voted on.",
    )
    add_method_option(parser)
    parser.add_argument(
        "--min-battles",
        type=int,
        default=10,
        metavar="N",
        help="list and summarise users with at least N votes (default 10)",
    )
    parser.add_argument(
        "--shrinkage",
        choices=SHRINKAGE,
        default="cv",
        help="shrink users toward the aggregate with a strength learnt by held-out log-loss "
        "(cv, default) or Laplace evidence; 'none' fits each user alone, as the study did",
    )
    add_seed_option(parser)
    parser.add_argument(
        "--show", type=int, default=10, metavar="N", help="users shown in the table (default 10)"
    )
    add_input_options(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Execute ``plb users``."""
    check_at_least("--min-battles", args.min_battles, 1)
    check_at_least("--show", args.show, 0)
    check_seed(args)
    log = read_log(args.battles, skip_invalid=args.skip_invalid)
    battles = log.battles
    codes, names = user_codes(battles)
    analysis = analyse_users(
        pairwise_from_battles(battles),
        codes,
        names,
        method=args.method,
        shrinkage=args.shrinkage,
        min_battles=args.min_battles,
        rng=args.seed,
    )
    emit(analysis.to_dict(), format_users(analysis, args.show, log), args.format)


def format_users(analysis: UserAnalysis, show: int, read: LeftOut | None = None) -> str:
    """Summary lines and the most active users as a table.

    ``read``, what reading the log left out, is said after the number of battles.
    """
    s, r = analysis.summary, analysis.ratings
    n_battles = int(analysis.aggregate.n_battles)
    lines = [
        f"{r.method.upper()} per-user ratings ({r.shrinkage} shrinkage"
        + (f", learnt deviation sd {r.prior_sd:.1f} points" if r.prior_sd is not None else "")
        + f") for {len(analysis.users)} users, from {battles_phrase(n_battles, read)}",
        f"Agreement with the aggregate over {s.users} users with >= {analysis.min_battles} votes: "
        f"mean Spearman {s.mean_spearman:.3f}, median {s.median_spearman:.3f}, "
        f"near zero or negative (<= 0.1) {s.share_near_zero_or_negative:.0%}, "
        f"mean Kendall {s.mean_kendall:.3f}",
        "",
    ]
    order = np.argsort(-r.n_battles, kind="stable")[:show]
    rows = []
    for u in order:
        best = int(np.argmax(np.where(r.seen[u], r.ratings[u], -np.inf)))
        rho = analysis.spearman[u]
        rows.append(
            (
                analysis.users[u],
                int(r.n_battles[u]),
                r.models[best],
                "n/a" if np.isnan(rho) else f"{rho:.2f}",
            )
        )
    headers = ("user", "votes", "their best model (of those seen)", "spearman")
    return "\n".join(lines) + "\n" + format_table(headers, rows)
