"""The options of prompts repeated too often (``--repeat-cap``), shared by ``plb fit`` and
``plb leaderboard``, and the lines that say what the cap did."""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd

from ranking.io.frames import pairwise_from_battles
from ranking.io.repeat_codes import cap_battles
from ranking.leaderboard import fit_leaderboard
from ranking.repeats import FLOOR, RATIO, board_shift
from service.cli.errors import UsageError

__all__ = ["add_repeat_options", "cap_segment", "check_repeat_options", "format_repeats"]

_AUTO = "auto"


def add_repeat_options(parser: argparse.ArgumentParser) -> None:
    """``--repeat-cap N|auto`` and ``--no-repeat-cap``."""
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


def check_repeat_options(args: argparse.Namespace) -> None:
    """Turn ``args.repeat_cap`` into an int, ``"auto"`` or None; a usage error naming the
    option and the value otherwise."""
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


def cap_segment(args: argparse.Namespace, battles: pd.DataFrame) -> tuple[pd.DataFrame, Any]:
    """``battles`` with ``args.repeat_cap`` applied (``cap_battles``, seeded by
    ``args.seed``), and the document of what it did: the ``repeats`` of ``plb fit``'s
    manifest, its ``shift`` between the Bradley-Terry point fits of the votes before and
    after; None when the cap is off or the log has no prompts."""
    kept, effect = cap_battles(battles, args.repeat_cap, rng=args.seed)
    if effect is None:
        return battles, None
    document: dict[str, Any] = {"option": args.repeat_cap, "checked": True, **effect.to_dict()}
    shift = None
    if effect.n_touched:
        before, after = (
            fit_leaderboard(pairwise_from_battles(frame), interval="none")
            for frame in (battles, kept)
        )
        shift = board_shift(
            {m.model: m.rating for m in before.models}, {m.model: m.rating for m in after.models}
        ).to_dict()
    document["shift"] = shift
    return kept, document
