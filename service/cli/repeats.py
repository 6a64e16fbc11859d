"""The options of prompts repeated too often (``--repeat-cap``), shared by ``plb fit`` and
``plb leaderboard``, and the lines that say what the cap did."""

from __future__ import annotations

import argparse
from typing import Any

from ranking.repeats import FLOOR, MODES, RATIO
from service.cli.common import UsageError

__all__ = ["add_repeat_options", "check_repeat_options", "format_repeats"]

_AUTO = "auto"


def add_repeat_options(parser: argparse.ArgumentParser, *, modes: bool = False) -> None:
    """``--repeat-cap N|auto`` and ``--no-repeat-cap``; with ``modes``, ``--repeat-mode``."""
    parser.add_argument(
        "--repeat-cap",
        default=_AUTO,
        metavar="N|auto",
        help="keep at most N votes of one prompt (compared stripped, case-folded, whitespace "
        "collapsed) in the public boards, a seeded sample of those repeated more, as "
        "FastChat's deduplication does; 'auto' (default): "
        f"{RATIO:g} times the median prompt's votes, at least {FLOOR}. Only logs with "
        "prompts are capped",
    )
    parser.add_argument(
        "--no-repeat-cap",
        dest="repeat_cap",
        action="store_const",
        const=None,
        help="count every vote of every prompt",
    )
    if modes:
        parser.add_argument(
            "--repeat-mode",
            choices=MODES,
            default="sample",
            help="how a prompt over the cap is thinned: 'sample' keeps N of its votes "
            "(default), 'weight' keeps them all, each weighted N/count (Bradley-Terry only)",
        )


def check_repeat_options(args: argparse.Namespace) -> None:
    """Turn ``args.repeat_cap`` into an int, ``"auto"`` or None; a usage error naming the
    option and the value otherwise. ``--repeat-mode weight`` needs ``--method bt``."""
    text = args.repeat_cap
    if text is not None and text != _AUTO:
        try:
            value = int(text)
        except (TypeError, ValueError):
            value = 0
        if value < 1:
            raise UsageError(
                f"--repeat-cap must be a whole number of votes of at least 1 or 'auto', "
                f"not {text!r}"
            )
        args.repeat_cap = value
    if getattr(args, "repeat_mode", "sample") == "weight":
        if args.repeat_cap is None:
            raise UsageError("--repeat-mode weight needs a cap: drop --no-repeat-cap")
        if getattr(args, "method", "bt") != "bt":
            raise UsageError(
                "--repeat-mode weight needs --method bt (online Elo takes no weights); "
                "use --repeat-mode sample with --method elo"
            )


def format_repeats(document: dict[str, Any] | None) -> str:
    """What the cap did, in a line or two: the prompts and votes touched, how far the
    Bradley-Terry board moved; "" when there is nothing to say."""
    if document is None:
        return ""
    if document.get("option") is None:
        return "Repeated prompts: not capped (--no-repeat-cap)"
    if not document.get("checked"):
        return "Repeated prompts: not checked (the log has no prompts)"
    cap, option = document["cap"], document["option"]
    how = (
        f"auto: {RATIO:g} x the median prompt's votes, at least {FLOOR}" if option == _AUTO else ""
    )
    head = f"Repeated prompts (cap {cap:,} votes{'; ' + how if how else ''})"
    if not document["n_repeated"]:
        return (
            f"{head}: none over the cap; the most asked prompt has "
            f"{document['largest']:,} of {document['n_votes']:,} votes "
            f"({document['n_prompts']:,} distinct prompts)"
        )
    removed = document["weight_removed"]
    verb = "dropped" if document["mode"] == "sample" else "of weight removed"
    line = (
        f"{head}: {document['n_repeated']:,} of {document['n_prompts']:,} prompts over the "
        f"cap, {document['n_touched']:,} of {document['n_votes']:,} votes touched, "
        f"{removed:,.0f} votes {verb}"
    )
    shift = document.get("shift")
    if shift:
        rho = shift["spearman"]
        line += (
            f"\nThe Bradley-Terry board beside the uncapped one: Spearman "
            f"{'n/a' if rho is None else f'{rho:.3f}'}, largest move "
            f"{shift['largest_move']:.0f} points ({shift['model']})"
        )
    return line
