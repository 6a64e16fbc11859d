"""``plb leaderboard``: the aggregate leaderboard of a battle log."""

from __future__ import annotations

import argparse
import math

import numpy as np

from ranking.io.frames import filter_battles, pairwise_from_battles
from ranking.leaderboard import fit_leaderboard
from ranking.types import Leaderboard, RankedRating
from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import (
    add_input_options,
    add_method_option,
    add_output_options,
    add_seed_option,
    battles_phrase,
    check_at_least,
    check_output,
    check_seed,
    check_share,
    emit,
    read_input,
)
from service.cli.errors import UsageError
from service.cli.repeats import (
    add_repeat_options,
    cap_segment,
    check_repeat_options,
    format_repeats,
)
from service.cli.style_control import (
    add_style_options,
    check_style_options,
    fit_style_board,
    format_style_control,
    with_answers,
)
from service.cli.tables import format_leaderboard, format_matrix, odds_line
from service.cli.where import check_where
from service.cli.window import add_window_options, check_window_options

__all__ = ["DEFAULT_MIN_VOTES", "add_parser", "format_odds", "parse_anchor"]

#: The fewest votes a model needs to be ranked by ``plb leaderboard`` unless told otherwise.
DEFAULT_MIN_VOTES = 20


def parse_anchor(text: str) -> tuple[str, float]:
    """Parse ``MODEL=RATING``; the model name may itself contain ``=``."""
    model, sep, rating = text.rpartition("=")
    try:
        if not sep or not model:
            raise ValueError
        value = float(rating)
    except ValueError:
        raise UsageError(
            f"--anchor {text!r} must look like MODEL=RATING, e.g. gpt-4o=1200"
        ) from None
    if not math.isfinite(value):
        raise UsageError(f"--anchor {text!r}: RATING must be a finite number, not {rating!r}")
    return model, value


def format_odds(board: Leaderboard, shown: int = 3) -> str:
    """The likeliest best models in a line, with their rank ranges; "" without odds.

    At most ``shown`` models, those with a chance of being the best.

    For example ``Likeliest best (95% rank range): kestrel-2-flash 83% (1-3), pico-3b 9%
    (1-4), quill-3-large 6% (1-5)``: ``p_best`` and ``rank_lower``-``rank_upper`` of the
    JSON (docs/SPEC.md section 2).
    """
    rows = [m for m in board.models if isinstance(m, RankedRating)]
    if not rows or len(rows) != len(board.models):
        return ""
    odds = [(m.model, m.p_best, m.rank_lower, m.rank_upper) for m in rows]
    return odds_line(odds, board.confidence, shown)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb leaderboard``."""
    parser = subparsers.add_parser(
        "leaderboard",
        help=COMMANDS["leaderboard"].help,
        description="Fit the aggregate Bradley-Terry or online Elo leaderboard of one or more "
        "battle logs, with 95% intervals and interval-aware ranks (rank = 1 + the number of "
        "models whose lower bound is above this model's upper bound).",
    )
    add_method_option(parser)
    parser.add_argument(
        "--ci",
        choices=("sandwich", "bootstrap", "none"),
        default=None,
        help="interval method; default: sandwich for bt, bootstrap for elo",
    )
    parser.add_argument("--rounds", type=int, default=100, help="bootstrap rounds (default 100)")
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="interval coverage (default 0.95)"
    )
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="COL=VALUE",
        help="keep only battles whose label COL equals VALUE (repeatable; all must match); "
        "labels are the log's extra columns, never user_id, prompt, battle_id, tstamp or "
        "the vote's own fields",
    )
    add_window_options(parser)
    parser.add_argument("--anchor", metavar="MODEL=RATING", help="pin one model's rating")
    parser.add_argument(
        "--min-votes",
        type=int,
        default=DEFAULT_MIN_VOTES,
        metavar="N",
        help="rank only models with at least N votes; the others are listed below the "
        f"table as provisional (default {DEFAULT_MIN_VOTES}; 0 ranks every model)",
    )
    add_seed_option(parser, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--matrix", action="store_true", help="also print the predicted win-probability matrix"
    )
    add_style_options(parser)
    add_repeat_options(parser)
    add_input_options(parser)
    add_output_options(parser, exports=True)
    parser.set_defaults(run=run)


def check_options(args: argparse.Namespace) -> None:
    """Reject options that cannot work together, before the battle log is read."""
    check_at_least("--rounds", args.rounds, 1)
    check_at_least("--min-votes", args.min_votes, 0)
    check_share("--confidence", args.confidence)
    check_seed(args)
    check_output(args.format)
    check_style_options(args)
    check_repeat_options(args)
    if args.method == "elo" and args.ci == "sandwich":
        raise UsageError(
            "--ci sandwich needs --method bt (it comes from the Bradley-Terry likelihood, "
            "which online Elo has not); use --ci bootstrap or --ci none with --method elo"
        )


def run(args: argparse.Namespace) -> None:
    """Execute ``plb leaderboard``."""
    check_options(args)
    anchor = parse_anchor(args.anchor) if args.anchor else None
    window = check_window_options(args)
    where = check_where(args.where, args.battles)  # reads the logs' headers, no rows
    log = read_input(args)
    segment = filter_battles(log.battles, where)
    if segment.empty:
        raise UsageError(
            f"no battles match {' and '.join(args.where)} "
            f"(of {len(log.battles):,} battles in {', '.join(args.battles)})"
        )
    segment = window.apply(segment, args.battles)
    segment, repeats = cap_segment(args, segment)  # --repeat-cap: a prompt's votes at most N
    style = None  # --style-control: the board with the answers' style held equal
    with progress.stages() as stages:
        if args.style_control:
            style = fit_style_board(args, with_answers(args, segment), anchor)
            board = style.board
        else:
            board = fit_leaderboard(
                pairwise_from_battles(segment),
                method=args.method,
                interval=args.ci,
                rounds=args.rounds,
                confidence=args.confidence,
                anchor=anchor,
                rng=args.seed,
                progress=stages,
                min_votes=args.min_votes,
            )
    document = board.to_dict() if style is None else style.to_dict()
    if where:
        document["where"] = dict(where)
    if not window.is_open:
        document["window"] = window.to_dict()
    if repeats is not None:
        document["repeats"] = repeats
    conditions = [*args.where, *window.phrase()]
    phrase = battles_phrase(board.n_battles, log, conditions)
    table = (
        format_leaderboard(board, phrase) if style is None else format_style_control(style, phrase)
    )
    odds = format_odds(board)
    if odds:  # the answer under the title, above the table it comes from
        title, _, rest = table.partition("\n\n")
        table = f"{title}\n{odds}\n\n{rest}"
    if repeats is not None and repeats["n_repeated"]:
        table += "\n\n" + format_repeats(repeats)
    if args.matrix:
        names = [m.model for m in board.models]
        document["win_probability"] = {
            row: dict(zip(names, np.round(p, 4).tolist(), strict=True))
            for row, p in zip(names, board.win_matrix(), strict=True)
        }
        table += "\n\n" + format_matrix(board)
    emit(document, table, args.format)
