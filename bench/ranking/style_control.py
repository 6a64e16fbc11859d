"""Benchmark AC (issue 34, item 1): style control on LLMFAO's real votes and answers.

LLMFAO (``../shared/data/llmfao/``: crowd votes, and every model's answer to every prompt
in ``results.jsonl.gz``) is read as ``plb leaderboard --preset llmfao --prompts
prompts.jsonl --answers results.jsonl.gz`` reads it; skipped with a reason where absent.
Nothing here is timed.

* **Which features, which scaling**: held-out log-loss per vote over five folds of the
  votes (seeded), of the raw Bradley-Terry board and of style control with each candidate
  feature set (length alone, the markdown counts alone, all four) and scaling (the fixed
  ones of :data:`features.answer_style.SCALINGS`, and FastChat's ratio standardised over
  the training votes, ``ratio-z``), each as the paired difference from the raw board
  with its standard error clustered by prompt.
* **Stability when a model is removed**: each model's votes left out in turn (every model;
  ten with ``--quick``), the fit redone: how far the style coefficients move (Elo points,
  median and largest over the removals) with the fixed scaling and with ``ratio-z``, whose
  scale is the data's and moves with it (ComparIA issue 261); and how far the other
  models' controlled ratings move.
* **The board**: the coefficients with their 95% intervals, how many models change rank
  and by how much, the Spearman correlation of the raw and controlled ratings, and the
  largest moves.

``python -m bench.ranking.style_control [--quick]`` prints the rows; ``python -m bench.run
style_control`` writes them into bench/RESULTS.md.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from bench.common import LLMFAO, Row, make_row, quick_option
from features.answer_style import (
    ANSWER_STYLE_FEATURES,
    answer_style,
    coefficient_phrase,
    fit_style_control,
    style_differences,
)
from ranking.bt import fit_bt
from ranking.io.answer_texts import LLMFAO_ANSWERS, read_answer_texts, vote_answers
from ranking.io.column_map import PRESETS
from ranking.io.frames import pairwise_from_battles, vote_order
from ranking.io.ingest import read_battles
from ranking.io.prompt_texts import read_prompt_texts
from ranking.pairwise import ELO_PER_NAT
from ranking.style_control.fit import fit_style_bt, style_covariance, style_log_loss
from ranking.types import FloatArray, PairwiseData

__all__ = ["FEATURE_SETS", "LLMFAO", "Votes", "load_votes", "run"]

logger = logging.getLogger("bench")

#: Candidate feature sets: column indices into ANSWER_STYLE_FEATURES.
FEATURE_SETS: dict[str, tuple[int, ...]] = {
    "length": (0,),
    "markdown (headers, lists, bold)": (1, 2, 3),
    "all four": (0, 1, 2, 3),
}
#: Candidate scalings: the fixed ones, and FastChat's standardised ratio.
SCALINGS = ("mixed", "ratio", "log_ratio", "difference", "ratio-z")
FOLDS = 5
#: The features and scaling the package uses (features.answer_style's default).
DEFAULT = "all four, mixed"


@dataclass(frozen=True)
class Votes:
    """LLMFAO's votes as arrays, each vote's two answers measured, and its prompt."""

    data: PairwiseData
    style_a: FloatArray
    style_b: FloatArray
    prompt: np.ndarray
    battles: pd.DataFrame


def load_votes(folder: Path = LLMFAO) -> Votes | None:
    """LLMFAO's votes with both answers joined, or None where the data is absent."""
    votes = folder / "crowd-comparisons.csv"
    if not votes.exists():
        return None
    prompts = read_prompt_texts(folder / "prompts.jsonl")
    battles = read_battles(votes, columns=PRESETS["llmfao"], prompts=prompts).battles
    answers = read_answer_texts(folder / "results.jsonl.gz", prompts=prompts, **LLMFAO_ANSWERS)
    battles = answers.attach(battles)
    a, b, present = vote_answers(battles)
    if not present.all():
        raise RuntimeError("every LLMFAO vote should have both answers")
    prompt = battles["prompt"].astype(str).to_numpy()[vote_order(battles)]
    return Votes(pairwise_from_battles(battles), answer_style(a), answer_style(b), prompt, battles)


def covariates(votes: Votes, scaling: str, columns: Sequence[int], train: np.ndarray) -> FloatArray:
    """The votes' covariates; ``ratio-z`` standardised by the ``train`` votes' mean and sd."""
    if scaling == "ratio-z":
        x = style_differences(votes.style_a, votes.style_b, scaling="ratio")[:, list(columns)]
        mean, sd = x[train].mean(axis=0), x[train].std(axis=0)
        return np.asarray((x - mean) / np.where(sd > 0, sd, 1.0), dtype=np.float64)
    x = style_differences(votes.style_a, votes.style_b, scaling=scaling)  # type: ignore[arg-type]
    return np.asarray(x[:, list(columns)], dtype=np.float64)


def _clustered(difference: FloatArray, clusters: np.ndarray) -> tuple[float, float]:
    """Mean of per-vote differences and its standard error clustered by ``clusters``."""
    codes, _ = pd.factorize(pd.Series(clusters))
    sums = np.bincount(codes, weights=difference)
    sizes = np.bincount(codes)
    n, g = difference.size, sums.size
    mean = float(difference.mean())
    se = float(np.sqrt(g / (g - 1) * ((sums - mean * sizes) ** 2).sum()) / n)
    return mean, se


def held_out_rows(votes: Votes, seed: int = 0) -> list[Row]:
    """Held-out log-loss of each feature set and scaling against the raw board."""
    d = votes.data
    n = d.outcomes.size
    fold = np.random.default_rng(seed).permutation(n) % FOLDS
    raw_loss = np.empty(n)
    for f in range(FOLDS):
        train, test = fold != f, fold == f
        theta = fit_bt(d.n_models, d.matchups[train], d.outcomes[train], d.weights[train])
        raw_loss[test] = style_log_loss(
            theta, np.zeros(0), d.matchups[test], d.outcomes[test], np.zeros((test.sum(), 0))
        )
    data_text = f"LLMFAO crowd, {n:,} votes, {FOLDS} folds"
    rows = [
        make_row(
            "held-out log-loss: raw Bradley-Terry",
            data_text,
            ours=f"{raw_loss.mean():.4f}",
            notes="nats per vote; the baseline of the rows below",
        )
    ]
    best: tuple[float, str] | None = None
    losses: dict[str, FloatArray] = {}
    for set_name, columns in FEATURE_SETS.items():
        for scaling in SCALINGS:
            loss = np.empty(n)
            for f in range(FOLDS):
                train, test = fold != f, fold == f
                x = covariates(votes, scaling, columns, train)
                theta, beta = fit_style_bt(
                    d.n_models, d.matchups[train], d.outcomes[train], x[train]
                )
                loss[test] = style_log_loss(
                    theta, beta, d.matchups[test], d.outcomes[test], x[test]
                )
            mean, se = _clustered(loss - raw_loss, votes.prompt)
            label = f"{set_name}, {scaling}"
            losses[label] = loss
            if best is None or mean < best[0]:
                best = (mean, label)
            rows.append(
                make_row(
                    f"held-out log-loss, style control: {label}",
                    data_text,
                    ours=f"{loss.mean():.4f}",
                    notes=f"{mean:+.4f} ± {se:.4f} against raw (SE clustered by prompt)",
                )
            )
    if best is not None:
        chosen = losses[DEFAULT]
        gap, gap_se = _clustered(losses[best[1]] - chosen, votes.prompt)
        rows.append(
            make_row(
                "held-out log-loss: best candidate",
                data_text,
                ours=best[1],
                notes=f"{best[0]:+.4f} nats per vote against raw; {gap:+.4f} ± {gap_se:.4f} "
                f"against the default ({DEFAULT})",
            )
        )
    return rows


def _without(votes: Votes, model: int) -> tuple[PairwiseData, np.ndarray]:
    """The votes without ``model``'s, the other models re-indexed; and the rows kept."""
    d = votes.data
    keep = (d.matchups[:, 0] != model) & (d.matchups[:, 1] != model)
    index = np.arange(d.n_models) - (np.arange(d.n_models) > model)
    names = tuple(m for j, m in enumerate(d.models) if j != model)
    return PairwiseData(names, index[d.matchups[keep]], d.outcomes[keep], d.weights[keep]), keep


def stability_rows(votes: Votes, models: Sequence[int]) -> list[Row]:
    """How far coefficients, their scale and the others' ratings move when one model is
    left out: the fixed scaling against FastChat's standardised ratio (``ratio-z``)."""
    d = votes.data
    every = np.ones(d.outcomes.size, dtype=bool)
    columns = FEATURE_SETS["all four"]
    names = [ANSWER_STYLE_FEATURES[c] for c in columns]
    rows = []
    data_text = f"LLMFAO crowd, each of {len(models)} models left out in turn"
    for scaling in ("mixed", "ratio-z"):
        x = covariates(votes, scaling, columns, every)
        theta, beta = fit_style_bt(d.n_models, d.matchups, d.outcomes, x)
        se = np.sqrt(
            np.diag(style_covariance(theta, beta, d.matchups, d.outcomes, x))[d.n_models :]
        )
        in_se, rating_moves, scale_moves = [], [], []
        for model in models:
            data, keep = _without(votes, model)
            xm = covariates(votes, scaling, columns, keep)
            theta_m, beta_m = fit_style_bt(data.n_models, data.matchups, data.outcomes, xm[keep])
            in_se.append(np.abs(beta_m - beta) / se)
            others = np.delete(theta, model)
            shift = (theta_m - theta_m.mean()) - (others - others.mean())
            rating_moves.append(float(np.abs(shift).max() * ELO_PER_NAT))
            # the covariate of a vote that stays: its value moves only if its scale does
            scale_moves.append(float(np.abs(xm[keep] - x[keep]).max()))
        moved = np.array(in_se)
        per_feature = ", ".join(
            f"{name} {np.median(moved[:, i]):.2f}/{moved[:, i].max():.2f}"
            for i, name in enumerate(names)
        )
        rows += [
            make_row(
                f"coefficient moves in standard errors, scaling {scaling}",
                data_text,
                ours=f"median {np.median(moved):.2f} SE",
                notes=f"median/largest per feature: {per_feature}",
            ),
            make_row(
                f"a kept vote's covariate moves, scaling {scaling}",
                data_text,
                ours=f"at most {max(scale_moves):.3f}",
                notes="the same two answers, re-scaled: 0 for a fixed scaling; "
                "standardising over the votes moves every vote's covariate",
            ),
            make_row(
                f"others' controlled ratings move, scaling {scaling}",
                data_text,
                ours=f"median {np.median(rating_moves):.1f} pts",
                notes=f"largest {max(rating_moves):.1f} points (any other model, re-centred)",
            ),
        ]
    return rows


def board_rows(votes: Votes) -> list[Row]:
    """The controlled board against the raw one: coefficients, rank changes, largest moves."""
    result = fit_style_control(votes.battles, min_votes=20)
    data_text = f"LLMFAO crowd, {result.board.n_battles:,} votes, {len(result.board.models)} models"
    rows = [
        make_row(
            f"coefficient: {c.feature}",
            data_text,
            ours=f"{c.coefficient:+.1f} pts",
            notes=coefficient_phrase(c.feature, c.coefficient, c.lower, c.upper),
        )
        for c in result.coefficients
    ]
    raw = {m.model: m for m in result.raw.models}
    names = [m.model for m in result.board.models]
    controlled = np.array([m.rating for m in result.board.models])
    before = np.array([raw[name].rating for name in names])
    rank_now = {m.model: m.rank for m in result.board.models}
    changed = [name for name in names if rank_now[name] != raw[name].rank]
    by_rating_now = {name: i for i, name in enumerate(np.array(names)[np.argsort(-controlled)])}
    by_rating_raw = {name: i for i, name in enumerate(np.array(names)[np.argsort(-before)])}
    places = np.array([abs(by_rating_now[n] - by_rating_raw[n]) for n in names])
    moves = controlled - before
    order = np.argsort(-np.abs(moves))[:3]
    rho = float(spearmanr(controlled, before).statistic)
    rows += [
        make_row(
            "ranks that change under control",
            data_text,
            ours=f"{len(changed)} of {len(names)}",
            notes=f"interval ranks; by rating alone, median {np.median(places):g} and at "
            f"most {places.max()} places; Spearman raw vs controlled {rho:.3f}",
        ),
        make_row(
            "rating moves under control",
            data_text,
            ours=f"median {np.median(np.abs(moves)):.1f} pts",
            notes="largest: "
            + "; ".join(
                f"{names[j]} {moves[j]:+.0f} (rank {raw[names[j]].rank} -> {rank_now[names[j]]})"
                for j in order
            ),
        ),
    ]
    return rows


def run(quick: bool = False) -> list[Row]:
    """Run benchmark AC.

    Parameters
    ----------
    quick : bool
        Leave out ten models in turn, not every one.

    Returns
    -------
    list of Row
        A skipped row where LLMFAO is absent.
    """
    votes = load_votes()
    if votes is None:
        return [
            make_row(
                "style control on LLMFAO",
                "LLMFAO crowd",
                ours="skipped",
                notes=f"skipped: {LLMFAO} is absent",
            )
        ]
    logger.info("style_control: %d votes", votes.data.outcomes.size)
    rows = board_rows(votes)
    rows += held_out_rows(votes)
    step = max(1, votes.data.n_models // 10) if quick else 1
    rows += stability_rows(votes, range(0, votes.data.n_models, step))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the rows (``python -m bench.ranking.style_control [--quick]``)."""
    doc = __doc__ or ""
    quick = quick_option("bench.ranking.style_control", doc, "leave out ten models, not each", argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for row in run(quick):
        print(row)


if __name__ == "__main__":
    main()
