"""Benchmark AB (issue 34, item 2): a person's taste in answers, on LLMFAO's real voters.

LLMFAO (``../shared/data/llmfao/``; skipped with a reason where absent) has every voter's
id and every model's answer to each prompt (``results.jsonl.gz``), so each vote gets its
style covariates (:func:`features.answer_style.style_differences` of the two answers'
:func:`~features.answer_style.answer_style`). Each voter's votes are split in file order
(the log has no timestamps; file order is vote order), the earlier half to fit and the
later half to judge, as benchmark S (:mod:`bench.real_voters`) judges later votes:

1. the style-controlled aggregate (:func:`ranking.style_control.fit_style_bt`) is fitted
   on every voter's earlier votes: ratings ``theta`` and coefficients ``beta``;
2. each voter's coefficients are shrunk toward ``beta``
   (:func:`ranking.personal_style.fit_user_style`, the prior spread learnt by held-out
   log-loss over the earlier votes), with ``theta_a - theta_b`` as every vote's offset;
3. the later votes are scored three ways: the raw board (no style), the aggregate's
   style, and each voter's own; the per-user against the aggregate difference is given
   with its standard error over voters (each voter's mean difference, then their mean),
   and pooled over votes with the error clustered by voter;
4. on all votes, how many voters' taste is distinguishable from the aggregate's (an
   interval of their departure, the aggregate's own variance added, that excludes zero),
   and whether the fallback rule of :mod:`ranking.personal_style` keeps per-user taste.

``python -m bench.style_taste [--quick]`` prints the rows; ``python -m bench.run
style_taste`` writes them into bench/RESULTS.md. ``--quick`` keeps the first 3,000 votes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from bench.common import Row, make_row
from bench.real_voters import LLMFAO, load_llmfao
from features.answer_style import ANSWER_STYLE_FEATURES, answer_style, style_differences
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.pairwise import ELO_PER_NAT
from ranking.personal_style import (
    UserStyle,
    fit_user_style,
    fit_user_style_posterior,
    style_log_loss,
)
from ranking.style_control import fit_style_bt, style_covariance
from ranking.types import FloatArray, IntArray, PairwiseData

__all__ = ["TasteVotes", "Judged", "judge_later_votes", "llmfao_taste_votes", "run", "tell_apart"]

#: Votes kept by ``--quick``.
QUICK_VOTES = 3_000


@dataclass(frozen=True)
class TasteVotes:
    """LLMFAO's votes that have both answers, in file order, with their covariates."""

    data: PairwiseData
    users: IntArray
    n_users: int
    differences: FloatArray
    dropped: int


def _answers(folder: Path) -> dict[tuple[int, int], str]:
    """Each ``(prompt id, model id)``'s answer text, from ``results.jsonl.gz``."""
    answers: dict[tuple[int, int], str] = {}
    with gzip.open(folder / "results.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            answers[(int(record["prompt"]), int(record["model"]))] = str(record["result"] or "")
    return answers


def llmfao_taste_votes(folder: Path = LLMFAO, limit: int | None = None) -> TasteVotes | None:
    """LLMFAO's votes with both answers' style covariates; None where the data is absent.

    The answers are joined by the prompt's id (its text, read as ``--preset llmfao``
    reads it, mapped back through ``prompts.jsonl``) and each side's model id.
    """
    battles = load_llmfao(folder)
    if battles is None or not (folder / "results.jsonl.gz").exists():
        return None
    if limit is not None:
        battles = battles.iloc[:limit]
    prompt_ids: dict[str, int] = {}
    with open(folder / "prompts.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            prompt_ids[str(record["text"])] = int(record["id"])
    answers = _answers(folder)
    prompt = battles["prompt"].astype(str).map(prompt_ids)
    keys_a = list(zip(prompt, battles["model_x"].astype(int), strict=True))
    keys_b = list(zip(prompt, battles["model_y"].astype(int), strict=True))
    have = np.array([a in answers and b in answers for a, b in zip(keys_a, keys_b, strict=True)])
    kept = battles.loc[have].reset_index(drop=True)
    texts_a = [answers[k] for k, h in zip(keys_a, have, strict=True) if h]
    texts_b = [answers[k] for k, h in zip(keys_b, have, strict=True) if h]
    differences = style_differences(answer_style(texts_a), answer_style(texts_b))
    users, names = user_codes(kept)
    return TasteVotes(
        pairwise_from_battles(kept),
        np.asarray(users, dtype=np.intp),
        len(names),
        differences,
        int((~have).sum()),
    )


def earlier_half(users: IntArray, n_users: int) -> npt.NDArray[np.bool_]:
    """True for each voter's first half of their votes (rounded up), in file order."""
    order = np.argsort(users, kind="stable")
    counts = np.bincount(users, minlength=n_users)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    position = np.empty(users.size, dtype=np.intp)
    position[order] = np.arange(users.size) - np.repeat(starts, counts)
    return position < np.ceil(counts[users] / 2.0)


def _aggregate(votes: TasteVotes, rows: npt.NDArray[np.bool_]) -> tuple[FloatArray, ...]:
    """The style-controlled aggregate of some votes: theta, beta, beta's covariance."""
    data, x = votes.data, votes.differences
    m, y = data.matchups[rows], data.outcomes[rows]
    theta, beta = fit_style_bt(data.n_models, m, y, x[rows])
    covariance = style_covariance(theta, beta, m, y, x[rows])
    k = data.n_models
    return theta, beta, covariance[k:, k:]


def _voter_means(values: FloatArray, users: IntArray, n_users: int) -> tuple[float, float, int]:
    """Mean over voters of each voter's mean, its standard error, and the voters."""
    counts = np.bincount(users, minlength=n_users)
    voted = counts > 0
    means = np.bincount(users, weights=values, minlength=n_users)[voted] / counts[voted]
    n = int(voted.sum())
    return float(means.mean()), float(means.std(ddof=1) / math.sqrt(n)), n


def _clustered(values: FloatArray, users: IntArray, n_users: int) -> tuple[float, float]:
    """Mean over votes, its standard error clustered by voter."""
    mean = float(values.mean())
    sums = np.bincount(users, weights=values - mean, minlength=n_users)
    m = int((np.bincount(users, minlength=n_users) > 0).sum())
    return mean, math.sqrt(m / (m - 1) * float((sums**2).sum())) / values.size


@dataclass(frozen=True)
class Judged:
    """The later votes scored: each way's mean log-loss per vote with its standard error
    clustered by voter, and the per-user against aggregate difference."""

    taste: UserStyle
    seconds: float
    n_later: int
    raw: tuple[float, float]
    aggregate: tuple[float, float]
    per_user: tuple[float, float]
    product: tuple[float, float]
    gain_voters: tuple[float, float, int]
    gain_votes: tuple[float, float]
    style_gain_votes: tuple[float, float]


def judge_later_votes(votes: TasteVotes) -> Judged:
    """Fit on each voter's earlier half, score the later half three ways."""
    data, x, users, n_users = votes.data, votes.differences, votes.users, votes.n_users
    earlier = earlier_half(users, n_users)
    later = ~earlier
    theta, beta, covariance = _aggregate(votes, earlier)
    raw, _ = fit_style_bt(
        data.n_models, data.matchups[earlier], data.outcomes[earlier], np.zeros((earlier.sum(), 0))
    )
    offsets = theta[data.matchups[:, 0]] - theta[data.matchups[:, 1]]
    start = time.perf_counter()
    taste = fit_user_style(
        x[earlier], data.outcomes[earlier], offsets[earlier], users[earlier], n_users, beta,
        features=ANSWER_STYLE_FEATURES, aggregate_covariance=covariance,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    # the per-user coefficients at the learnt alpha, whatever the fallback rule decided
    per_user, _ = fit_user_style_posterior(
        x[earlier], data.outcomes[earlier], offsets[earlier], users[earlier], n_users, beta,
        taste.alpha,
    )  # fmt: skip
    y, u = data.outcomes[later], users[later]
    raw_offsets = raw[data.matchups[later, 0]] - raw[data.matchups[later, 1]]
    loss_raw = style_log_loss(raw_offsets, x[later], np.zeros(x.shape[1]), y)
    loss_aggregate = style_log_loss(offsets[later], x[later], beta, y)
    loss_user = style_log_loss(offsets[later], x[later], per_user[u], y)
    loss_product = style_log_loss(offsets[later], x[later], taste.coefficients[u], y)
    return Judged(
        taste,
        seconds,
        int(later.sum()),
        _clustered(loss_raw, u, n_users),
        _clustered(loss_aggregate, u, n_users),
        _clustered(loss_user, u, n_users),
        _clustered(loss_product, u, n_users),
        _voter_means(loss_aggregate - loss_user, u, n_users),
        _clustered(loss_aggregate - loss_user, u, n_users),
        _clustered(loss_raw - loss_aggregate, u, n_users),
    )


def tell_apart(votes: TasteVotes) -> tuple[UserStyle, FloatArray]:
    """Every voter's taste fitted on all their votes, and the aggregate's coefficients."""
    rows = np.ones(votes.users.size, dtype=bool)
    theta, beta, covariance = _aggregate(votes, rows)
    data = votes.data
    offsets = theta[data.matchups[:, 0]] - theta[data.matchups[:, 1]]
    taste = fit_user_style(
        votes.differences, data.outcomes, offsets, votes.users, votes.n_users, beta,
        features=ANSWER_STYLE_FEATURES, aggregate_covariance=covariance,
    )  # fmt: skip
    return taste, beta


def _points(value: float) -> str:
    return f"{ELO_PER_NAT * value:+.1f}"


def _rows(votes: TasteVotes, label: str) -> list[Row]:
    judged = judge_later_votes(votes)
    taste = judged.taste
    gain, gain_se, voters = judged.gain_voters
    pooled, pooled_se = judged.gain_votes
    style, style_se = judged.style_gain_votes
    losses = (
        f"raw {judged.raw[0]:.4f}, aggregate style {judged.aggregate[0]:.4f}, "
        f"per-user {judged.per_user[0]:.4f}"
    )
    sd_points = ", ".join(
        f"{f} {ELO_PER_NAT * taste.prior_sd:.0f}" for f in ANSWER_STYLE_FEATURES[:1]
    )
    held = taste.held_out
    rule = (
        f"cv gain {held.gain:+.4f} (se {held.se:.4f}) on the earlier votes"
        if held is not None
        else "alpha given"
    )
    all_votes, beta_all = tell_apart(votes)
    distinct = np.asarray(all_votes.distinct.any(axis=1), dtype=bool)
    length = np.asarray(all_votes.distinct[:, 0], dtype=bool)
    heavy = all_votes.n_battles >= 50
    coefficient = ", ".join(
        f"{f} {_points(b)}" for f, b in zip(ANSWER_STYLE_FEATURES, beta_all, strict=True)
    )
    data_text = f"{label}: {votes.data.outcomes.size:,} votes of {votes.n_users} voters"
    return [
        make_row(
            "later votes' log-loss: raw / aggregate style / per-user style",
            data_text,
            ours=losses,
            notes=f"{judged.n_later:,} later votes; aggregate style against raw "
            f"{style:+.4f} (se {style_se:.4f}, clustered by voter)",
        ),
        make_row(
            "per-user style against aggregate style, later votes",
            data_text,
            ours=f"{gain:+.4f} per vote (se {gain_se:.4f} over {voters} voters)",
            goal="> 0 by 2 se to show per-user taste",
            met=gain > 2 * gain_se,
            notes=f"pooled over votes {pooled:+.4f} (se {pooled_se:.4f}, clustered by "
            "voter); positive: per-user predicts better",
        ),
        make_row(
            "the fallback rule (earlier votes)",
            data_text,
            ours="per-user taste kept" if taste.personal else "falls back to the aggregate",
            notes=f"{rule}; prior sd {sd_points} points per doubling; fit {judged.seconds:.2f} s",
        ),
        make_row(
            "voters whose taste is told apart from the aggregate (all votes)",
            data_text,
            ours=f"{int(distinct.sum())} of {votes.n_users}",
            notes=f"on length: {int(length.sum())}; of the {int(heavy.sum())} voters with "
            f"50+ votes: {int(distinct[heavy].sum())}; aggregate coefficients (points per "
            f"unit): {coefficient}; rule on all votes: "
            + ("per-user kept" if all_votes.personal else "falls back to the aggregate"),
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    """Run benchmark AB on LLMFAO, or say why it is skipped.

    Parameters
    ----------
    quick : bool
        Keep the first 3,000 votes.
    """
    votes = llmfao_taste_votes(limit=QUICK_VOTES if quick else None)
    if votes is None:
        return [
            make_row(
                "a person's taste in answers",
                "LLMFAO",
                ours="skipped",
                notes=f"skipped: {LLMFAO} (crowd-comparisons.csv, results.jsonl.gz) is absent",
            )
        ]
    label = "LLMFAO (real voters)" + (", first 3,000 votes" if quick else "")
    if votes.dropped:
        label += f", {votes.dropped} votes without both answers dropped"
    return _rows(votes, label)


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 3,000 votes")
    args = parser.parse_args()
    rows = run(args.quick)
    frame = pd.DataFrame([dict(row) for row in rows])
    with pd.option_context("display.max_colwidth", None, "display.width", 250):
        print(frame[["what", "ours", "notes"]].to_string(index=False))


if __name__ == "__main__":
    _main()
