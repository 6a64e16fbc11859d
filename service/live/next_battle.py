"""The next-battle document: which pair a person should vote on next, read off their board.

The board is the person's personal leaderboard (``GET /v1/users/{id}/next-battle``) or
the ranking predicted from their queries (``POST /v1/next-battle``, the ``recommend``
document). Its ratings and intervals stand for a Gaussian posterior
(:func:`ranking.next_battle.board_posterior`), and the pair chosen is the one whose vote
is expected to tell most about which model is the person's best
(:func:`ranking.next_battle.next_battle`). docs/SPEC.md section 5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ranking.next_battle import Target, board_posterior, next_battle

__all__ = ["ALTERNATIVES", "next_battle_document"]

#: The next most informative pairs listed beside the one chosen.
ALTERNATIVES = 3
#: Coverage of a board's intervals when the board does not say (recommend's are 95%).
DEFAULT_CONFIDENCE = 0.95

_PASSED_ON = ("user_id", "source", "n_battles", "n_votes", "version")


def next_battle_document(board: Mapping[str, Any], target: Target = "best") -> dict[str, Any]:
    """The next-battle document of a board document.

    Parameters
    ----------
    board : mapping
        A leaderboard or recommend document: ``models`` rows with ``model``, ``rating``,
        ``lower`` and ``upper`` (Elo scale); ``confidence`` when known.
    target : {"best", "ranking"}
        Tell most about which model is best, or about the whole ranking
        (:func:`ranking.next_battle.next_battle`).

    Returns
    -------
    dict
        ``target``, ``model_a``, ``model_b`` (``model_a`` the one rated higher now),
        ``information`` (expected drop in the entropy of ``p_best``, or of the ranking's
        pairwise orders, bits), ``p_a`` (chance that
        ``model_a`` wins), ``p_best_a``, ``p_best_b`` (their chances of being the best),
        ``entropy`` (of ``p_best`` now, bits), ``alternatives`` (the next pairs, each
        ``model_a``, ``model_b``, ``information``, in the board's order), and the
        board's ``user_id``, ``source``, ``n_battles``, ``n_votes``, ``version`` where it
        has them.

    Raises
    ------
    ValueError
        When the board lists fewer than two models.
    """
    rows = list(board["models"])
    if len(rows) < 2:
        raise ValueError(f"a next battle needs two models, and the board lists {len(rows)}")
    names = [str(row["model"]) for row in rows]
    mean, variance = board_posterior(
        [row["rating"] for row in rows],
        [row["lower"] for row in rows],
        [row["upper"] for row in rows],
        float(board.get("confidence") or DEFAULT_CONFIDENCE),
    )
    choice = next_battle(mean, variance, target=target)
    alternatives = [
        {"model_a": names[a], "model_b": names[b], "information": round(bits, 4)}
        for a, b, bits in choice.ranked(ALTERNATIVES + 1)
        if {a, b} != {choice.model_a, choice.model_b}
    ][:ALTERNATIVES]
    document: dict[str, Any] = {
        "target": target,
        "model_a": names[choice.model_a],
        "model_b": names[choice.model_b],
        "information": round(choice.information, 4),
        "p_a": round(choice.p_a, 4),
        "p_best_a": round(float(choice.p_best[choice.model_a]), 4),
        "p_best_b": round(float(choice.p_best[choice.model_b]), 4),
        "entropy": round(choice.entropy, 4),
        "alternatives": alternatives,
    }
    document.update({key: board[key] for key in _PASSED_ON if key in board})
    return document
