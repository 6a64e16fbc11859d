"""Benchmark T (issue 31): the price, in fake votes, of crowning the weakest model.

An attacker holds the ingest key and makes up users at will. Each strategy of the issue's
attacks is given a growing budget of fake votes until the weakest model is ranked 1 (a
shared rank counts), listed first (what the aggregate badge shows) and in the top 3,
on each public board:

* the **published** Bradley-Terry board, refitted after the attack (the integrity screen
  run, provisional models apart, as ``plb serve`` publishes it);
* the **live Elo** board, moved by every counted vote since the version before the attack.

The world is ``plb serve --demo``'s arena (``plb simulate``, 15 models, 60 votes a user)
with twice the users: the first half is the fit's own log (trusted, no receive time), the
second half votes over REST in the weeks after, as honest traffic does. The attack starts
in the middle of those weeks. Strategies (``n`` fake votes in all):

* ``untimed``: one made-up user, every vote a win of the weak model against another
  model, no ``tstamp``, all sent within an hour;
* ``back-dated``: the same, each vote's ``tstamp`` back-dated 50 a day;
* ``three socks``: the issue's mix: 3 users at a 0.85 win share of the weak model
  (3/14 untimed, 5/14 back-dated) and 6/14 ties of the leader against the weakest models;
* ``many socks``: a new made-up user every 9 votes (under every per-user threshold), all
  wins of the weak model;
* ``patient socks``: users that vote once a day until established (one day before, as
  many as ``established_days`` after), then 50 votes each the next day, at a win share
  just under the brigade test's of one voter (0.85);
* ``patient tiny socks``: the same, then only 5 votes each, all wins of the weak model:
  too few for any test of one voter;
* ``patient tiny socks over a week``: the same, the made-up voters joining over 7 days
  (a seventh a day, among that day's honest newcomers), all voting on the eighth. The
  patient strategies spend server time, which their rows give.

*Before* is the service as issue 31 found it (no receive time: the cap counts the
client's ``tstamp``; every voter counts at once; the live board moves freely). *After*
is today's defaults: the cap and the standing count the server's receive time, a voter
counts from their second day (``established_days`` 1), the voters who joined the same
day, week or month are tested together (``cohort_share`` 0.5), and the live Elo board
moves within the published intervals and ranks only the models the version ranks.
Before, no voter has a join day (no receive time), so the cohort test never runs.
The honest voters' rows give the share the integrity screen flags, and the share of
honest REST votes held back at each ``established_days``.

Goal: every strategy's price at least 50 times the issue's 300 votes on every board, and
no more than 2% of honest voters flagged.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from bench.common import Row, make_row
from data.simulate import simulate
from ranking.io.battle_frame import to_battle_frame
from ranking.io.frames import pairwise_from_battles
from ranking.leaderboard import fit_leaderboard
from service.live.served import live_elo_leaderboard, live_window
from service.live.votes import battle_documents
from service.pipeline.integrity import RECEIVED, IntegrityConfig, counted_mask, screen_battles

__all__ = ["run"]

DAY = 86_400.0
#: The issue's price: one made-up user's 300 votes crowned the weakest model on live Elo.
TODAY = 300
#: Goal: how many times :data:`TODAY` a burst must cost.
FACTOR = 50
#: The largest budget tried, in fake votes.
MAX_BUDGET = 38_400
#: Public boards rank models with at least this many votes (the service's default).
MIN_MODEL_VOTES = 50
#: Goal: honest voters flagged.
MAX_FLAGGED = 0.02

BEFORE = IntegrityConfig(daily_cap=50, established_days=0)
AFTER = IntegrityConfig(daily_cap=50, established_days=1)
SEEDS = (0, 1)
#: The days over which the last strategy's made-up voters join, one cohort a day.
JOIN_DAYS = 7
#: The standings whose cost to honest voters is shown (votes held back).
STANDINGS = (0, 1, 2, 3)


@dataclass(frozen=True)
class World:
    """The honest votes, the published version before the attack, and its clock."""

    battles: pd.DataFrame  # fit log (no receive time) then honest REST votes (received)
    models: tuple[str, ...]
    weak: str
    leader: str
    bottom: tuple[str, ...]
    attack_at: float
    honest_rest: frozenset[str]
    honest_users: frozenset[str]


def make_world(n_users: int, seed: int) -> World:
    """``n_users`` voters in the fit's log, as many more voting over REST after it."""
    sim = simulate(2 * n_users, 60, 15, rng=seed)
    battles = sim.battles.copy()
    users = sorted(battles["user_id"].astype(str).unique())
    rest = frozenset(users[n_users:])
    from_rest = battles["user_id"].astype(str).isin(rest).to_numpy()
    stamps = battles["tstamp"].to_numpy(dtype=np.float64)
    start = math.ceil(stamps[~from_rest].max() / DAY) * DAY
    received = np.where(from_rest, start + stamps - stamps.min(), np.nan)
    battles[RECEIVED] = received
    board = fit_leaderboard(pairwise_from_battles(to_battle_frame(battles)), method="bt")
    order = [m.model for m in board.models]
    return World(
        battles=to_battle_frame(battles),
        models=tuple(order),
        weak=order[-1],
        leader=order[0],
        bottom=tuple(order[-5:-1]),
        attack_at=start + 14 * DAY,
        honest_rest=rest,
        honest_users=frozenset(users),
    )


def _votes(
    user: list[str], a: list[str], b: list[str], winner: list[str], tstamp: Any, received: Any
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model_a": a,
            "model_b": b,
            "winner": winner,
            "user_id": user,
            "tstamp": tstamp,
            RECEIVED: received,
        }
    )


def _wins(world: World, rng: np.random.Generator, n: int, share: float) -> tuple[list, list]:
    """``n`` battles of the weak model against the others, won at ``share``."""
    others = [m for m in world.models if m != world.weak]
    b = list(rng.choice(others, size=n))
    winner = ["model_a" if x else "model_b" for x in rng.random(n) < share]
    return b, winner


def attack(
    world: World, strategy: str, n: int, seed: int = 0, share: float = 0.85, days: int = 3
) -> pd.DataFrame:
    """The ``n`` fake votes of ``strategy``, each with the server's receive time; the
    patient socks vote once a day for ``days`` days first, then win at ``share`` (just
    under the brigade test's share)."""
    rng = np.random.default_rng(seed)
    t0 = world.attack_at
    if strategy in ("untimed", "back-dated"):
        b, winner = _wins(world, rng, n, 1.0)
        tstamp = np.nan if strategy == "untimed" else t0 - DAY * (np.arange(n) // 50)
        return _votes(["sock"] * n, [world.weak] * n, b, winner, tstamp, t0 + np.arange(n) * 0.1)
    if strategy == "three socks":
        k = [round(n * 3 / 14), round(n * 5 / 14)]
        k.append(n - sum(k))
        parts = []
        for i, count in enumerate(k[:2]):
            b, winner = _wins(world, rng, count, 0.85)
            tstamp = np.nan if i == 0 else t0 - DAY * (np.arange(count) // 50)
            parts.append(_votes([f"sock-{i}"] * count, [world.weak] * count, b, winner, tstamp, t0))
        ties = list(rng.choice(list(world.bottom), size=k[2]))
        parts.append(_votes(["sock-2"] * k[2], [world.leader] * k[2], ties, ["tie"] * k[2], t0, t0))
        frame = pd.concat(parts, ignore_index=True)
        frame[RECEIVED] = t0 + np.arange(len(frame)) * 0.1
        return frame
    if strategy == "many socks":
        b, winner = _wins(world, rng, n, 1.0)
        users = [f"sock-{i // 9}" for i in range(n)]
        return _votes(users, [world.weak] * n, b, winner, t0, t0 + np.arange(n) * 0.1)
    if strategy.startswith("patient"):
        per_sock = 50 if strategy == "patient socks" else 5
        joining = JOIN_DAYS if strategy.endswith("over a week") else 1
        n_socks = max(1, math.ceil(n / (per_sock + days)))
        users, received = [], []
        for s in range(n_socks):
            users += [f"sock-{s}"] * days
            received += [t0 + (s % joining + d) * DAY + s for d in range(days)]
        burst = max(n - days * n_socks, 0)
        users += [f"sock-{i % n_socks}" for i in range(burst)]
        received += list(t0 + (joining - 1 + days) * DAY + np.arange(burst) * 0.1)
        b, winner = _wins(world, rng, len(users), share if per_sock == 50 else 1.0)
        return _votes(users, [world.weak] * len(users), b, winner, received, received)
    raise ValueError(f"unknown strategy {strategy!r}")


def _as_before(frame: pd.DataFrame) -> pd.DataFrame:
    """The votes as the service before issue 31 kept them: no receive time."""
    return frame.assign(**{RECEIVED: np.nan}) if RECEIVED in frame.columns else frame


@dataclass(frozen=True)
class Version:
    """The published version the live board starts from."""

    elo: dict[str, Any]
    flagged: frozenset[str]


def publish(battles: pd.DataFrame, config: IntegrityConfig) -> tuple[dict[str, Any], dict]:
    """The public Bradley-Terry board of ``battles`` after the integrity screen."""
    counted, evidence = screen_battles(battles, config)
    data = pairwise_from_battles(battles[counted])
    board = fit_leaderboard(data, method="bt", min_votes=MIN_MODEL_VOTES)
    return board.to_dict(), evidence


def version_before_attack(world: World, config: IntegrityConfig, before: bool) -> Version:
    battles = world.battles
    battles = battles[~(battles[RECEIVED] >= world.attack_at)]
    if before:
        battles = _as_before(battles)
    counted, evidence = screen_battles(battles, config)
    data = pairwise_from_battles(battles[counted])
    elo = fit_leaderboard(data, method="elo", rng=0).to_dict()
    return Version(elo, frozenset(str(f["user_id"]) for f in evidence["flagged"]))


def live_elo(
    world: World, fake: pd.DataFrame, version: Version, config: IntegrityConfig, before: bool
) -> dict[str, Any]:
    """The live Elo board after ``fake``: the version's, moved by the counted votes since."""
    since = fake[RECEIVED].min()
    end = fake[RECEIVED].max()
    honest = world.battles[~(world.battles[RECEIVED] > end)]
    everything = to_battle_frame(pd.concat([honest, fake], ignore_index=True))
    if before:
        everything = _as_before(everything)
    window = np.concatenate(
        [honest[RECEIVED].to_numpy(dtype=np.float64) >= since, np.ones(len(fake), dtype=bool)]
    )
    counted = counted_mask(everything, version.flagged, config)
    chosen = everything[window & counted]
    # the two parts of a served version the live board reads
    served: Any = SimpleNamespace(
        snapshot=SimpleNamespace(leaderboards={"elo": version.elo}), min_votes=MIN_MODEL_VOTES
    )
    moved = live_window(served, battle_documents(chosen.drop(columns=[RECEIVED])))
    return live_elo_leaderboard(served, moved, within_intervals=not before)


def standing(board: dict[str, Any], model: str) -> tuple[int | None, bool]:
    """``(rank, listed first)`` of ``model`` on a public board; rank None when provisional."""
    rows = board["models"]
    first = bool(rows) and rows[0]["model"] == model
    for row in rows:
        if row["model"] == model:
            return int(row["rank"]), first
    return None, first


Goal = Callable[[int | None, bool], bool]
GOALS: dict[str, Goal] = {
    "rank 1": lambda rank, first: rank == 1,
    "listed first (badge)": lambda rank, first: first,
    "top 3": lambda rank, first: rank is not None and rank <= 3,
}


def price(crowned: Callable[[int], dict[str, bool]], goals: list[str]) -> dict[str, int | None]:
    """The fewest fake votes meeting each goal: doubling from 75, then bisection; None
    when :data:`MAX_BUDGET` does not."""
    cache: dict[int, dict[str, bool]] = {}

    def met(n: int) -> dict[str, bool]:
        if n not in cache:
            cache[n] = crowned(n)
        return cache[n]

    found: dict[str, int | None] = {}
    for goal in goals:
        n, low = 75, 0
        while n <= MAX_BUDGET and not met(n)[goal]:
            low, n = n, n * 2
        if n > MAX_BUDGET:
            found[goal] = None
            continue
        high = n
        while high - low > max(4, high // 50):
            mid = (low + high) // 2
            if met(mid)[goal]:
                high = mid
            else:
                low = mid
        found[goal] = high
    return found


def _shown(n: int | None) -> str:
    return f"> {MAX_BUDGET:,} (never)" if n is None else f"{n:,}"


STRATEGIES = (
    "untimed",
    "back-dated",
    "three socks",
    "many socks",
    "patient socks",
    "patient tiny socks",
    "patient tiny socks over a week",
)


@dataclass(frozen=True)
class Setup:
    """One configuration of the service under attack."""

    name: str
    config: IntegrityConfig
    before: bool
    version: Version

    @property
    def share(self) -> float:
        """The patient socks' win share: just under what the brigade test flags."""
        return min(0.85, self.config.brigade_share - 0.05)

    @property
    def days(self) -> int:
        """The days the patient socks vote before their burst."""
        return max(self.config.established_days, 1)


def outcome(
    world: World, setup: Setup, strategy: str, n: int, board: str, seed: int
) -> tuple[dict[str, bool], dict[str, Any] | None]:
    """Which goals ``n`` fake votes of ``strategy`` meet on ``board``, and the integrity
    evidence of the refit (the published board only)."""
    fake = attack(world, strategy, n, seed, setup.share, setup.days)
    evidence = None
    if board == "published":
        end = fake[RECEIVED].max()
        honest = world.battles[~(world.battles[RECEIVED] > end)]
        everything = to_battle_frame(pd.concat([honest, fake], ignore_index=True))
        if setup.before:
            everything = _as_before(everything)
        document, evidence = publish(everything, setup.config)
    else:
        document = live_elo(world, fake, setup.version, setup.config, setup.before)
    rank, first = standing(document, world.weak)
    return {goal: test(rank, first) for goal, test in GOALS.items()}, evidence


def _days(strategy: str, setup: Setup) -> int:
    """The days of server time a patient strategy spends."""
    return setup.days + (JOIN_DAYS if strategy.endswith("over a week") else 1)


def _crown_row(
    setup: Setup, strategy: str, board: str, found: dict[str, int | None], label: str, s: float
) -> Row:
    burst = not strategy.startswith("patient")
    met = None
    if setup.name == "after":
        met = found["rank 1"] is None or found["rank 1"] >= FACTOR * TODAY
    shown = "; ".join(f"{goal}: {_shown(found[goal])}" for goal in GOALS)
    return make_row(
        f"{setup.name}: {strategy}, {board}",
        label,
        ours=shown,
        reference=f"{TODAY:,} votes (issue 31)",
        goal=f">= {FACTOR * TODAY:,} fake votes" if met is not None else "",
        met=met,
        notes=f"searched in {s:.0f} s"
        + ("" if burst else f"; spends {_days(strategy, setup)} days of server time"),
    )


def run_world(n_users: int, seed: int, strategies: tuple[str, ...]) -> list[Row]:
    """The rows of one world: each strategy's price before and after, each board."""
    world = make_world(n_users, seed)
    label = (
        f"plb simulate seed {seed}: {n_users} users in the fit's log, {n_users} more over "
        f"REST, 15 models; weakest model {world.weak}"
    )
    rows: list[Row] = []
    flagged_rows: list[Row] = []
    for name, config, before in (("before", BEFORE, True), ("after", AFTER, False)):
        setup = Setup(name, config, before, version_before_attack(world, config, before))
        for strategy in strategies:
            started = time.perf_counter()
            evidence: list[dict[str, Any] | None] = []

            def met(
                n: int,
                board: str,
                setup: Setup = setup,
                strategy: str = strategy,
                evidence: list[dict[str, Any] | None] = evidence,
            ) -> dict[str, bool]:
                goals, found = outcome(world, setup, strategy, n, board, seed)
                evidence.append(found)
                return goals

            prices = {
                board: price(partial(met, board=board), list(GOALS))
                for board in ("published", "live Elo")
            }
            seconds = time.perf_counter() - started
            rows += [
                _crown_row(setup, strategy, board, found, label, seconds)
                for board, found in prices.items()
            ]
            last = next((e for e in reversed(evidence) if e is not None), None)
            if last is not None:
                flagged = {str(f["user_id"]) for f in last["flagged"]}
                share = len(flagged & world.honest_users) / len(world.honest_users)
                flagged_rows.append(
                    make_row(
                        f"honest voters flagged, {name}: {strategy}",
                        label,
                        ours=f"{share:.2%}",
                        goal=f"<= {MAX_FLAGGED:.0%}",
                        met=share <= MAX_FLAGGED,
                        notes="at the last budget searched on the published board",
                    )
                )
    rows += flagged_rows
    rest = world.battles["user_id"].astype(str).isin(world.honest_rest).to_numpy()
    for days in STANDINGS:
        config = replace(AFTER, established_days=days)
        counted, _ = screen_battles(world.battles, config)
        held = 1.0 - counted[rest].mean()
        rows.append(
            make_row(
                f"honest REST votes not counted publicly, established_days={days}",
                label,
                ours=f"{held:.1%} of {int(rest.sum()):,}",
                notes="newcomers' first days, the cap, the flags; they count on each voter's "
                "own board; without an attack" + (" (the default)" if config == AFTER else ""),
            )
        )
    return rows


def run(quick: bool = False) -> list[Row]:
    """Run benchmark T; ``quick`` uses a small world and two strategies.

    Returns
    -------
    list of Row
        Each strategy's price before and after on each board, the honest voters flagged
        and the honest votes held back.
    """
    if quick:
        return run_world(60, 0, ("untimed", "many socks"))
    rows: list[Row] = []
    for seed in SEEDS:
        rows += run_world(300, seed, STRATEGIES)
    return rows
