"""The fit's style-controlled board: fitted when the log carries answers, kept in the
fit directory (``style_control.json``), and shaped for public boards.

``plb fit`` of a log whose votes carry both answers (``answer_a``, ``answer_b``: docs/SPEC.md
section 5) fits the Bradley-Terry board with the answers' style held equal
(:func:`features.answer_style.fit_style_control`, sandwich intervals, every model) beside
the raw board of the same votes, and writes its document. The service answers it at
``GET /v1/leaderboard?style=control`` (:func:`public_style_board`); a log without
answers has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from features.answer_style import fit_style_control
from ranking.io.answer_texts import has_answers
from ranking.io.repeat_codes import RepeatCap, cap_battles
from ranking.leaderboard import read_leaderboard
from ranking.provisional import split_provisional

__all__ = ["STYLE_FILE", "fit_style_document", "public_style_board"]

#: The style-controlled board's file in a fit directory.
STYLE_FILE = "style_control.json"


def fit_style_document(
    battles: pd.DataFrame, *, seed: int = 0, repeat_cap: RepeatCap = None
) -> dict[str, Any] | None:
    """The style-controlled board of ``battles`` as a JSON document, or None without
    answers.

    Parameters
    ----------
    battles : pandas.DataFrame
        The fit's battle frame.
    seed : int
        The fit's seed: that of the repeated prompts' sample (the board's intervals are
        sandwich; its odds are drawn with a fixed seed).
    repeat_cap : int, "auto" or None
        The fit's cap on a prompt's votes (:func:`ranking.io.repeat_codes.cap_battles`,
        the votes the public boards keep with the same seed), so that the controlled
        board and the raw one beside it stand on the public boards' votes.

    Returns
    -------
    dict or None
        :meth:`ranking.style_control.results.StyleControl.to_dict` (the controlled board with
        ``style_control``: its scaling, coefficients and the raw ratings and ranks of the
        same votes); None when no vote carries both answers.
    """
    if not has_answers(battles):
        return None
    kept, _ = cap_battles(battles, repeat_cap, rng=seed)
    return fit_style_control(kept, rng=seed).to_dict()


def public_style_board(document: Mapping[str, Any], min_votes: int) -> dict[str, Any]:
    """The stored board as public boards show it: models with ``min_votes`` votes ranked
    (:func:`ranking.provisional.split_provisional`), the others listed apart, and the raw
    rows of the ranked models only.

    Parameters
    ----------
    document : mapping
        A :func:`fit_style_document`.
    min_votes : int
        The fewest votes a ranked model has.
    """
    board = split_provisional(read_leaderboard(document), min_votes)
    ranked = {m.model for m in board.models}
    style = dict(document["style_control"])
    style["raw"] = [row for row in style["raw"] if row["model"] in ranked]
    return {**board.to_dict(), "style_control": style}
