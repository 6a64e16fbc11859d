"""Benchmark M (issue 19, item 5): do the intervals the product shows cover what they claim?

Every kind of interval the product shows is checked on ``plb simulate`` worlds: the
aggregate Bradley-Terry board (sandwich, the default, and ``--ci bootstrap``), the
aggregate Elo board (bootstrap), each user's shrunk Bradley-Terry board (Laplace), and the
ratings predicted for a new user from their queries (``recommend``), alone and blended
with their votes; the rank ranges of the boards beside them. A per-user Elo board shows
no interval (``lower == upper``), so there is nothing of it to check.

What an interval should cover
-----------------------------
An interval estimates a quantity of the world the votes come from, and the methods do not
all estimate the same one, nor the simulator's truth:

* The **truth** of ``truth.json`` is each user's expected utility under their own topic
  mixture on the Elo scale (CENTER 1000), and the population's is the mean over users,
  every user weighing the same. Bradley-Terry with ties counted half estimates a
  compressed version of it (the simulator's Davidson ties make the slope about 0.75), and
  the aggregate weighs users by their votes. Coverage of the truth is reported, but no
  interval of a misspecified model can be expected to reach it.
* The **BT functional** is what the Bradley-Terry fit converges to with unlimited votes
  from the same world. Each world is therefore drawn as a *pool* of ``POOL`` times the
  arena's votes (same users and models: ``plb simulate`` draws them before the votes), and
  the arena is a random ``1/POOL`` of the pool, in time order. The BT fit of the whole pool
  is the aggregate target; each user's plain BT fit of their pool votes is their target.
  The pool is finite, so a target has an error of its own (given in the notes).
* The **Elo functional** at this arena size: online Elo depends on the order and the
  number of votes (with K = 4 it lags and scatters), so what a bootstrap of an arena of
  ``n`` votes estimates is the distribution of online Elo over fresh arenas of ``n`` votes
  from the same world, in random order. Its target is the median of ``TARGET_ROUNDS``
  such arenas drawn from the pool (recentred to average 1000, as the board is); the same
  in time order is reported beside it, and so is how often the interval holds *one*
  fresh arena's online Elo (what the bootstrap's spread describes). The old point
  (online Elo in the one time order, the interval widened to hold it) is reported too,
  for comparison.

Coverage is the share of (world, model) intervals, or (world, user, model) for personal
and predicted ones, that hold their target; nominal is 95%. Predicted intervals are for
users held out of the predictor's fit whole (a fifth, ``HOLDOUT``), with the TF-IDF
embedding so that nothing is downloaded.

Run ``python -m bench.ranking.coverage [--quick]`` for the Markdown table of docs/evaluation.md;
``python -m bench.run coverage`` writes the rows into bench/RESULTS.md.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from bench.common import (
    TABLES_DIR,
    Row,
    make_row,
    markdown_table,
    quick_option,
    table_text,
    write_table,
)
from data.simulate import simulate
from data.truth import Simulation
from ranking.elo import online_elo, online_elo_grouped
from ranking.intervals.elo_bootstrap import bootstrap_elo
from ranking.intervals.summary import percentile_intervals
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.leaderboard import fit_leaderboard
from ranking.odds import competition_ranks, z_value
from ranking.types import CENTER, Leaderboard, PairwiseData
from ranking.users import fit_user_ratings, user_rank_odds
from service.pipeline.config import FitConfig
from service.pipeline.steps import build_predictor

__all__ = ["Size", "Tally", "coverage_table", "measure", "run"]

NOMINAL = 0.95
#: Share of users held out of the predictor's fit.
HOLDOUT = 0.2
#: Goal, for the intervals measured against what their method estimates.
TOLERANCE = 0.03


@dataclass(frozen=True)
class Size:
    """One configuration of the experiment."""

    seeds: tuple[int, ...]
    users: int
    per_user: int
    models: int
    pool: int
    target_rounds: int
    #: Worlds (the first ones) whose predicted intervals are measured too.
    predicted_worlds: int

    @property
    def label(self) -> str:
        return (
            f"{len(self.seeds)} worlds × {self.users} users × {self.per_user} votes, "
            f"{self.models} models; pool {self.pool}×"
        )


FULL = Size(tuple(range(12)), 400, 60, 15, 20, 200, 12)
QUICK = Size((0, 1), 60, 30, 6, 4, 20, 1)


@dataclass
class Tally:
    """Hits, intervals and summed widths of one (interval, target) pair."""

    hits: int = 0
    total: int = 0
    width: float = 0.0
    worlds: list[float] = field(default_factory=list)

    def add(self, target: npt.ArrayLike, lower: npt.ArrayLike, upper: npt.ArrayLike) -> None:
        """Count the intervals ``[lower, upper]`` holding ``target`` (NaN left out)."""
        t, lo, hi = (np.asarray(x, dtype=np.float64) for x in (target, lower, upper))
        known = np.isfinite(t) & np.isfinite(lo) & np.isfinite(hi)
        inside = (lo[known] <= t[known]) & (t[known] <= hi[known])
        self.hits += int(inside.sum())
        self.total += int(known.sum())
        self.width += float((hi[known] - lo[known]).sum())
        if known.any():
            self.worlds.append(float(inside.mean()))

    @property
    def coverage(self) -> float:
        return self.hits / self.total if self.total else float("nan")

    @property
    def mean_width(self) -> float:
        return self.width / self.total if self.total else float("nan")

    @property
    def spread(self) -> float:
        """Standard error of the coverage across worlds (worlds are independent)."""
        w = np.asarray(self.worlds)
        return float(w.std(ddof=1) / np.sqrt(w.size)) if w.size > 1 else float("nan")


#: (interval, where the product shows it, target) in the order of the table.
KINDS: tuple[tuple[str, str, str], ...] = (
    ("aggregate BT, sandwich", "`plb leaderboard` (default), `/v1/leaderboard`", "BT functional"),
    ("aggregate BT, sandwich", "", "truth (population)"),
    ("aggregate BT, bootstrap", "`plb leaderboard --ci bootstrap`", "BT functional"),
    ("aggregate BT, bootstrap", "", "truth (population)"),
    (
        "aggregate Elo, bootstrap median",
        "`plb leaderboard --method elo`",
        "Elo functional, random order",
    ),
    ("aggregate Elo, bootstrap median", "", "Elo functional, time order"),
    ("aggregate Elo, bootstrap median", "", "one fresh arena's Elo, random order"),
    ("aggregate Elo, bootstrap median", "", "one fresh arena's Elo, time order"),
    ("aggregate Elo, bootstrap median", "", "BT functional"),
    ("aggregate Elo, bootstrap median", "", "truth (population)"),
    ("aggregate Elo, before (one-order point)", "the old board", "Elo functional, random order"),
    (
        "personal BT, shrunk (Laplace)",
        "`plb users`, `/v1/users/{id}/leaderboard`",
        "user's BT functional",
    ),
    ("personal BT, shrunk (Laplace)", "", "truth (user)"),
    ("predicted from queries", "`plb recommend`, `POST /v1/recommend`", "user's BT functional"),
    ("predicted from queries", "", "truth (user)"),
    ("blended with the user's votes", "`recommend` with votes", "user's BT functional"),
    ("blended with the user's votes", "", "truth (user)"),
    ("rank range, aggregate BT", "`rank_lower`, `rank_upper`", "rank of the BT functional"),
    ("rank range, aggregate Elo", "`rank_lower`, `rank_upper`", "rank of the Elo functional"),
    ("rank range, personal BT", "`rank_lower`, `rank_upper`", "rank of the user's BT functional"),
)


def _board(board: Leaderboard, models: tuple[str, ...]) -> tuple[np.ndarray, ...]:
    rows = [board[m] for m in models]
    return (
        np.array([r.lower for r in rows]),
        np.array([r.upper for r in rows]),
        np.array([getattr(r, "rank_lower", np.nan) for r in rows], dtype=np.float64),
        np.array([getattr(r, "rank_upper", np.nan) for r in rows], dtype=np.float64),
    )


def _elo_functional(
    pool: PairwiseData, n: int, rounds: int, gen: np.random.Generator, *, shuffle: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Online Elo of ``rounds`` fresh arenas of ``n`` votes from ``pool``, in random
    (``shuffle``) or time order: their median, recentred to average ``CENTER``, and the
    ``(rounds, k)`` runs themselves (each averages ``CENTER``)."""
    total = len(pool.outcomes)
    picks = []
    for _ in range(rounds):
        chosen = gen.choice(total, size=n, replace=False)
        picks.append(gen.permutation(chosen) if shuffle else np.sort(chosen))
    rows = np.concatenate(picks)
    groups = np.repeat(np.arange(rounds), n)
    ratings = online_elo_grouped(
        pool.n_models, pool.matchups[rows], pool.outcomes[rows], groups, rounds
    )
    median = np.median(ratings, axis=0)
    return median - median.mean() + CENTER, ratings


def _user_rows(names: tuple[str, ...], reference: tuple[str, ...]) -> np.ndarray:
    index = pd.Index(reference)
    return index.get_indexer(pd.Index(names))


def measure(seed: int, size: Size, tallies: dict[tuple[str, str], Tally]) -> dict[str, float]:
    """Add one world's intervals to ``tallies``; returns notes (target errors)."""

    def tally(kind: str, target: str) -> Tally:
        return tallies.setdefault((kind, target), Tally())

    world: Simulation = simulate(size.users, size.per_user * size.pool, size.models, rng=seed)
    models = world.models
    pool_battles = world.battles
    stamps = pool_battles["tstamp"].to_numpy()
    if np.any(np.diff(stamps) < 0):
        raise RuntimeError("the simulator's log is expected in time order")
    gen = np.random.default_rng([seed, 19])
    pool = pairwise_from_battles(pool_battles, models=models)
    n = len(pool_battles) // size.pool
    keep = np.zeros(len(pool_battles), dtype=bool)
    keep[gen.choice(len(pool_battles), size=n, replace=False)] = True
    arena_battles = pool_battles.loc[keep].reset_index(drop=True)
    arena = pool.select(keep)

    # Targets.
    bt_target = np.array(
        [fit_leaderboard(pool, method="bt", interval="none")[m].rating for m in models]
    )
    truth_pop = world.population_ratings.reindex(list(models)).to_numpy()
    elo_random, runs_random = _elo_functional(pool, n, size.target_rounds, gen, shuffle=True)
    elo_time, runs_time = _elo_functional(pool, n, size.target_rounds, gen, shuffle=False)
    pool_codes, pool_names = user_codes(pool_battles)
    pool_users = fit_user_ratings(pool, pool_codes, len(pool_names), shrinkage="none")
    user_target_sd = (pool_users.upper - pool_users.lower) / (2 * z_value(NOMINAL))
    truth_users = world.user_ratings.reindex(index=list(pool_names), columns=list(models))

    # Aggregate boards, as the product fits them.
    sandwich = fit_leaderboard(arena, method="bt")
    lo, hi, rlo, rhi = _board(sandwich, models)
    tally("aggregate BT, sandwich", "BT functional").add(bt_target, lo, hi)
    tally("aggregate BT, sandwich", "truth (population)").add(truth_pop, lo, hi)
    bt_rank = competition_ranks(bt_target)
    tally("rank range, aggregate BT", "rank of the BT functional").add(bt_rank, rlo, rhi)
    boot = fit_leaderboard(arena, method="bt", interval="bootstrap", rng=seed)
    lo, hi, _, _ = _board(boot, models)
    tally("aggregate BT, bootstrap", "BT functional").add(bt_target, lo, hi)
    tally("aggregate BT, bootstrap", "truth (population)").add(truth_pop, lo, hi)
    elo = fit_leaderboard(arena, method="elo", rng=seed)
    lo, hi, rlo, rhi = _board(elo, models)
    kind = "aggregate Elo, bootstrap median"
    tally(kind, "Elo functional, random order").add(elo_random, lo, hi)
    tally(kind, "Elo functional, time order").add(elo_time, lo, hi)
    tally(kind, "BT functional").add(bt_target, lo, hi)
    tally(kind, "truth (population)").add(truth_pop, lo, hi)
    for run_random, run_time in zip(runs_random, runs_time, strict=True):
        tally(kind, "one fresh arena's Elo, random order").add(run_random, lo, hi)
        tally(kind, "one fresh arena's Elo, time order").add(run_time, lo, hi)
    elo_rank = competition_ranks(elo_random)
    tally("rank range, aggregate Elo", "rank of the Elo functional").add(elo_rank, rlo, rhi)
    # The board before: the one-order point, the same replicates' interval widened to it.
    samples = bootstrap_elo(
        arena.n_models, arena.matchups, arena.outcomes, 100, np.random.default_rng(seed)
    )
    old_lo, old_hi = percentile_intervals(samples, NOMINAL)
    old_point = online_elo(arena.n_models, arena.matchups, arena.outcomes)
    outside = float(np.mean((old_point < old_lo) | (old_point > old_hi)))
    old_lo, old_hi = np.minimum(old_lo, old_point), np.maximum(old_hi, old_point)
    tally("aggregate Elo, before (one-order point)", "Elo functional, random order").add(
        elo_random, old_lo, old_hi
    )

    # Personal boards: every user's shrunk BT fit, toward the aggregate.
    codes, names = user_codes(arena_battles)
    prior = np.array([sandwich[m].rating for m in models])
    users = fit_user_ratings(arena, codes, len(names), shrinkage="cv", prior=prior, rng=seed)
    rows = _user_rows(names, pool_names)
    kind = "personal BT, shrunk (Laplace)"
    tally(kind, "user's BT functional").add(pool_users.ratings[rows], users.lower, users.upper)
    tally(kind, "truth (user)").add(truth_users.to_numpy()[rows], users.lower, users.upper)
    _, rank_lower, rank_upper = user_rank_odds(users)
    tally("rank range, personal BT", "rank of the user's BT functional").add(
        competition_ranks(pool_users.ratings[rows]), rank_lower, rank_upper
    )

    if seed in size.seeds[: size.predicted_worlds]:
        _predicted(seed, arena_battles, models, pool_names, pool_users.ratings, truth_users, tally)
    return {
        "elo_old_outside": outside,
        "user_target_sd": float(np.median(user_target_sd)),
        "user_interval_half": float(np.median(users.upper - users.lower) / 2),
    }


def _predicted(
    seed: int,
    battles: pd.DataFrame,
    models: tuple[str, ...],
    pool_names: tuple[str, ...],
    user_target: np.ndarray,
    truth_users: pd.DataFrame,
    tally: Callable[[str, str], Tally],
) -> None:
    """Predicted and blended intervals of held-out users."""
    gen = np.random.default_rng([seed, 5])
    everyone = np.array(sorted(battles["user_id"].unique()), dtype=object)
    held = set(gen.choice(everyone, size=max(1, int(HOLDOUT * everyone.size)), replace=False))
    test = battles["user_id"].isin(held).to_numpy()
    predictor, _ = build_predictor(FitConfig(embedding="tfidf", seed=seed))
    predictor.fit(battles.loc[~test], models=models)
    test_battles = battles.loc[test].reset_index(drop=True)
    prediction = predictor.predict_users(test_battles)
    ids = tuple(str(u) for u in prediction.user_ids)
    rows = _user_rows(ids, pool_names)
    truth = truth_users.to_numpy()[rows]
    kind = "predicted from queries"
    tally(kind, "user's BT functional").add(user_target[rows], prediction.lower, prediction.upper)
    tally(kind, "truth (user)").add(truth, prediction.lower, prediction.upper)
    data = pairwise_from_battles(test_battles, models=predictor.models_)
    codes, names = user_codes(test_battles)
    to_row = pd.Index(ids).get_indexer(pd.Index(names))
    blended = predictor.blend(prediction, data, to_row[codes])
    kind = "blended with the user's votes"
    tally(kind, "user's BT functional").add(user_target[rows], blended.lower, blended.upper)
    tally(kind, "truth (user)").add(truth, blended.lower, blended.upper)


def collect(size: Size) -> tuple[dict[tuple[str, str], Tally], dict[str, float], float]:
    """Every world of ``size``: the tallies, the mean notes and the seconds taken."""
    tallies: dict[tuple[str, str], Tally] = {}
    notes: dict[str, list[float]] = {}
    start = time.perf_counter()
    for seed in size.seeds:
        for key, value in measure(seed, size, tallies).items():
            notes.setdefault(key, []).append(value)
    means = {k: float(np.mean(v)) for k, v in notes.items()}
    return tallies, means, time.perf_counter() - start


def _goal_applies(kind: str, target: str) -> bool:
    """Whether ``target`` is what the interval's method estimates (the goal applies)."""
    if "before" in kind or "truth" in target:
        return False
    if kind.startswith("aggregate Elo"):
        return target == "Elo functional, random order"
    return True


def coverage_table(tallies: dict[tuple[str, str], Tally]) -> str:
    """The Markdown table of nominal against measured coverage."""
    header = "interval|shown by|target|nominal|measured|± (se)|mean width|intervals".split("|")
    lines = []
    for kind, shown, target in KINDS:
        t = tallies.get((kind, target))
        if t is None or t.total == 0:
            continue
        unit = "ranks" if kind.startswith("rank range") else "points"
        lines.append(
            [kind, shown, target, f"{NOMINAL:.0%}", f"{t.coverage:.1%}", f"{t.spread:.1%}"]
            + [f"{t.mean_width:.1f} {unit}", f"{t.total:,}"]
        )
    return markdown_table(header, lines)


#: Where :func:`run` also writes the table of docs/evaluation.md.
TABLE_OUTPUT = TABLES_DIR / "coverage.md"


def run(quick: bool) -> list[Row]:
    """The rows of bench/RESULTS.md; a full run also writes the table of
    docs/evaluation.md to :data:`TABLE_OUTPUT`."""
    size = QUICK if quick else FULL
    tallies, notes, seconds = collect(size)
    if not quick:
        write_table(TABLE_OUTPUT, size.label, seconds, coverage_table(tallies))
    rows = []
    for kind, _, target in KINDS:
        t = tallies.get((kind, target))
        if t is None or t.total == 0:
            continue
        goal = _goal_applies(kind, target)
        met = abs(t.coverage - NOMINAL) <= TOLERANCE if goal and not quick else None
        rows.append(
            make_row(
                f"coverage: {kind} → {target}",
                size.label,
                ours=f"{t.coverage:.1%} (se {t.spread:.1%})",
                reference=f"{NOMINAL:.0%} nominal",
                goal=f"{NOMINAL:.0%} ± {TOLERANCE * 100:.0f} points" if goal else "",
                met=met,
                notes=f"{t.total:,} intervals, mean width {t.mean_width:.1f}",
            )
        )
    rows.append(
        make_row(
            "old Elo point outside its own bootstrap interval",
            size.label,
            ours=f"{notes['elo_old_outside']:.1%} of models",
            notes="online Elo in time order against the 2.5–97.5% replicates; 0 by "
            "construction for the bootstrap median",
        )
    )
    rows.append(
        make_row(
            "error of the personal target (pool fit) against the personal interval",
            size.label,
            ours=f"sd {notes['user_target_sd']:.0f} vs half-width "
            f"{notes['user_interval_half']:.0f} points",
            notes=f"medians; all worlds took {seconds:.0f} s",
        )
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the coverage table (docs/evaluation.md) and the notes."""
    quick = quick_option("bench.ranking.coverage", __doc__, "two tiny worlds", argv)
    size = QUICK if quick else FULL
    tallies, notes, seconds = collect(size)
    print(table_text(size.label, seconds, coverage_table(tallies)))
    print()
    for key, value in notes.items():
        print(f"{key}: {value:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
