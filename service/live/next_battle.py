"""The next-battle document: which pair a person should vote on next, read off their board.

The board is the person's personal leaderboard (``GET /v1/users/{id}/next-battle``) or
the ranking predicted from their queries (``POST /v1/next-battle``, the ``recommend``
document). Its ratings and intervals stand for a Gaussian posterior
(:func:`ranking.next_battle.board_posterior`), and the pair chosen is the one whose vote
is expected to tell most about which model is the person's best
(:func:`ranking.next_battle.next_battle`). docs/SPEC.md section 5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ranking.next_battle import Target, board_posterior, next_battle

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ALTERNATIVES", "INFORMATIVE_BITS", "last_pair", "next_battle_document"]

#: The next most informative pairs listed beside the one chosen.
ALTERNATIVES = 3
#: Expected information (bits) from which a battle is said to tell the models apart
#: (``informative``): a tenth of the most one decisive vote can tell (1 bit). Below it,
#: the vote is still the most useful one, but it would hardly change the odds.
INFORMATIVE_BITS = 0.1
#: Coverage of a board's intervals when the board does not say (recommend's are 95%).
DEFAULT_CONFIDENCE = 0.95

_PASSED_ON = ("user_id", "source", "n_battles", "n_votes", "version")


def last_pair(votes: Sequence[Any] | pd.DataFrame | None) -> tuple[str, str] | None:
    """The two models of the person's latest vote (the last record, or row), if any.

    Records are battle records (docs/SPEC.md section 1) as a request gives them; one that
    does not name two models as strings gives None (its checks are the recommend's).
    """
    if votes is None or not len(votes):
        return None
    row: Any = votes.iloc[-1].to_dict() if hasattr(votes, "iloc") else votes[-1]
    if not isinstance(row, Mapping):
        return None
    a, b = row.get("model_a"), row.get("model_b")
    return (a, b) if isinstance(a, str) and isinstance(b, str) else None


def next_battle_document(
    board: Mapping[str, Any],
    target: Target = "best",
    last: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The next-battle document of a board document.

    Parameters
    ----------
    board : mapping
        A leaderboard or recommend document: ``models`` rows with ``model``, ``rating``,
        ``lower`` and ``upper`` (Elo scale); ``confidence`` when known.
    target : {"best", "ranking"}
        Tell most about which model is best, or about the whole ranking
        (:func:`ranking.next_battle.next_battle`).
    last : tuple of (str, str), optional
        The models of the person's latest vote (:func:`last_pair`): the board counts it
        already, and where that pair is still the most informative the best *other* pair
        is suggested (``skipped`` names it), so a person is never asked the same question
        twice in a row. Ignored unless the board lists both.

    Returns
    -------
    dict
        ``target``, ``model_a``, ``model_b`` (``model_a`` the one rated higher now),
        ``information`` (expected drop in the entropy of ``p_best``, or of the ranking's
        pairwise orders, bits), ``p_a`` (chance that
        ``model_a`` wins), ``p_best_a``, ``p_best_b`` (their chances of being the best),
        ``entropy`` (of ``p_best`` now, bits), ``alternatives`` (the next pairs, each
        ``model_a``, ``model_b``, ``information``, in the board's order), ``informative``
        (whether ``information`` reaches :data:`INFORMATIVE_BITS`: only then may a page
        say the vote would tell the models apart), ``skipped`` (the pair of ``last``
        with its ``information``, where it was passed over; absent otherwise), and the
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
    index = {name: i for i, name in enumerate(names)}
    avoid = None
    if last is not None and last[0] in index and last[1] in index and last[0] != last[1]:
        avoid = (index[last[0]], index[last[1]])
    choice = next_battle(mean, variance, target=target, avoid=avoid)
    # The odds the board itself shows, where it shows them (ranking.odds.interval_odds for
    # predicted boards): the page, the API and the CLI quote one number (issue 32).
    shown = [row.get("p_best") for row in rows]
    p_best = choice.p_best if None in shown else [float(p) for p in shown]
    alternatives = [
        {"model_a": names[a], "model_b": names[b], "information": round(bits, 4)}
        for a, b, bits in choice.ranked(ALTERNATIVES + 2)
        if {a, b} != {choice.model_a, choice.model_b}
        and (choice.skipped is None or {a, b} != set(choice.skipped[:2]))
    ][:ALTERNATIVES]
    document: dict[str, Any] = {
        "target": target,
        "model_a": names[choice.model_a],
        "model_b": names[choice.model_b],
        "information": round(choice.information, 4),
        "p_a": round(choice.p_a, 4),
        "p_best_a": round(float(p_best[choice.model_a]), 4),
        "p_best_b": round(float(p_best[choice.model_b]), 4),
        "entropy": round(choice.entropy, 4),
        "alternatives": alternatives,
        "informative": bool(choice.information >= INFORMATIVE_BITS),
    }
    if choice.skipped is not None:
        a, b, bits = choice.skipped
        document["skipped"] = {
            "model_a": names[a],
            "model_b": names[b],
            "information": round(bits, 4),
        }
    document.update({key: board[key] for key in _PASSED_ON if key in board})
    return document
