"""``plb evaluate``: held-out evaluation of the personalised rankings."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from data.simulation_files import load_truth
from ranking.evaluation import MIN_VOTES, evaluate_personalisation
from ranking.io.frames import pairwise_from_battles, user_codes
from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import (
    add_input_options,
    add_output_options,
    check_at_least,
    check_existing,
    check_seed,
    check_share,
    emit,
    load_input,
)
from service.cli.errors import UsageError
from service.cli.evaluation_summary import summarise_new_users
from service.cli.tables import format_table
from service.pipeline import evaluation_document, truth_matrix

__all__ = [
    "add_parser",
    "format_evaluation",
    "format_new_users",
    "read_user_ids",
]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb evaluate``."""
    parser = subparsers.add_parser(
        "evaluate",
        help=COMMANDS["evaluate"].help,
        description="Hold out each user's latest votes, fit on the rest, and score the "
        "aggregate, plain per-user and shrunk per-user ratings on the held-out votes: "
        "log-loss, accuracy (a tie counts half) and Brier score; with --truth, also the "
        "mean Spearman against each user's true ranking of all models.",
    )
    parser.add_argument(
        "--method",
        action="append",
        choices=("bt", "elo"),
        help="rating method(s) to evaluate (repeatable; default: both)",
    )
    parser.add_argument(
        "--fraction",
        type=float,
        default=0.2,
        help="share of each user's latest votes held out (default 0.2)",
    )
    parser.add_argument(
        "--min-votes",
        type=int,
        default=MIN_VOTES,
        metavar="N",
        help=f"users with fewer votes stay wholly in training (default {MIN_VOTES})",
    )
    parser.add_argument(
        "--test-users",
        metavar="FILE",
        help="hold out only these users' votes: one user id a line",
    )
    parser.add_argument(
        "--truth",
        metavar="FILE",
        help="truth.json of 'plb simulate' (or its directory): adds Spearman against the truth",
    )
    parser.add_argument(
        "--new-users",
        type=float,
        default=0.2,
        metavar="F",
        help="share of users held out whole, as new users known by their queries (default "
        "0.2; with --test-users, those users); needs prompts in the log",
    )
    parser.add_argument(
        "--new-user-queries",
        type=int,
        metavar="N",
        help="each new user known by the queries of their first N votes (default: all)",
    )
    parser.add_argument(
        "--features",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="evaluate predicting new users from their queries when the log has prompts "
        "(default; --no-features skips it)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="print every row of the new users' tables (each predictor of their ratings, "
        "each way of predicting their later votes), not their summary; --format json "
        "holds them all either way",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    add_input_options(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


def read_user_ids(path: str) -> set[str]:
    """User ids from a file, one a line; blank lines and ``#`` comments ignored."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise UsageError(f"--test-users {path!r}: {error.strerror or error}") from None
    ids = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    if not ids:
        raise UsageError(f"--test-users {path!r} lists no user ids")
    return ids


def run(args: argparse.Namespace) -> None:
    """Execute ``plb evaluate``."""
    check_share("--fraction", args.fraction)
    check_share("--new-users", args.new_users)
    check_at_least("--min-votes", args.min_votes, 1)
    check_at_least("--new-user-queries", args.new_user_queries, 1)
    check_seed(args)
    check_existing("--truth", args.truth)
    wanted = read_user_ids(args.test_users) if args.test_users else None
    battles = load_input(args)
    codes, names = user_codes(battles)
    data = pairwise_from_battles(battles)
    eval_users = None
    if wanted is not None:
        eval_users = np.array([name in wanted for name in names])
        if not eval_users.any():
            raise UsageError(f"--test-users {args.test_users!r}: none of its ids voted")
    truth = truth_matrix(args.truth, names, data.models) if args.truth else None
    with progress.stages() as stages:
        rows = evaluate_personalisation(
            data,
            codes,
            len(names),
            fraction=args.fraction,
            min_votes=args.min_votes,
            methods=tuple(dict.fromkeys(args.method or ("bt", "elo"))),
            true_ratings=truth,
            eval_users=eval_users,
            rng=args.seed,
            progress=stages,
        )
    document = evaluation_document(rows, args.fraction, args.min_votes, len(names))
    has_prompts = "prompt" in battles.columns and battles["prompt"].notna().any()
    if args.features and has_prompts:
        from features.cold_start import evaluate_cold_start  # heavy imports: only here

        progress.note("evaluating new users predicted from their queries")
        true_ratings = load_truth(args.truth).user_ratings if args.truth else None
        with progress.stages() as stages:
            document["new_users"] = evaluate_cold_start(
                battles,
                test_ids=wanted,
                fraction=args.new_users,
                true_ratings=true_ratings,
                queries=args.new_user_queries,
                rng=args.seed,
                progress=stages,
            ).to_dict()
    table = format_evaluation(document)
    if "new_users" in document:
        section = document["new_users"]
        table += "\n\n" + (format_new_users(section) if args.all else summarise_new_users(section))
    emit(document, table, args.format)


def format_evaluation(document: dict[str, Any]) -> str:
    """The held-out table."""
    title = (
        f"Held-out evaluation: each user's latest {document['fraction']:.0%} of votes "
        f"({document['n_test_votes']} votes, users with >= {document['min_votes']} votes)"
    )
    headers = ("method", "predictor", "log-loss", "accuracy", "brier", "spearman vs truth")
    rows = [
        (
            r["method"],
            r["predictor"],
            f"{r['log_loss']:.4f}",
            f"{r['accuracy']:.4f}",
            f"{r['brier']:.4f}",
            "n/a" if r["spearman_truth"] is None else f"{r['spearman_truth']:.3f}",
        )
        for r in document["results"]
    ]
    return title + "\n\n" + format_table(headers, rows)


def _number(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def format_new_users(section: dict[str, Any]) -> str:
    """The held-out-users tables: rating prediction, then cold to warm."""
    title = (
        f"New users: {section['n_test_users']} held-out users predicted from their queries "
        f"by a model of the other {section['n_train_users']}"
    )
    rating_rows = [r for r in section["ratings"] if r["target"] != "truth"]
    headers = ("target", "method", "predictor", "MAE", "vs mean", "spearman fitted", "vs truth")
    rows = [
        (
            r["target"],
            r["method"],
            r["predictor"],
            f"{r['mae']:.2f}",
            "n/a" if r["improvement"] is None else f"{r['improvement']:+.1%}",
            _number(r["spearman_fitted"]),
            _number(r["spearman_truth"]),
        )
        for r in rating_rows
    ]
    lines = [title, "", format_table(headers, rows)]
    chosen = [r for r in rating_rows if "chosen" in r]
    if chosen:
        lines += ["", "Regression on the profile, chosen by cross-validation over users:"]
        lines += [
            f"  {r['target']} {r['method']}: {r['chosen']}; {r['confidence']:.0%} intervals "
            f"hold {r['interval_coverage_fitted']:.1%} of fitted ratings"
            for r in chosen
        ]
    for r in section["ratings"]:
        if r["target"] == "truth":
            lines += [
                "",
                f"Against the truth: predicted rankings {r['spearman_truth']:.3f}, the "
                f"aggregate {r['spearman_truth_aggregate']:.3f}; "
                f"{r['confidence']:.0%} intervals hold {r['interval_coverage_truth']:.1%} of "
                "true ratings",
            ]
            if r.get("spearman_truth_true_topics") is not None:
                lines.append(
                    "A baseline told each query's true topic (per-topic BT, averaged by the "
                    f"user's topic shares): {r['spearman_truth_true_topics']:.3f}"
                )
    lines += format_later_votes(section["votes"])
    return "\n".join(lines)


def format_later_votes(rows: list[dict[str, Any]]) -> list[str]:
    """The cold-to-warm tables, one for each number of votes a held-out user gave first."""
    lines: list[str] = []
    for known in dict.fromkeys(r["known"] for r in rows):
        block = [r for r in rows if r["known"] == known]
        first = block[0]
        lines += [
            "",
            f"Later votes of held-out users after their first {known} votes: "
            f"{first['n_votes']:,} votes of {first['users']} users "
            "(every held-out user with a later vote)",
            "",
            format_table(
                (
                    "predicted by",
                    "log-loss",
                    "vs aggregate (se)",
                    "accuracy",
                ),
                [
                    (
                        r["way"],
                        f"{r['log_loss']:.4f}",
                        "-"
                        if r["way"] == "aggregate"
                        else f"{r['minus_aggregate']:+.4f} ({_number(r['minus_aggregate_se'], 4)})",
                        f"{r['accuracy']:.3f}",
                    )
                    for r in block
                ],
            ),
        ]
    if lines:
        lines += [
            "",
            "vs aggregate: mean log-loss less the public board's on the same votes "
            "(negative is better), standard error clustered by user; accuracy counts a tie "
            "half.",
        ]
    return lines
