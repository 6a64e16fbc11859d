"""Benchmark S (issue 30): is a personal answer ever worse than the public board?

Real voters first: LLMFAO's crowd comparisons (``../shared/data/llmfao/``, read with
``--preset llmfao`` and the prompt texts joined by id; skipped with a reason where
absent), then the project's simulators (template prompts and real Arena prompts), as
a check that the weights do not throw away what queries tell where they do tell.

Each split holds a fifth of the users out whole (:func:`features.cold_start.
split_users`, seeded by the split); the rating predictor (TF-IDF embedding, so nothing is
downloaded) is fitted on the others, learning from their later votes how much their
earlier queries are worth (:mod:`features.evidence`). Every held-out user with a vote
after their first :data:`KNOWN` gives those votes, and their later votes are scored six
ways (:mod:`features.later_votes`): log-loss, accuracy, and the paired log-loss
difference from the aggregate with its standard error clustered by user, pooled over the
splits of a world.

``python -m bench.features.real_voters [--quick]`` prints the table of docs/evaluation.md;
``python -m bench.run real_voters`` writes the rows into bench/RESULTS.md.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from bench.common import (
    TABLES_DIR,
    Row,
    load_llmfao,
    make_row,
    quick_option,
    table_text,
    write_table,
)
from data.real_prompts import default_real_prompts_path
from data.simulate import simulate
from features.cold_start import split_users
from features.later_votes import WAYS, LaterVotes, aggregate_alpha, later_votes, summarise
from features.predictor import RatingPredictor
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.types import IntArray, PairwiseData
from ranking.users import aggregate_prior
from service.pipeline.config import FitConfig
from service.pipeline.steps import build_predictor

__all__ = [
    "KNOWN",
    "Split",
    "evaluate_split",
    "fit_without_test_users",
    "results_table",
    "run",
]

#: Votes each held-out user gives before their later votes are predicted.
KNOWN = 10


@dataclass(frozen=True)
class World:
    """A log to evaluate on, and the seeds of its splits."""

    name: str
    load: Callable[[], pd.DataFrame]
    splits: tuple[int, ...]


@dataclass(frozen=True)
class Split:
    """One split of a world: the votes in vote order, a fifth of the users held out, and
    the rating predictor fitted on the others."""

    battles: pd.DataFrame
    data: PairwiseData
    users: IntArray
    test_user: npt.NDArray[np.bool_]
    predictor: RatingPredictor


def fit_without_test_users(battles: pd.DataFrame, seed: int) -> Split:
    """Hold a fifth of the users out whole (seeded) and fit the predictor on the others."""
    battles = battles.iloc[vote_order(battles)]
    battles = battles[battles["user_id"].notna()].reset_index(drop=True)
    data = pairwise_from_battles(battles)
    users, names = user_codes(battles)
    test_user = split_users(names, fraction=0.2, rng=seed)
    predictor, _ = build_predictor(FitConfig(embedding="tfidf", seed=seed))
    predictor.fit(battles[~test_user[users]], models=data.models)
    return Split(battles, data, users, test_user, predictor)


def evaluate_split(battles: pd.DataFrame, seed: int, known: int = KNOWN) -> tuple[LaterVotes, dict]:
    """One split of one world: the held-out users' later votes scored, and the weights.

    Returns
    -------
    scored : LaterVotes
    weights : dict
        The predictor's ``evidence_`` (:class:`features.evidence.EvidenceWeights`).
    """
    split = fit_without_test_users(battles, seed)
    test_vote = split.test_user[split.users]
    train = split.data.select(~test_vote)
    aggregate = aggregate_prior(train, "bt")
    alpha = aggregate_alpha(train, aggregate, split.users[~test_vote], split.test_user.size, seed)
    scored = later_votes(
        split.predictor, split.battles, split.data, split.users, split.test_user, aggregate,
        alpha, known,
    )  # fmt: skip
    if scored is None:
        raise RuntimeError(f"split {seed}: no held-out user has a vote after their first {known}")
    return scored, split.predictor.evidence_.to_dict()


def _worlds(quick: bool) -> list[World]:
    worlds = []
    if load_llmfao() is not None:
        worlds.append(World("LLMFAO (real voters)", load_llmfao, (0,) if quick else (0, 1, 2, 3)))
    users, per_user, models = (60, 30, 6) if quick else (400, 60, 12)
    seeds = (0,) if quick else (0, 1)
    for seed in seeds:
        worlds.append(
            World(
                f"simulator, template prompts, seed {seed}",
                lambda s=seed: simulate(users, per_user, models, rng=s).battles,
                (seed,),
            )
        )
    real = None if quick else default_real_prompts_path()
    if real is not None:
        for seed in seeds:
            worlds.append(
                World(
                    f"simulator, real prompts, seed {seed}",
                    lambda s=seed: simulate(users, per_user, models, rng=s, prompts=real).battles,
                    (seed,),
                )
            )
    return worlds


def collect(quick: bool) -> tuple[list[dict[str, object]], float]:
    """Every world: its pooled rows (with ``world``, ``splits`` and the weights) and seconds."""
    start = time.perf_counter()
    rows: list[dict[str, object]] = []
    for world in _worlds(quick):
        battles = world.load()
        results = [evaluate_split(battles, seed) for seed in world.splits]
        weights = [w for _, w in results]
        person = ", ".join(f"{w['person']:.2f}" for w in weights)
        prompt = ", ".join(f"{w['prompt']:.2f}" for w in weights)
        for row in summarise([scored for scored, _ in results]):
            rows.append(
                {
                    "world": world.name,
                    "splits": len(world.splits),
                    "w_person": person,
                    "w_prompt": prompt,
                    **row,
                }  # fmt: skip
            )
    return rows, time.perf_counter() - start


def results_table(rows: list[dict[str, object]]) -> str:
    """The Markdown table of docs/evaluation.md: one line per world and way."""
    lines = [
        "| world | splits | weights: person; prompt | way | log-loss | − aggregate (se) "
        "| accuracy | votes (users) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        difference = (
            "—"
            if r["way"] == WAYS[0]
            else f"{r['minus_aggregate']:+.4f} ({r['minus_aggregate_se']:.4f})"
        )
        lines.append(
            f"| {r['world']} | {r['splits']} | {r['w_person']}; {r['w_prompt']} | {r['way']} "
            f"| {r['log_loss']:.4f} | {difference} | {r['accuracy']:.3f} "
            f"| {r['n_votes']:,} ({r['users']}) |"
        )
    return "\n".join(lines)


#: Where :func:`run` also writes the table of docs/evaluation.md.
TABLE_OUTPUT = TABLES_DIR / "real_voters.md"


def run(quick: bool) -> list[Row]:
    """The rows of bench/RESULTS.md: each personal way against the aggregate, per world."""
    results, seconds = collect(quick)
    label = f"held-out users' later votes after their first {KNOWN}"
    if not quick:
        write_table(TABLE_OUTPUT, label, seconds, results_table(results))
    rows = []
    for r in results:
        if r["way"] == WAYS[0]:
            continue
        base = next(b for b in results if (b["world"], b["way"]) == (r["world"], WAYS[0]))
        gap = float(r["minus_aggregate"])  # type: ignore[arg-type]
        goal, met = _goal(str(r["way"]), gap)
        rows.append(
            make_row(
                f"held-out log-loss, {r['way']}",
                f"{r['world']}: {r['n_votes']:,} later votes of {r['users']} held-out users, "
                f"{r['splits']} split(s)",
                ours=f"{r['log_loss']:.4f}",
                reference=f"{base['log_loss']:.4f} aggregate",
                goal=goal,
                met=met,
                notes=f"{gap:+.4f} (se {r['minus_aggregate_se']:.4f}) against the aggregate; "
                f"accuracy {r['accuracy']:.3f} vs {base['accuracy']:.3f}; weights learnt "
                f"person {r['w_person']}, prompt {r['w_prompt']}",
            )
        )
    rows.append(make_row("time, every world", label, ours=seconds))
    return rows


def _goal(way: str, gap: float) -> tuple[str, bool | None]:
    """Issue 30's bound for a way: queries within 0.005 of the aggregate, the rest at most
    the aggregate's log-loss (the blend's bound against its parts is read off the table)."""
    if way == "predicted from queries":
        return "<= aggregate + 0.005", bool(gap <= 0.005)
    if way == "per prompt":
        return "<= aggregate", bool(gap <= 0.0)
    return "", None


def main(argv: list[str] | None = None) -> int:
    """Print the table of docs/evaluation.md."""
    quick = quick_option("bench.features.real_voters", __doc__, "one split, one tiny world", argv)
    results, seconds = collect(quick)
    print(table_text(f"later votes after the first {KNOWN}", seconds, results_table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
