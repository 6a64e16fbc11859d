"""``plb fit``: fit everything into a directory for ``plb report`` and ``plb serve``."""

from __future__ import annotations

import argparse
import logging
import sys

from tqdm import tqdm

from ranking.analysis import analyse_users
from ranking.evaluation import MIN_VOTES, evaluate_personalisation, latest_split
from ranking.frames import pairwise_from_battles, user_codes
from ranking.leaderboard import fit_leaderboard
from ranking.types import Method
from service.artifacts import write_fit
from service.cli.common import add_input_options, add_output_options, emit, load_battles
from service.cli.evaluate import evaluation_document, format_evaluation, truth_matrix
from service.cli.tables import format_table

__all__ = ["add_parser"]

log = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb fit``."""
    parser = subparsers.add_parser(
        "fit",
        help="fit aggregate and per-user ratings, agreement and evaluation into DIR",
        description="Fit the aggregate leaderboards (BT and Elo), every user's ratings with "
        "and without shrinkage, their agreement with the aggregate, and the held-out "
        "evaluation, and write them into DIR (replaced atomically) for 'plb report' and "
        "'plb serve'.",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument(
        "--min-battles",
        type=int,
        default=10,
        metavar="N",
        help="summarise agreement over users with at least N votes (default 10)",
    )
    parser.add_argument(
        "--truth", metavar="FILE", help="truth.json of 'plb simulate', for the evaluation"
    )
    parser.add_argument("--fraction", type=float, default=0.2, help="held-out share (0.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    add_input_options(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Execute ``plb fit``."""
    battles = load_battles(args.battles, skip_invalid=args.skip_invalid)
    codes, names = user_codes(battles)
    data = pairwise_from_battles(battles)
    methods: tuple[Method, ...] = ("bt", "elo")
    aggregates = {m: fit_leaderboard(data, method=m, rng=args.seed) for m in methods}
    steps = [(m, s) for m in methods for s in ("cv", "none")]
    analyses = []
    for method, shrinkage in tqdm(steps, desc="per-user fits", file=sys.stderr, disable=None):
        analyses.append(
            analyse_users(
                data,
                codes,
                names,
                method=method,
                shrinkage=shrinkage,  # type: ignore[arg-type]
                min_battles=args.min_battles,
                aggregate=aggregates[method],
                rng=args.seed,
            )
        )
    evaluation = None
    if latest_split(codes, len(names), args.fraction).any():
        truth = truth_matrix(args.truth, names, data.models) if args.truth else None
        results = evaluate_personalisation(
            data, codes, len(names), fraction=args.fraction, true_ratings=truth, rng=args.seed
        )
        evaluation = evaluation_document(results, args.fraction, MIN_VOTES, len(names))
    else:
        log.warning("no user has enough votes for a held-out evaluation; skipped")
    manifest = {
        "battles": [str(p) for p in args.battles],
        "n_battles": len(battles),
        "n_users": len(names),
        "models": list(data.models),
        "min_battles": args.min_battles,
        "seed": args.seed,
        "truth": args.truth,
    }
    out = write_fit(args.out, manifest=manifest, analyses=analyses, evaluation=evaluation)
    document = {
        "out": str(out),
        **manifest,
        "summary": {
            f"{a.ratings.method}/{a.ratings.shrinkage}": a.summary.to_dict() for a in analyses
        },
        "evaluation": evaluation,
    }
    rows = [
        (
            a.ratings.method,
            a.ratings.shrinkage,
            a.summary.users,
            f"{a.summary.mean_spearman:.3f}",
            f"{a.summary.median_spearman:.3f}",
            f"{a.summary.share_near_zero_or_negative:.0%}",
        )
        for a in analyses
    ]
    table = (
        f"Fitted {len(battles)} battles from {len(names)} users into {out}\n\n"
        "Agreement of per-user rankings with the aggregate\n\n"
        + format_table(("method", "shrinkage", "users", "mean", "median", "<= 0.1"), rows)
    )
    if evaluation is not None:
        table += "\n\n" + format_evaluation(evaluation)
    emit(document, table, args.format)
