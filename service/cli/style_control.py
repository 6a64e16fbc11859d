"""``plb leaderboard --style-control``: the board with the answers' style held equal.

The options (``--style-control``, ``--answers FILE``), their checks before any log is
read, and the board's table and JSON: the controlled board, each style coefficient in
words, and how far each model moved from the raw board of the same votes.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import pandas as pd

from features.answer_style import NO_ANSWERS, coefficient_phrase, fit_style_control
from ranking.io.answer_texts import LLMFAO_ANSWERS, read_answer_texts
from ranking.io.chunks import BattleLogError
from ranking.style_control.results import StyleControl
from service.cli.errors import UsageError
from service.cli.log_shape import log_shape
from service.cli.tables import format_leaderboard, format_table

__all__ = [
    "add_style_options",
    "check_style_options",
    "fit_style_board",
    "format_style_control",
    "with_answers",
]


def add_style_options(parser: argparse.ArgumentParser) -> None:
    """Register ``--style-control`` and ``--answers``."""
    parser.add_argument(
        "--style-control",
        action="store_true",
        help="hold the answers' style equal (length, markdown headers, lists, bold): a "
        "Bradley-Terry board fitted with each vote's style differences as covariates, "
        "beside the raw board of the same votes, with each style coefficient and its "
        "interval; needs each vote's two answers (fields answer_a and answer_b, or "
        "--answers) and --method bt",
    )
    parser.add_argument(
        "--answers",
        metavar="FILE",
        help="with --style-control: the models' answers kept apart from the votes, one "
        "record per model and prompt (fields prompt, model, answer; with --preset llmfao, "
        "LLMFAO's results.jsonl.gz: prompt, name, result), joined to each vote by its "
        "prompt (an id of --prompts, or the text) and its two models",
    )


def check_style_options(args: argparse.Namespace) -> None:
    """Reject style options that cannot work, before any battle log is read."""
    if args.answers and not args.style_control:
        raise UsageError(f"--answers {args.answers!r} is read only with --style-control")
    if args.style_control and args.method != "bt":
        raise UsageError(
            f"--style-control fits a Bradley-Terry board, not --method {args.method}; "
            "use --method bt"
        )


def with_answers(args: argparse.Namespace, battles: pd.DataFrame) -> pd.DataFrame:
    """``battles`` with the answers of ``--answers`` joined, or as they are without it."""
    if not args.answers:
        return battles
    fields = LLMFAO_ANSWERS if args.preset == "llmfao" else {}
    try:
        answers = read_answer_texts(args.answers, prompts=log_shape(args).prompts, **fields)
    except BattleLogError as error:
        raise UsageError(f"--answers: {error}") from None
    try:
        return answers.attach(battles)
    except ValueError as error:
        raise UsageError(f"--answers {args.answers!r}: {error}") from None


def fit_style_board(
    args: argparse.Namespace,
    battles: pd.DataFrame,
    anchor: tuple[str, float] | None,
) -> StyleControl:
    """:func:`features.answer_style.fit_style_control` with the command's options.

    Raises
    ------
    UsageError
        When no vote has both answers, naming the fields and ``--answers``.
    """
    try:
        return fit_style_control(
            battles,
            interval=args.ci,
            rounds=args.rounds,
            confidence=args.confidence,
            anchor=anchor,
            rng=args.seed,
            min_votes=args.min_votes,
        )
    except ValueError as error:
        if str(error) == NO_ANSWERS:
            raise UsageError(
                f"--style-control: {NO_ANSWERS} in {', '.join(args.battles)} (join them "
                "with --answers FILE)"
            ) from None
        raise UsageError(f"--style-control: {error}") from None


def format_style_control(result: StyleControl, battles: str | None = None) -> str:
    """The controlled board's table, its coefficients in words, and the moves from raw."""
    table = format_leaderboard(result.board, battles)
    title, _, rest = table.partition("\n\n")
    table = f"{title.replace(' leaderboard', ' leaderboard, style-controlled', 1)}\n\n{rest}"
    pct = f"{result.board.confidence:.0%}"
    lines = [f"Style coefficients (Elo points, {pct} intervals):"]
    lines += [
        "  "
        + coefficient_phrase(
            c.feature, c.coefficient, c.lower, c.upper, scaling=result.scaling or "mixed"
        )
        for c in result.coefficients
    ] or ["  none: no style covariate varies among these votes"]
    raw = {m.model: m for m in result.raw.models}
    rows: Sequence[tuple[Any, ...]] = [
        (
            m.model,
            raw[m.model].rank,
            m.rank,
            round(raw[m.model].rating, 1),
            round(m.rating, 1),
            f"{m.rating - raw[m.model].rating:+.1f}",
        )
        for m in result.board.models
        if m.model in raw
    ]
    moves = format_table(
        ("model", "raw rank", "rank", "raw rating", "rating", "change"), list(rows)
    )
    return f"{table}\n\n" + "\n".join(lines) + "\n\nRaw board beside it:\n\n" + moves
