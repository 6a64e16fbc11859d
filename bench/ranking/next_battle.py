"""Benchmark P (issue 19, item 3): does voting the suggested battle teach a board faster?

Simulated people with known true ratings (``plb simulate``; the test users are held out
of the arena whose aggregate and shrinkage are fitted) start from the product's prior:
the arena's aggregate Bradley-Terry ratings, with the learnt prior precision ``alpha``
(the personal board of a user with no vote). At each step every person votes once, in
one of three arms that differ only in the pair shown:

* **best** (the service's): the pair of :func:`ranking.next_battle.next_battle` on their
  current board (its ratings and Laplace variances, as ``GET /v1/users/{id}/next-battle``
  sees them), the largest expected drop in the entropy of ``p_best``;
* **ranking**: the same with ``target="ranking"``, the most expected information about
  the order of every pair of models;
* **random**: two different models drawn uniformly.

The outcome is drawn from the person's true Bradley-Terry model (decisive: ``a`` wins
with probability ``sigmoid(true_a - true_b)``, the same uniform draw in every arm), and
the board is refitted on all their votes (shrunk toward the prior with the same
``alpha``, as the service refits a voter's board). After each vote the arms are scored
against the truth: mean Spearman of the board's ratings with the person's true ratings,
and the share of people whose board's top model is their true best.

The question is the issue's: how many votes does a suggested arm need to reach the
random arm's level at 10, 20 and 40 votes (linear between steps; the goal is at least
30% fewer, per metric), across seeds.

Beside it, two figures that say how much any rule could do here. A vote on ``(a, b)``
carries Fisher information ``w x x^T`` about the strengths (``x = e_a - e_b``,
``w = p (1 - p)`` at the truth, at most 1/4), so each arm's mean ``w`` at the truth says
how informative its votes were. And the **ceiling**: ``n`` random votes leave a summed
variance of the strengths' contrasts of about ``tr(M^+) / n`` (``M`` the mean information
of a uniformly drawn pair, at the person's true strengths), while any ``n'`` votes, even
chosen knowing the truth, leave at least ``(k - 1)^2 / tr(M') >= 2 (k - 1)^2 / n'``
(``tr(M') <= n' / 2``; the harmonic-mean bound on the eigenvalues). To match the random
arm's precision a rule needs ``n' / n >= 2 (k - 1)^2 / tr(M^+)`` of its votes, so it saves
at most ``1 - 2 (k - 1)^2 / tr(M^+)``: asymptotic (many votes; a shared prior only
narrows it) and for the whole ranking's precision, the quantity behind its Spearman.

Run ``python -m bench.ranking.next_battle [--quick]`` for the tables of docs/evaluation.md;
``python -m bench.run next_battle`` writes the rows into bench/RESULTS.md, and the same
tables into bench/out/next_battle.md.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bench.common import TABLES_DIR, Row, make_row, quick_option, table_text, write_table
from data.simulate import simulate
from ranking.agreement import spearman_per_row
from ranking.bt import fit_bt_posterior
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.next_battle import next_battle
from ranking.pairwise import ELO_PER_NAT
from ranking.shrinkage import learn_alpha
from ranking.types import CENTER
from ranking.users import aggregate_prior

__all__ = ["ARMS", "Curves", "Size", "run", "saving_ceiling", "savings", "simulate_arms"]

#: The arms: the suggested pairs of each target of :func:`ranking.next_battle.next_battle`
#: (the service's first), then random pairs, the reference (last).
ARMS = ("best", "ranking", "random")
SUGGESTED = ARMS[:-1]
#: Votes at which the random arm's level is read, and the goal for the saving.
CHECKPOINTS = (10, 20, 40)
GOAL = 0.30
METRICS = ("spearman", "best")


@dataclass(frozen=True)
class Size:
    """One configuration of the experiment."""

    seeds: tuple[int, ...]
    arena_users: int
    test_users: int
    per_user: int
    models: int
    votes: int
    draws: int
    checkpoints: tuple[int, ...]

    @property
    def label(self) -> str:
        return (
            f"{len(self.seeds)} seeds × {self.test_users} users, {self.models} models; "
            f"prior from {self.arena_users} × {self.per_user} votes; {self.draws:,} draws"
        )


#: Four worlds: with two, the savings swung by 10 points from one pair of seeds to the
#: next. 2,000 posterior draws a choice, half the service's ``NEXT_BATTLE_DRAWS``: the run
#: stays near ten minutes on two shared cores, and only pairs within Monte Carlo noise of
#: each other can be chosen differently.
FULL = Size((0, 1, 2, 3), 400, 80, 60, 15, 40, 2000, CHECKPOINTS)
QUICK = Size((0,), 60, 8, 20, 6, 6, 300, (2, 4))


@dataclass(frozen=True)
class Curves:
    """``(arms, votes + 1)`` mean Spearman and best-named share after 0..votes votes (the
    arms of :data:`ARMS`, random last); ``(arms,)`` mean Fisher weight ``p (1 - p)`` of
    the votes at the truth; ``(users,)`` each person's :func:`saving_ceiling`."""

    spearman: npt.NDArray[np.float64]
    best: npt.NDArray[np.float64]
    weight: npt.NDArray[np.float64]
    ceiling: npt.NDArray[np.float64]

    def metric(self, name: str) -> npt.NDArray[np.float64]:
        values: npt.NDArray[np.float64] = getattr(self, name)
        return values


def _world(seed: int, size: Size) -> tuple[np.ndarray, np.ndarray, float]:
    """The test users' true strengths, the prior mean (natural-log units) and ``alpha``."""
    sim = simulate(size.arena_users + size.test_users, size.per_user, size.models, rng=seed)
    users = list(sim.user_ratings.index)
    arena = sim.battles[sim.battles["user_id"].isin(users[: size.arena_users])]
    data = pairwise_from_battles(arena, models=sim.models)
    codes, names = user_codes(arena)
    mu = (aggregate_prior(data, "bt") - CENTER) / ELO_PER_NAT
    alpha = learn_alpha(data.n_models, data.matchups, data.outcomes, codes, len(names), mu)
    truth = sim.user_ratings.loc[users[size.arena_users :]].to_numpy()
    return (truth - CENTER) / ELO_PER_NAT, mu, alpha


def _score(theta: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    rho = spearman_per_row(theta, truth)
    best = np.argmax(theta, axis=1) == np.argmax(truth, axis=1)
    return float(np.nanmean(rho)), float(best.mean())


def simulate_arms(seed: int, size: Size, arms: tuple[str, ...] = ARMS) -> Curves:
    """Every arm on one world: the curves of mean Spearman and best-named share."""
    truth, mu, alpha = _world(seed, size)
    n_users, k = truth.shape
    gen = np.random.default_rng(10_000 + seed)
    uniform = gen.random((n_users, size.votes))
    first = gen.integers(0, k, (n_users, size.votes))
    second = gen.integers(0, k - 1, (n_users, size.votes))
    second += second >= first
    spearman = np.empty((len(arms), size.votes + 1))
    best = np.empty_like(spearman)
    weight = np.empty(len(arms))
    users = np.arange(n_users)
    for arm_index, arm in enumerate(arms):
        theta = np.tile(mu, (n_users, 1))
        variance = np.full((n_users, k), 1.0 / alpha)
        matchups = np.empty((n_users, size.votes, 2), dtype=np.intp)
        outcomes = np.empty((n_users, size.votes))
        weights = np.empty(size.votes)
        for step in range(size.votes + 1):
            spearman[arm_index, step], best[arm_index, step] = _score(theta, truth)
            if step == size.votes:
                break
            if arm != "random":
                for u in users:
                    choice = next_battle(theta[u], variance[u], draws=size.draws, target=arm)
                    matchups[u, step] = choice.model_a, choice.model_b
            else:
                matchups[:, step, 0], matchups[:, step, 1] = first[:, step], second[:, step]
            a, b = matchups[:, step, 0], matchups[:, step, 1]
            p_a = 1.0 / (1.0 + np.exp(truth[users, b] - truth[users, a]))
            outcomes[:, step] = (uniform[:, step] < p_a).astype(np.float64)
            weights[step] = (p_a * (1.0 - p_a)).mean()
            n = step + 1
            fit = fit_bt_posterior(
                k,
                matchups[:, :n].reshape(-1, 2),
                outcomes[:, :n].ravel(),
                groups=np.repeat(users, n),
                n_groups=n_users,
                prior_mean=mu,
                alpha=alpha,
            )
            theta, variance = fit.theta, fit.variance
        weight[arm_index] = weights.mean()
    return Curves(spearman, best, weight, saving_ceiling(truth))


def saving_ceiling(truth: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The most votes any rule could save against random pairs, per person (module
    docstring): ``1 - 2 (k - 1)^2 / tr(M^+)``, ``M`` the mean Fisher information of a
    uniformly drawn pair at the person's true strengths ``truth`` ``(users, k)``."""
    theta = np.asarray(truth, dtype=np.float64)
    k = theta.shape[1]
    a, b = np.triu_indices(k, 1)
    design = np.zeros((len(a), k))
    design[np.arange(len(a)), a], design[np.arange(len(a)), b] = 1.0, -1.0
    p = 1.0 / (1.0 + np.exp(theta[:, b] - theta[:, a]))  # (users, P)
    info = np.einsum("up,pi,pj->uij", p * (1.0 - p), design, design) / len(a)
    spread = np.trace(np.linalg.pinv(info, hermitian=True), axis1=1, axis2=2)
    return np.asarray(1.0 - 2.0 * (k - 1) ** 2 / spread)


def votes_to_reach(curve: npt.ArrayLike, level: float) -> float:
    """The first number of votes (linear between steps) at which ``curve`` reaches
    ``level``; NaN if it never does."""
    values = np.asarray(curve, dtype=np.float64)
    above = np.flatnonzero(values >= level)
    if above.size == 0:
        return float("nan")
    n = int(above[0])
    if n == 0:
        return 0.0
    low, high = values[n - 1], values[n]
    return n - 1 + (level - low) / (high - low)


def savings(curves: Curves, metric: str, at: int, arm: int = 0) -> tuple[float, float]:
    """Votes arm ``arm`` needs for the random arm's level at ``at`` votes, and the saving
    ``1 - needed / at``; NaN for both when it does not get there within the run."""
    values = curves.metric(metric)
    needed = votes_to_reach(values[arm], float(values[-1, at]))
    return needed, 1.0 - needed / at


def _needed(needed: float, size: Size) -> str:
    return f"not within {size.votes}" if np.isnan(needed) else f"{needed:.1f}"


def _saving(saved: float) -> str:
    return "< 0" if np.isnan(saved) else f"{saved:.0%}"


def collect(size: Size) -> tuple[list[Curves], Curves, float]:
    """Every seed's curves, their mean over seeds and the seconds taken."""
    start = time.perf_counter()
    per_seed = [simulate_arms(seed, size) for seed in size.seeds]
    mean = Curves(
        np.mean([c.spearman for c in per_seed], axis=0),
        np.mean([c.best for c in per_seed], axis=0),
        np.mean([c.weight for c in per_seed], axis=0),
        np.concatenate([c.ceiling for c in per_seed]),
    )
    return per_seed, mean, time.perf_counter() - start


def _steps(size: Size) -> list[int]:
    return sorted({0, 1, 2, 5, *range(10, size.votes + 1, 5)} & set(range(size.votes + 1)))


def curves_table(size: Size, per_seed: list[Curves], mean: Curves) -> str:
    """Markdown: every arm's curves (mean over seeds), then the votes needed."""
    head = [f"Spearman, {a}" for a in ARMS] + [f"best named, {a}" for a in ARMS]
    lines = ["| votes | " + " | ".join(head) + " |", "|---" * (1 + len(head)) + "|"]
    for n in _steps(size):
        cells = [f"{mean.spearman[a, n]:.3f}" for a in range(len(ARMS))]
        cells += [f"{mean.best[a, n]:.1%}" for a in range(len(ARMS))]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| pairs | metric | random pairs: votes (level) | votes to reach it | saving | per seed |",
        "|---|---|---|---|---|---|",
    ]
    for arm, target in enumerate(SUGGESTED):
        for metric in METRICS:
            for at in size.checkpoints:
                needed, saved = savings(mean, metric, at, arm)
                level = mean.metric(metric)[-1, at]
                shown = f"{level:.3f}" if metric == "spearman" else f"{level:.1%}"
                seeds = ", ".join(_saving(savings(c, metric, at, arm)[1]) for c in per_seed)
                lines.append(
                    f"| {target} | {_label(metric)} | {at} ({shown}) | {_needed(needed, size)} "
                    f"| {_saving(saved)} | {seeds} |"
                )
    lines += [
        "",
        "| pairs | Fisher weight p(1 − p) of a vote at the truth (at most 0.25) | per seed |",
        "|---|---|---|",
    ]
    for arm, name in enumerate(ARMS):
        seeds = ", ".join(f"{c.weight[arm]:.3f}" for c in per_seed)
        lines.append(f"| {name} | {mean.weight[arm]:.3f} | {seeds} |")
    lines += ["", f"The most votes any rule could save against random pairs: {_ceiling(per_seed)}."]
    return "\n".join(lines)


def _ceiling(per_seed: list[Curves]) -> str:
    """The ceiling of the module docstring, over every person and per world."""
    every = np.concatenate([c.ceiling for c in per_seed])
    seeds = ", ".join(f"{c.ceiling.mean():.0%}" for c in per_seed)
    return (
        f"{every.mean():.0%} on average (per seed {seeds}; per person "
        f"{np.quantile(every, 0.1):.0%} to {np.quantile(every, 0.9):.0%}, 10th to 90th "
        "percentile)"
    )


def _label(metric: str) -> str:
    return "mean Spearman vs truth" if metric == "spearman" else "best model named"


#: Where :func:`run` also writes the tables of docs/evaluation.md.
TABLE_OUTPUT = TABLES_DIR / "next_battle.md"


def run(quick: bool) -> list[Row]:
    """The rows of bench/RESULTS.md: the curves, then the votes needed per checkpoint; a
    full run also writes the tables of docs/evaluation.md to :data:`TABLE_OUTPUT`."""
    size = QUICK if quick else FULL
    per_seed, mean, seconds = collect(size)
    if not quick:
        write_table(TABLE_OUTPUT, size.label, seconds, curves_table(size, per_seed, mean))
    rows = [
        make_row(
            f"after {n} votes: Spearman, best named",
            size.label,
            ours=" / ".join(
                f"{mean.spearman[a, n]:.3f}, {mean.best[a, n]:.1%}" for a in range(len(SUGGESTED))
            ),
            reference=f"{mean.spearman[-1, n]:.3f}, {mean.best[-1, n]:.1%}",
            notes="ours: suggested pairs, target " + " / ".join(SUGGESTED) + "; reference: "
            "random pairs; mean over seeds",
        )
        for n in _steps(size)
    ]
    for arm, target in enumerate(SUGGESTED):
        for metric in METRICS:
            for at in size.checkpoints:
                needed, saved = savings(mean, metric, at, arm)
                seeds = ", ".join(_saving(savings(c, metric, at, arm)[1]) for c in per_seed)
                rows.append(
                    make_row(
                        f"target {target}, {_label(metric)}: votes to reach random pairs' "
                        f"level at {at}",
                        size.label,
                        ours=f"{_needed(needed, size)} votes",
                        reference=f"{at} votes",
                        ratio=at / needed if needed > 0 else None,
                        goal=f"≥ {GOAL:.0%} fewer votes",
                        met=None if quick else bool(saved >= GOAL),
                        notes=f"saving {_saving(saved)} (per seed {seeds}); all took "
                        f"{seconds:.0f} s",
                    )
                )
    rows += [
        make_row(
            "Fisher weight p(1 − p) of a vote at the truth",
            size.label,
            ours=" / ".join(f"{mean.weight[a]:.3f}" for a in range(len(SUGGESTED))),
            reference=f"{mean.weight[-1]:.3f}",
            notes="ours: target " + " / ".join(SUGGESTED) + "; reference: random pairs; "
            "at most 0.25, how much a vote can tell about the strengths",
        ),
        make_row(
            "the most votes any rule could save against random pairs (ceiling)",
            size.label,
            ours=f"{mean.ceiling.mean():.0%}",
            notes=_ceiling(per_seed) + "; the precision of the whole ranking, asymptotic, "
            "even knowing the truth (bench/ranking/next_battle.py docstring)",
        ),
    ]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the tables of docs/evaluation.md."""
    quick = quick_option("bench.ranking.next_battle", __doc__, "one tiny world", argv)
    size = QUICK if quick else FULL
    per_seed, mean, seconds = collect(size)
    print(table_text(size.label, seconds, curves_table(size, per_seed, mean)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
