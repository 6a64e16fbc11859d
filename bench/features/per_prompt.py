"""Benchmark Q (issue 19, item 4): do per-prompt, per-person rankings predict held-out votes?

On ``plb simulate`` worlds, template prompts and real ones (``--prompts`` with the shared
Arena-Hard file, where present), the split is that of ``plb evaluate``'s cold-to-warm
check (:mod:`features.cold_start`): a fifth of the users (:func:`features.cold_start.
split_users`) is held out of the rating predictor's fit whole; each held-out user with at
least ``GIVEN + MIN_HELD_OUT`` votes gives their first ``GIVEN`` votes (in vote order),
and their later votes are the test. Each test vote, with its prompt and its user, gets
the probability that ``model_a`` wins three ways:

* **aggregate**: the Bradley-Terry board of the training votes;
* **per person**: the user's ranking, predicted from the queries of their given votes
  (``recommend`` without votes) or blended with the outcomes of those votes;
* **per prompt and person**: the contextual model at the test vote's prompt and the
  user's style, shifted by the user's offset learnt from their given votes
  (:mod:`features.per_prompt`).

Log-loss counts a tie as the outcome 0.5; accuracy leaves ties out. The predictor uses
the TF-IDF embedding, so that nothing is downloaded.

Run ``python -m bench.features.per_prompt [--quick]`` for the Markdown table of docs/evaluation.md;
``python -m bench.run per_prompt`` writes the rows into bench/RESULTS.md.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
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
from bench.features.real_voters import fit_without_test_users
from data.real_prompts import default_real_prompts_path
from data.simulate import simulate
from features.cold_start import MIN_HELD_OUT
from features.per_prompt import person_deviation, predict_prompts
from ranking.evaluation import predict
from ranking.pairwise import position_in_group
from ranking.users import aggregate_prior

__all__ = ["FULL", "QUICK", "Size", "evaluate_world", "results_table", "run"]

#: Votes each held-out user gives before their later votes are predicted.
GIVEN = 10
#: The three ways a test vote is predicted, in the table's order.
WAYS = ("aggregate", "per person", "per prompt and person")
#: The two things a held-out user gives.
KNOWN = ("queries only", f"queries and {GIVEN} votes")


@dataclass(frozen=True)
class Size:
    """One configuration of the experiment."""

    seeds: tuple[int, ...]
    users: int
    per_user: int
    models: int

    @property
    def label(self) -> str:
        return f"{self.users} users × {self.per_user} votes, {self.models} models"


FULL = Size((0, 1, 2, 3), 400, 60, 12)
QUICK = Size((0,), 60, 30, 6)


def _losses(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each vote's log-loss (a tie as the outcome 0.5) of ``P(model_a wins)``."""
    q = np.clip(p, 1e-6, 1 - 1e-6)
    return np.asarray(-(y * np.log(q) + (1 - y) * np.log1p(-q)))


def _accuracy(p: np.ndarray, y: np.ndarray) -> float:
    """Share of the votes that are not ties called right."""
    decided = y != 0.5
    return float(np.mean((p[decided] > 0.5) == (y[decided] == 1.0)))


def evaluate_world(battles: pd.DataFrame, seed: int) -> list[dict[str, object]]:
    """Held-out scores of the three ways, for each of :data:`KNOWN`, on one world.

    Returns rows with ``known``, ``way``, ``log_loss``, ``accuracy``, ``minus_person``
    and ``minus_person_se`` (the mean, and its standard error, of the vote-by-vote
    difference of log-loss from the per-person way), ``n_votes``, ``n_decided`` (votes
    that are not ties) and ``users``.
    """
    split = fit_without_test_users(battles, seed)
    battles, data, users, predictor = split.battles, split.data, split.users, split.predictor
    test_user = split.test_user
    aggregate = aggregate_prior(data.select(~test_user[users]), "bt")

    position = position_in_group(users)
    totals = np.bincount(users, minlength=test_user.size)
    eligible = test_user & (totals >= GIVEN + MIN_HELD_OUT)
    given = eligible[users] & (position < GIVEN)
    held = eligible[users] & (position >= GIVEN)
    people = predictor.profiler_.transform(battles[given])  # rows: eligible users, sorted
    row_of = np.full(test_user.size, -1)
    row_of[np.flatnonzero(eligible)] = np.arange(int(eligible.sum()))
    predicted = predictor.predict(people)
    own = data.select(given)
    blended = predictor.blend(predicted, own, row_of[users[given]])
    deviation = person_deviation(predicted, blended)

    held_rows = row_of[users[held]]
    held_data = data.select(held)
    prompts = battles.loc[held, "prompt"].astype(str).tolist()
    y = held_data.outcomes
    results = []
    for known in KNOWN:
        person = predicted if known == KNOWN[0] else blended
        shift = None if known == KNOWN[0] else deviation
        per_prompt, _ = predict_prompts(predictor, prompts, people, held_rows, person, shift)
        probabilities = {
            WAYS[0]: predict(aggregate, held_data.matchups, None),
            WAYS[1]: predict(person.ratings, held_data.matchups, held_rows),
            WAYS[2]: predict(
                per_prompt.ratings, held_data.matchups, np.arange(len(prompts), dtype=np.intp)
            ),
        }
        person_losses = _losses(probabilities[WAYS[1]], y)
        for way, p in probabilities.items():
            losses = _losses(p, y)
            gain = losses - person_losses  # paired, vote by vote
            results.append(
                {
                    "known": known,
                    "way": way,
                    "log_loss": float(losses.mean()),
                    "accuracy": _accuracy(p, y),
                    "minus_person": float(gain.mean()),
                    "minus_person_se": float(gain.std(ddof=1) / np.sqrt(gain.size)),
                    "n_votes": int(y.size),
                    "n_decided": int((y != 0.5).sum()),
                    "users": int(eligible.sum()),
                }
            )
    return results


def _worlds(size: Size, quick: bool) -> list[tuple[str, Path | None]]:
    worlds: list[tuple[str, Path | None]] = [("template", None)]
    real = None if quick else default_real_prompts_path()
    if real is not None:
        worlds.append(("real prompts", real))
    return worlds


def collect(size: Size, quick: bool) -> tuple[list[dict[str, object]], float]:
    """Every world and seed of ``size``: the rows (with ``world`` and ``seed``) and seconds."""
    start = time.perf_counter()
    rows = []
    for world, prompts in _worlds(size, quick):
        for seed in size.seeds:
            sim = simulate(size.users, size.per_user, size.models, rng=seed, prompts=prompts)
            for row in evaluate_world(sim.battles, seed):
                rows.append({"world": world, "seed": seed, **row})
    return rows, time.perf_counter() - start


def results_table(rows: list[dict[str, object]]) -> str:
    """The Markdown table of docs/evaluation.md: one line per world, seed and known."""
    header = (
        "world|seed|test users (votes)|known|log-loss: aggregate|per person|per prompt and person"
        "|per prompt − per person (se)|accuracy: aggregate|per person|per prompt and person"
    ).split("|")
    lines = []
    keys = dict.fromkeys((r["world"], r["seed"], r["known"]) for r in rows)
    for world, seed, known in keys:
        found = {
            r["way"]: r for r in rows if (r["world"], r["seed"], r["known"]) == (world, seed, known)
        }
        first = next(iter(found.values()))
        losses = [f"{found[w]['log_loss']:.4f}" for w in WAYS]
        accuracies = [f"{found[w]['accuracy']:.3f}" for w in WAYS]
        gain = found[WAYS[2]]
        difference = f"{gain['minus_person']:+.4f} ({gain['minus_person_se']:.4f})"
        users = f"{first['users']} ({first['n_votes']:,})"
        lines.append([str(world), str(seed), users, str(known), *losses, difference, *accuracies])
    return markdown_table(header, lines)


#: Where :func:`run` also writes the table of docs/evaluation.md.
TABLE_OUTPUT = TABLES_DIR / "per_prompt.md"


def run(quick: bool) -> list[Row]:
    """The rows of bench/RESULTS.md; a full run also writes the table of
    docs/evaluation.md to :data:`TABLE_OUTPUT`."""
    size = QUICK if quick else FULL
    results, seconds = collect(size, quick)
    if not quick:
        write_table(TABLE_OUTPUT, size.label, seconds, results_table(results))
    rows = []
    for r in results:
        if r["way"] == WAYS[0]:
            continue
        base = next(
            b
            for b in results
            if (b["world"], b["seed"], b["known"], b["way"])
            == (r["world"], r["seed"], r["known"], WAYS[0])
        )
        rows.append(
            make_row(
                f"held-out log-loss, {r['way']} ({r['known']})",
                f"{r['world']}, seed {r['seed']}: {size.label}",
                ours=f"{r['log_loss']:.4f}",
                reference=f"{base['log_loss']:.4f} aggregate",
                notes=f"accuracy {r['accuracy']:.3f} vs {base['accuracy']:.3f} (ties left "
                f"out); {r['n_votes']:,} votes of {r['users']} held-out users"
                + (
                    f"; {r['minus_person']:+.4f} (se {r['minus_person_se']:.4f}) against per "
                    "person, vote by vote"
                    if r["way"] == WAYS[2]
                    else ""
                ),
            )
        )
    rows.append(
        make_row(
            "time, every world and seed",
            size.label,
            ours=seconds,
            notes="predictor fitted once a world (TF-IDF embedding)",
        )
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table of docs/evaluation.md."""
    quick = quick_option("bench.features.per_prompt", __doc__, "one tiny template world", argv)
    size = QUICK if quick else FULL
    results, seconds = collect(size, quick)
    print(table_text(size.label, seconds, results_table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
