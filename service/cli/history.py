"""``plb history``: a Bradley-Terry board a period of a battle log, and the drift flags."""

from __future__ import annotations

import argparse

from ranking.history import DEFAULT_LEVEL, DEFAULT_MIN_VOTES, RatingHistory, fit_history
from ranking.io.frames import pairwise_from_battles
from ranking.windows import parse_unit
from service.cli.commands import COMMANDS
from service.cli.common import (
    add_input_options,
    add_output_options,
    battles_phrase,
    check_at_least,
    check_share,
    emit,
    read_input,
)
from service.cli.errors import UsageError
from service.cli.tables import format_table
from service.cli.window import add_window_options, check_window_options
from service.pipeline.history import NotDated, dated

__all__ = ["add_parser", "format_history"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb history``."""
    parser = subparsers.add_parser(
        "history",
        help=COMMANDS["history"].help,
        description="Cut the votes into periods by their tstamp, fit a Bradley-Terry board a "
        "period (sandwich intervals), and flag the models whose rating moved between two "
        "consecutive periods beyond what their intervals allow (a z-test, Holm-corrected "
        "over every model and period).",
    )
    parser.add_argument(
        "--unit",
        default="auto",
        metavar="UNIT",
        help="periods: month, week (ISO, Monday to Monday), day (all in UTC), a number N of "
        "equal periods, or auto (default): the coarsest of month, week, day giving at least "
        "4 periods with votes, else 4 equal periods",
    )
    parser.add_argument(
        "--level",
        type=float,
        default=DEFAULT_LEVEL,
        help="family-wise rate of false drift alarms, over every model and period "
        f"(default {DEFAULT_LEVEL})",
    )
    parser.add_argument(
        "--min-votes",
        type=int,
        default=DEFAULT_MIN_VOTES,
        metavar="N",
        help="rank (and test) a model in a period only with at least N votes there "
        f"(default {DEFAULT_MIN_VOTES})",
    )
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="interval coverage (default 0.95)"
    )
    add_window_options(parser)
    add_input_options(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


def format_history(history: RatingHistory, battles: str) -> str:
    """Each model's rating per period (most recent rating first), and the drift flags."""
    labels = [p.label for p in history.periods]
    ratings: dict[str, dict[str, float]] = {}
    for period in history.periods:
        for row in period.board.models:
            ratings.setdefault(row.model, {})[period.label] = row.rating
    moves: dict[str, list[str]] = {}
    for test in history.tests:
        if test.flagged:
            moves.setdefault(test.model, []).append(f"{test.after} {test.change:+.0f}")

    def latest(model: str) -> float:
        return next(ratings[model][label] for label in reversed(labels) if label in ratings[model])

    models = sorted(ratings, key=lambda m: -latest(m))
    rows = [
        [m, *(ratings[m].get(label, "") for label in labels), ", ".join(moves.get(m, []))]
        for m in models
    ]
    unit = "equal periods" if history.unit == "equal" else f"{history.unit}s"
    head = (
        f"Bradley-Terry ratings by period ({len(labels)} {unit}, UTC) from {battles}; "
        f"drift flagged at a family-wise {history.level:.0%} (Holm)"
    )
    drifting = ", ".join(history.drifting) or "none"
    table = format_table(["model", *labels, "drift (period, change)"], rows)
    return f"{head}\nDrifting: {drifting}\n\n{table}"


def run(args: argparse.Namespace) -> None:
    """Execute ``plb history``."""
    try:
        unit = parse_unit(args.unit)
    except ValueError as error:
        raise UsageError(f"--unit: {error}") from None
    check_share("--level", args.level)
    check_share("--confidence", args.confidence)
    check_at_least("--min-votes", args.min_votes, 1)
    window = check_window_options(args)
    log = read_input(args)
    battles = window.apply(log.battles, args.battles)
    try:
        ordered, stamps = dated(battles)
    except NotDated:
        raise UsageError(
            f"the votes of {', '.join(args.battles)} carry no tstamp, so they have no history "
            "(name the column holding unix seconds with --columns tstamp=COLUMN)"
        ) from None
    history = fit_history(
        pairwise_from_battles(ordered),
        stamps,
        unit=unit,
        confidence=args.confidence,
        level=args.level,
        min_votes=args.min_votes,
    )
    document = history.to_dict()
    if not window.is_open:
        document["window"] = window.to_dict()
    phrase = battles_phrase(history.n_battles, log, window.phrase())
    emit(document, format_history(history, phrase), args.format)
