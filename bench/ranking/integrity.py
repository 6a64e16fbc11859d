"""Benchmark J (issue 15): voter integrity against random clickers and a brigade.

On ``plb simulate`` worlds with 5% random voters (coin-flip votes) and a 2% brigade (every
battle shows one of the 3 weakest models, always voted the winner), three aggregate
Bradley-Terry boards (sandwich intervals) are compared: *clean* (the attackers' votes
left out, as the truth knows them), *attacked* (every vote) and *defended* (a daily cap of
:data:`DAILY_CAP` votes per user, then the votes of the users
:func:`ranking.integrity.detect_anomalous_voters` flags left out). Reported: the top 5 of
each, the weak model's rating and rank in each, and the detector's recall of random
voters and of brigaders and its false-positive rate among honest users; for random voters
also the ranking quality of the random test's p-values (AUC, random against honest) and
the recall and false positives at the looser level :data:`LOOSE_LEVEL`.

The random test asks whether a user's votes agree with each other (their own
leave-one-vote-out slope, and their preference strength), never whether they agree with
the crowd. This world's honest users hardly predict their own votes (their preferences
move with the topic of each query, and a fifth of their votes are ties), so at ~60 votes
a coin flipper is ranked above most honest users but seldom told apart at a 1% false
discovery rate.

Goals: the defended weak model within its clean interval (the brigade moves it by no
more than its interval); false positives under 2% of honest users.
"""

from __future__ import annotations

import time

import numpy as np

from bench.common import Row, make_row
from data.simulate import simulate
from ranking.integrity.daily_cap import daily_cap_mask
from ranking.integrity.voters import detect_anomalous_voters
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.leaderboard import fit_leaderboard
from ranking.types import Leaderboard

__all__ = ["DAILY_CAP", "run"]

RANDOM_SHARE = 0.05
BRIGADE_SHARE = 0.02
#: Most votes of one user counted per UTC day.
DAILY_CAP = 50
#: Goal: false positives among honest users.
MAX_FALSE_POSITIVE = 0.02
SEEDS = (0, 1)
#: Random voters with at least this many votes are counted apart in the recall.
HEAVY_VOTES = 150
#: A looser Benjamini-Hochberg level, to show the trade of recall for false positives.
LOOSE_LEVEL = 0.1


def _auc(p: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> float:
    """Probability that a random voter's p-value is below an honest user's (ties half)."""
    pos, neg = np.sort(p[positive]), np.sort(p[negative])
    below = np.searchsorted(neg, pos, side="right") + np.searchsorted(neg, pos, side="left")
    return float((neg.size - below / 2.0).sum() / max(pos.size * neg.size, 1))


def _top(board: Leaderboard, n: int = 5) -> str:
    return ", ".join(m.model for m in board.models[:n])


def _weak(board: Leaderboard, model: str) -> str:
    row = board[model]
    return f"{row.rating:.0f} [{row.lower:.0f}, {row.upper:.0f}], rank {row.rank}"


def run_seed(n_users: int, per_user: int, n_models: int, seed: int) -> list[Row]:
    """The rows of one simulated world."""
    sim = simulate(
        n_users, per_user, n_models, rng=seed, random_voters=RANDOM_SHARE, brigade=BRIGADE_SHARE
    )
    assert sim.attackers is not None and sim.brigade_model is not None
    battles = sim.battles
    data = pairwise_from_battles(battles, models=sim.models)
    codes, names = user_codes(battles)
    stamps = battles["tstamp"].to_numpy(dtype=np.float64)[vote_order(battles)]
    kind = sim.attackers.reindex(list(names)).fillna("honest").to_numpy(dtype=object)
    start = time.perf_counter()
    capped = daily_cap_mask(codes, stamps, DAILY_CAP)
    report = detect_anomalous_voters(data.select(capped), codes[capped], names)
    seconds = time.perf_counter() - start
    loose = detect_anomalous_voters(data.select(capped), codes[capped], names, level=LOOSE_LEVEL)
    keep = capped & report.vote_mask(codes)
    boards = {
        "clean": fit_leaderboard(data.select(kind[codes] == "honest")),
        "attacked": fit_leaderboard(data),
        "defended": fit_leaderboard(data.select(keep)),
    }
    weak = sim.brigade_model
    label = (
        f"plb simulate seed {seed}: {n_users:,} users x ~{per_user} votes, {n_models} models, "
        f"{len(battles):,} votes; 5% random, 2% brigade for {weak}"
    )
    clean = boards["clean"][weak]
    rows = [
        make_row(
            f"public top 5, {name}",
            label,
            ours=_top(board),
            notes=f"{board.n_battles:,} votes counted",
        )
        for name, board in boards.items()
    ]
    for name in ("attacked", "defended"):
        moved = boards[name][weak].rating - clean.rating
        within = clean.lower <= boards[name][weak].rating <= clean.upper
        rows.append(
            make_row(
                f"weak model {weak}, {name}",
                label,
                ours=_weak(boards[name], weak),
                reference=f"clean: {_weak(boards['clean'], weak)}",
                goal="within the clean interval" if name == "defended" else "",
                met=within if name == "defended" else None,
                notes=f"moved {moved:+.0f} Elo from clean"
                + ("" if name == "defended" else f" ({'within' if within else 'outside'})"),
            )
        )
    flagged = report.flagged_users
    votes = np.bincount(codes[codes >= 0], minlength=len(names))
    heavy = (kind == "random") & (votes >= HEAVY_VOTES)
    for attack in ("random", "brigade"):
        who = kind == attack
        rows.append(
            make_row(
                f"detector recall, {attack} voters",
                label,
                ours=f"{flagged[who].mean():.1%} ({int(flagged[who].sum())} of {int(who.sum())})",
                notes=f"detection {seconds:.2f} s"
                if attack == "brigade"
                else f"{int(flagged[heavy].sum())} of {int(heavy.sum())} with at least "
                f"{HEAVY_VOTES} votes; self-consistency tests: this world's honest users "
                "hardly predict their own votes, so power comes only with many votes",
            )
        )
    honest = kind == "honest"
    who = kind == "random"
    tested = np.bincount(codes[capped & (codes >= 0)], minlength=len(names)) >= 20
    assert report.random_p is not None
    auc = _auc(report.random_p, who & tested, honest & tested)
    rows.append(
        make_row(
            f"detector recall, random voters, level {LOOSE_LEVEL}",
            label,
            ours=f"{loose.flagged_users[who].mean():.1%} ({int(loose.flagged_users[who].sum())} "
            f"of {int(who.sum())})",
            notes=f"false positives {loose.flagged_users[honest].mean():.2%} of honest users; "
            f"AUC of the random p-values, random against honest (20+ votes): {auc:.2f}",
        )
    )
    rate = float(flagged[honest].mean())
    rows.append(
        make_row(
            "detector false positives, honest users",
            label,
            ours=f"{rate:.2%} ({int(flagged[honest].sum())} of {int(honest.sum())})",
            goal=f"< {MAX_FALSE_POSITIVE:.0%}",
            met=rate < MAX_FALSE_POSITIVE,
            notes=f"Benjamini-Hochberg level {report.level} per test; daily cap {DAILY_CAP} "
            f"dropped {int((~capped).sum())} votes",
        )
    )
    return rows


def run(quick: bool = False) -> list[Row]:
    """Run benchmark J; ``quick`` uses a tiny world and one seed.

    Returns
    -------
    list of Row
        Per seed: the three top 5s, the weak model attacked and defended, recall, false
        positives.
    """
    if quick:
        return run_seed(150, 20, 8, 0)
    rows: list[Row] = []
    for seed in SEEDS:
        rows += run_seed(2_000, 60, 15, seed)
    return rows
