"""Benchmark W (issue 32): the ranks a person reads, on real logs.

Every board lists its rows by rank, then rating (:func:`ranking.odds.reading_order`), and
each row's rank range is the draws' range widened to hold its rank
(:func:`ranking.odds.rank_range`). This measures, on the real Arena log
(``../shared/data/arena-140k/``) and on LLMFAO's crowd votes
(``../shared/data/llmfao/crowd-comparisons.csv``), Bradley-Terry (sandwich intervals) and
Elo (bootstrap), both with ``--min-votes 20``:

* how often the rank column went back down the rows when they were listed by rating alone
  (before issue 32), and how many rows the reading order places differently;
* on how many rows the draws' range missed the row's own rank ("rank 2, range 3-4"),
  counted as :func:`~ranking.odds.rank_range` widens them;
* that now the rank column never goes back and every rank lies in its range;
* what a person reads: the median width of the ranges, and how many rows read one place.

Nothing here is timed. ``python -m bench.ranking.rank_reading [--quick]`` prints the rows;
``python -m bench.run rank_reading`` writes them into bench/RESULTS.md. ``--quick`` reads
the first 5,000 Arena votes and 20 Elo replicates.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any
from unittest import mock

import numpy as np
import numpy.typing as npt

from bench.common import SHARED_DATA, Row, make_row, quick_option

__all__ = ["ARENA_LOG", "LLMFAO_LOG", "MIN_VOTES", "reading_rows", "run"]

logger = logging.getLogger("bench")

_SHARED = SHARED_DATA
#: The real Arena votes (no user ids, no prompts).
ARENA_LOG = _SHARED / "arena-140k" / "battles.csv.gz"
#: LLMFAO's crowd votes (real voters with ids).
LLMFAO_LOG = _SHARED / "llmfao" / "crowd-comparisons.csv"
#: The minimum of votes a model needs to be ranked (the CLI's default).
MIN_VOTES = 20


def _read(name: str, quick: bool) -> Any:
    """The pairwise data of log ``name`` (``arena`` or ``llmfao``)."""
    from ranking.io.column_map import PRESETS
    from ranking.io.frames import pairwise_from_battles
    from ranking.io.ingest import read_battles

    if name == "arena":
        battles = read_battles(ARENA_LOG).battles
        if quick:
            battles = battles.iloc[:5000]
    else:
        battles = read_battles(LLMFAO_LOG, columns=PRESETS["llmfao"]).battles
    return pairwise_from_battles(battles)


def _back_steps(ranks: Sequence[int]) -> int:
    """How many times a rank column goes back up (a row ranked better than the one above)."""
    return sum(1 for above, below in zip(ranks, ranks[1:], strict=False) if below < above)


def reading_rows(data: Any, label: str, method: str, *, rounds: int) -> list[Row]:
    """The rows of one (log, method) board.

    Parameters
    ----------
    data : PairwiseData
        The votes.
    label : str
        The log's name in the rows.
    method : {"bt", "elo"}
        The rating method.
    rounds : int
        Bootstrap replicates for Elo.

    Returns
    -------
    list of Row
        Before (listed by rating, the draws' range) and now (the board as served).
    """
    import ranking.leaderboard as leaderboard
    from ranking.types import RankedRating

    missed: list[int] = []
    widen = leaderboard.rank_range

    def counting(rank: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike) -> tuple[Any, Any]:
        r, lo, hi = (np.asarray(x) for x in (rank, low, high))
        missed.append(int(((r < lo) | (r > hi)).sum()))
        return widen(rank, low, high)

    options: dict[str, Any] = {"method": method, "min_votes": MIN_VOTES}
    if method == "elo":
        options.update(rounds=rounds, rng=0)
    with mock.patch.object(leaderboard, "rank_range", counting):
        board = leaderboard.fit_leaderboard(data, **options)
    rows = [m for m in board.models if isinstance(m, RankedRating)]
    by_rating = sorted(rows, key=lambda m: -m.rating)
    moved = sum(1 for a, b in zip(rows, by_rating, strict=True) if a.model != b.model)
    ranks = [m.rank for m in rows]
    inside = all(m.rank_lower <= m.rank <= m.rank_upper for m in rows)
    widths = np.array([m.rank_upper - m.rank_lower + 1 for m in rows])
    name = "Bradley-Terry" if method == "bt" else f"Elo ({rounds} replicates)"
    data_text = f"{label}, {name}, {len(rows)} models ranked"
    return [
        make_row(
            "listed by rating (before): rank column goes back",
            data_text,
            ours=f"{_back_steps([m.rank for m in by_rating])} times",
            notes=f"the reading order places {moved} rows differently",
        ),
        make_row(
            "draws' rank range missing the row's rank (before)",
            data_text,
            ours=f"{missed[-1] if missed else 0} of {len(rows)} rows",
            notes="each such range is widened to hold the rank (ranking.odds.rank_range)",
        ),
        make_row(
            "now: rank column goes back / rank outside its range",
            data_text,
            ours=f"{_back_steps(ranks)} times / {'no row' if inside else 'some rows'}",
            goal="0 / no row",
            met=_back_steps(ranks) == 0 and inside,
        ),
        make_row(
            "what a person reads: range width",
            data_text,
            ours=f"median {np.median(widths):g} places",
            notes=f"{int((widths == 1).sum())} of {len(rows)} rows read one place",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    """Run benchmark W on every log that is present.

    Parameters
    ----------
    quick : bool
        The first 5,000 Arena votes, 20 Elo replicates.

    Returns
    -------
    list of Row
        Four rows per (log, method); a skipped row for a log that is absent.
    """
    rounds = 20 if quick else 100
    rows: list[Row] = []
    for label, path in (("Arena 140k", ARENA_LOG), ("LLMFAO crowd", LLMFAO_LOG)):
        if not path.is_file():
            rows.append(
                make_row(
                    "ranks a person reads",
                    label,
                    ours="skipped",
                    notes=f"skipped: {path} is absent",
                )
            )
            continue
        logger.info("rank_reading: %s", label)
        data = _read("arena" if path == ARENA_LOG else "llmfao", quick)
        for method in ("bt", "elo"):
            rows += reading_rows(data, label, method, rounds=rounds)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the rows (``python -m bench.ranking.rank_reading [--quick]``)."""
    quick = quick_option(
        "bench.ranking.rank_reading", __doc__, "5,000 Arena votes, 20 replicates", argv
    )
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for row in run(quick):
        print(row)


if __name__ == "__main__":
    main()
