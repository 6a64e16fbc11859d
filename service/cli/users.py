"""``plb users``: per-user leaderboards and their agreement with the aggregate."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from ranking.agreement import AgreementSummary
from ranking.analysis import UserAnalysis, analyse_users
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.noise import NULL_MAX_USERS, NULL_REPLICATES
from ranking.users import SHRINKAGE, UserRatings, user_rank_odds
from service.cli.commands import COMMANDS
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
    read_input,
)
from service.cli.tables import format_table
from service.cli.window import add_window_options, check_window_options

__all__ = ["add_parser", "add_user_odds", "format_users"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb users``."""
    parser = subparsers.add_parser(
        "users",
        help=COMMANDS["users"].help,
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
    parser.add_argument(
        "--null-replicates",
        type=int,
        default=NULL_REPLICATES,
        metavar="N",
        help="re-draw each summarised user's votes from the aggregate N times and refit them, "
        f"to tell what agreement noise alone gives (at most {NULL_MAX_USERS:,} users, drawn at "
        f"random; default {NULL_REPLICATES}; 0 skips it)",
    )
    add_seed_option(parser)
    add_window_options(parser)
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
    check_at_least("--null-replicates", args.null_replicates, 0)
    check_seed(args)
    window = check_window_options(args)
    log = read_input(args)
    battles = window.apply(log.battles, args.battles)
    codes, names = user_codes(battles)
    analysis = analyse_users(
        pairwise_from_battles(battles),
        codes,
        names,
        method=args.method,
        shrinkage=args.shrinkage,
        min_battles=args.min_battles,
        rng=args.seed,
        null_replicates=args.null_replicates,
    )
    odds = user_rank_odds(analysis.ratings)
    document = add_user_odds(analysis.to_dict(), analysis.ratings, analysis.users, odds)
    if not window.is_open:
        document["window"] = window.to_dict()
    table = format_users(analysis, args.show, log, odds, window.phrase())
    emit(document, table, args.format)


Odds = tuple[np.ndarray, np.ndarray, np.ndarray]


def add_user_odds(
    document: dict[str, Any], ratings: UserRatings, users: tuple[str, ...], odds: Odds
) -> dict[str, Any]:
    """The ``users`` document with each listed user's ``p_best``, ``rank_lower`` and
    ``rank_upper`` by model (the models of their ``ratings``), from their posterior.

    Bradley-Terry only: per-user Elo has no interval, so no odds (the document is
    returned as it is).
    """
    if ratings.method != "bt":
        return document
    p_best, rank_lower, rank_upper = odds
    row = {u: i for i, u in enumerate(users)}
    column = {m: j for j, m in enumerate(ratings.models)}
    for entry in document["users"]:
        u = row[entry["user_id"]]
        listed = [(m, column[m]) for m in entry["ratings"]]
        entry["p_best"] = {m: round(float(p_best[u, j]), 4) for m, j in listed}
        entry["rank_lower"] = {m: int(rank_lower[u, j]) for m, j in listed}
        entry["rank_upper"] = {m: int(rank_upper[u, j]) for m, j in listed}
    return document


def format_users(
    analysis: UserAnalysis,
    show: int,
    read: LeftOut | None = None,
    odds: Odds | None = None,
    conditions: Sequence[str] = (),
) -> str:
    """Summary lines and the most active users as a table.

    ``read``, what reading the log left out, is said after the number of battles. With
    ``odds`` (:func:`ranking.users.user_rank_odds`, Bradley-Terry) a column gives each
    user's likeliest best model and its ``p_best``. ``conditions`` (a time window's) are
    said after the number of battles.
    """
    s, r = analysis.summary, analysis.ratings
    n_battles = int(analysis.aggregate.n_battles)
    lines: list[str] = [
        f"{r.method.upper()} per-user ratings ({r.shrinkage} shrinkage"
        + (f", learnt deviation sd {r.prior_sd:.1f} points" if r.prior_sd is not None else "")
        + f") for {len(analysis.users)} users, from {battles_phrase(n_battles, read, conditions)}",
        f"Agreement with the aggregate over {s.users} users with >= {analysis.min_battles} votes "
        f"({s.confidence:.0%} intervals over users): {_spread_text(s)}, "
        f"mean Kendall {s.mean_kendall:.3f}",
    ]
    if s.noise is not None:
        n = s.noise
        lines.append(
            f"Noise alone (votes re-drawn from the aggregate, {n.users} users x {n.replicates}): "
            f"mean Spearman {_with_interval(n.mean_spearman, n.intervals.get('mean_spearman'))}"
            f", median {n.median_spearman:.3f}, near zero or negative "
            f"{n.share_near_zero_or_negative:.0%}; part of the gap from perfect agreement "
            f"that noise produces "
            f"{_with_interval(n.noise_share, n.intervals.get('noise_share'), '.0%')}"
        )
        lines.append(textwrap.fill(n.reading(), width=100))
    lines.append("")
    order = np.argsort(-r.n_battles, kind="stable")[:show]
    with_odds = odds is not None and r.method == "bt"
    rows = []
    for u in order:
        best = int(np.argmax(np.where(r.seen[u], r.ratings[u], -np.inf)))
        rho = analysis.spearman[u]
        row: tuple[object, ...] = (
            analysis.users[u],
            int(r.n_battles[u]),
            r.models[best],
            "n/a" if np.isnan(rho) else f"{rho:.2f}",
        )
        if with_odds and odds is not None:
            p_best = odds[0][u]
            likeliest = int(np.nanargmax(p_best)) if np.isfinite(p_best).any() else None
            row += (
                "n/a"
                if likeliest is None
                else f"{r.models[likeliest]} {float(p_best[likeliest]):.0%}",
            )
        rows.append(row)
    headers: tuple[str, ...] = ("user", "votes", "their best model (of those seen)", "spearman")
    if with_odds:
        headers += ("likeliest best (p_best)",)
    return "\n".join(lines) + "\n" + format_table(headers, rows)


def _with_interval(value: float, interval: tuple[float, float] | None, form: str = ".3f") -> str:
    if np.isnan(value):
        return "n/a"
    if interval is None or np.isnan(interval[0]):
        return f"{value:{form}}"
    return f"{value:{form}} ({interval[0]:{form}} to {interval[1]:{form}})"


def _spread_text(s: AgreementSummary) -> str:
    mean = _with_interval(s.mean_spearman, s.mean_spearman_interval)
    median = _with_interval(s.median_spearman, s.median_spearman_interval)
    share = _with_interval(
        s.share_near_zero_or_negative, s.share_near_zero_or_negative_interval, ".0%"
    )
    return f"mean Spearman {mean}, median {median}, near zero or negative (<= 0.1) {share}"
