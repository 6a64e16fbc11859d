"""Benchmark AB (issue 34, item 2): a person's taste in answers, on LLMFAO's real voters.

LLMFAO (``../shared/data/llmfao/``; skipped with a reason where absent) has every voter's
id and every model's answer to each prompt (``results.jsonl.gz``), so each vote gets its
style covariates (:func:`features.answer_style.style_differences` of the two answers'
:func:`~features.answer_style.answer_style`). Each voter's votes are split in file order
(the log has no timestamps; file order is vote order), the earlier half to fit and the
later half to judge, as benchmark S (:mod:`bench.features.real_voters`) judges later votes:

1. the style-controlled aggregate (:func:`ranking.style_control.fit.fit_style_bt`) is fitted
   on every voter's earlier votes: ratings ``theta`` and coefficients ``beta``;
2. each voter's coefficients are shrunk toward ``beta``
   (:func:`ranking.personal_style.fit.fit_user_style`, the prior spread learnt on the earlier
   votes alone, two ways: held-out log-loss over folds, ``"cv"``, the ratings' default,
   and each voter's first quarter judged by their second, ``"later"``), with
   ``theta_a - theta_b`` as every vote's offset;
3. the later votes are scored three ways: the raw board (no style), the aggregate's
   style, and each voter's own; the per-user against the aggregate difference is given
   with its standard error over voters (each voter's mean difference, then their mean),
   and pooled over votes with the error clustered by voter;
4. on all votes, how many voters' taste is distinguishable from the aggregate's (an
   interval of their departure, the aggregate's own variance added, that excludes zero),
   and whether the fallback rule of :mod:`ranking.personal_style` keeps per-user taste.

``python -m bench.features.style_taste [--quick]`` prints the rows; ``python -m bench.run
style_taste`` writes them into bench/RESULTS.md. ``--quick`` keeps the first 3,000 votes.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from bench.common import LLMFAO, Row, load_llmfao, make_row
from features.answer_style import ANSWER_STYLE_FEATURES, answer_style, style_differences
from ranking.io.answer_texts import LLMFAO_ANSWERS, read_answer_texts, vote_answers
from ranking.io.frames import pairwise_from_battles, user_codes, vote_order
from ranking.io.prompt_texts import read_prompt_texts
from ranking.pairwise import ELO_PER_NAT
from ranking.personal_style.fit import earlier_votes, fit_user_style
from ranking.personal_style.posterior import fit_user_style_posterior
from ranking.personal_style.predict import style_log_loss, taste_strengths
from ranking.personal_style.results import StyleAlphaMethod, UserStyle
from ranking.style_control.fit import fit_style_bt, style_covariance
from ranking.types import CENTER, FloatArray, IntArray, PairwiseData
from ranking.users import fit_user_ratings
from service.live.personal import fit_taste_prior, typical_answer_style
from service.pipeline.style import fit_style_document

__all__ = ["TasteVotes", "Judged", "judge_later_votes", "llmfao_taste_votes", "run", "tell_apart"]

#: Votes kept by ``--quick``.
QUICK_VOTES = 3_000
#: Votes from which a voter counts as heavy in the rows' breakdowns.
HEAVY = 50


@dataclass(frozen=True)
class TasteVotes:
    """LLMFAO's votes that have both answers, in file order, with their covariates."""

    data: PairwiseData
    users: IntArray
    n_users: int
    differences: FloatArray
    dropped: int
    style_a: FloatArray
    style_b: FloatArray
    battles: pd.DataFrame


def llmfao_taste_votes(folder: Path = LLMFAO, limit: int | None = None) -> TasteVotes | None:
    """LLMFAO's votes with both answers' style covariates; None where the data is absent.

    The answers are joined by prompt and model as ``plb`` joins them
    (:func:`ranking.io.answer_texts.read_answer_texts` with LLMFAO's fields, then
    :meth:`~ranking.io.answer_texts.AnswerTexts.attach`).
    """
    battles = load_llmfao(folder)
    if battles is None or not (folder / "results.jsonl.gz").exists():
        return None
    if limit is not None:
        battles = battles.iloc[:limit]
    answers = read_answer_texts(
        folder / "results.jsonl.gz",
        prompts=read_prompt_texts(folder / "prompts.jsonl"),
        **LLMFAO_ANSWERS,
    )
    battles = answers.attach(battles)
    texts_a, texts_b, present = vote_answers(battles)
    kept = battles.iloc[vote_order(battles)[present]].reset_index(drop=True)
    style_a, style_b = answer_style(texts_a), answer_style(texts_b)
    users, names = user_codes(kept)
    return TasteVotes(
        pairwise_from_battles(kept),
        np.asarray(users, dtype=np.intp),
        len(names),
        style_differences(style_a, style_b),
        int((~present).sum()),
        style_a,
        style_b,
        kept,
    )


def model_covariates(votes: TasteVotes, rows: npt.NDArray[np.bool_]) -> FloatArray:
    """``(k, p)`` each model's typical answer against the average answer, from the answers
    of ``rows`` (:func:`service.live.personal.typical_answer_style`, as the product reads it)."""
    data = votes.data
    return typical_answer_style(
        votes.style_a[rows], votes.style_b[rows], data.matchups[rows], data.n_models
    )


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
    """The later votes scored, per-user taste learnt one way: each way's mean log-loss per
    vote with its standard error clustered by voter, and per-user against aggregate."""

    method: StyleAlphaMethod
    taste: UserStyle
    seconds: float
    n_later: int
    raw: tuple[float, float]
    aggregate: tuple[float, float]
    per_user: tuple[float, float]
    product: tuple[float, float]
    gain_voters: tuple[float, float, int]
    gain_votes: tuple[float, float]
    gain_heavy: tuple[float, float, int]
    style_gain_votes: tuple[float, float]
    unseen: dict[str, tuple[float, float]]
    unseen_gain: tuple[float, float, int]
    board_gain: tuple[float, float, int]
    refitted_gain: tuple[float, float, int]
    refitted_told: int


def judge_later_votes(votes: TasteVotes, method: StyleAlphaMethod = "cv") -> Judged:
    """Fit on each voter's earlier half, score the later half: raw, aggregate style, and
    per-user style with ``alpha`` learnt by ``method`` on the earlier half alone (for
    ``"later"``: its first half judged by its second)."""
    data, x, users, n_users = votes.data, votes.differences, votes.users, votes.n_users
    earlier = earlier_votes(users, n_users)
    later = ~earlier
    theta, beta, covariance = _aggregate(votes, earlier)
    raw, _ = fit_style_bt(
        data.n_models, data.matchups[earlier], data.outcomes[earlier], np.zeros((earlier.sum(), 0))
    )
    offsets = theta[data.matchups[:, 0]] - theta[data.matchups[:, 1]]
    start = time.perf_counter()
    taste = fit_user_style(
        x[earlier], data.outcomes[earlier], offsets[earlier], users[earlier], n_users, beta,
        features=ANSWER_STYLE_FEATURES, aggregate_covariance=covariance, method=method,
        earlier=earlier_votes(users[earlier], n_users) if method == "later" else None,
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
    heavy = (np.bincount(users, minlength=n_users) >= HEAVY)[u]
    # answers unseen: each model's typical answer stands in for its answer of the vote
    typical = model_covariates(votes, earlier)
    a, b = data.matchups[later, 0], data.matchups[later, 1]
    mine = taste_strengths(theta, typical, per_user)  # (U, k)
    everyone = taste_strengths(theta, typical, beta)
    zero = np.zeros((int(later.sum()), 0))
    unseen_raw = style_log_loss(raw[a] - raw[b], zero, np.zeros(0), y)
    unseen_everyone = style_log_loss(everyone[a] - everyone[b], zero, np.zeros(0), y)
    unseen_mine = style_log_loss(mine[u, a] - mine[u, b], zero, np.zeros(0), y)
    # the personal board as it is: each voter's ratings shrunk toward the aggregate
    boards = fit_user_ratings(data.select(earlier), users[earlier], n_users, rng=0).ratings
    nats = (boards - CENTER) / ELO_PER_NAT
    unseen_board = style_log_loss(nats[u, a] - nats[u, b], zero, np.zeros(0), y)
    # the personal board, then this vote's answers' departure from the models' typical
    # ones, under everyone's taste or the voter's own
    departure = x[later] - (typical[a] - typical[b])
    board_offsets = nats[u, a] - nats[u, b]
    seen_everyone = style_log_loss(board_offsets, departure, beta, y)
    seen_mine = style_log_loss(board_offsets, departure, per_user[u], y)
    # the voter's taste refitted on top of their own board (the earlier votes' departures
    # from the models' typical answers, the board as offsets): no model preference left
    # for the taste to soak up
    e_a, e_b, e_u = data.matchups[earlier, 0], data.matchups[earlier, 1], users[earlier]
    on_board = fit_user_style(
        x[earlier] - (typical[e_a] - typical[e_b]), data.outcomes[earlier],
        nats[e_u, e_a] - nats[e_u, e_b], e_u, n_users, beta, aggregate_covariance=covariance,
        method=method,
        earlier=earlier_votes(e_u, n_users) if method == "later" else None,
    )  # fmt: skip
    on_board_beta, _ = fit_user_style_posterior(
        x[earlier] - (typical[e_a] - typical[e_b]), data.outcomes[earlier],
        nats[e_u, e_a] - nats[e_u, e_b], e_u, n_users, beta, on_board.alpha,
    )  # fmt: skip
    seen_refitted = style_log_loss(board_offsets, departure, on_board_beta[u], y)
    return Judged(
        method,
        taste,
        seconds,
        int(later.sum()),
        _clustered(loss_raw, u, n_users),
        _clustered(loss_aggregate, u, n_users),
        _clustered(loss_user, u, n_users),
        _clustered(loss_product, u, n_users),
        _voter_means(loss_aggregate - loss_user, u, n_users),
        _clustered(loss_aggregate - loss_user, u, n_users),
        _voter_means((loss_aggregate - loss_user)[heavy], u[heavy], n_users),
        _clustered(loss_raw - loss_aggregate, u, n_users),
        {
            "raw": _clustered(unseen_raw, u, n_users),
            "everyone": _clustered(unseen_everyone, u, n_users),
            "per_user": _clustered(unseen_mine, u, n_users),
            "board": _clustered(unseen_board, u, n_users),
            "board_everyone": _clustered(seen_everyone, u, n_users),
            "board_mine": _clustered(seen_mine, u, n_users),
            "board_refitted": _clustered(seen_refitted, u, n_users),
        },
        _voter_means(unseen_everyone - unseen_mine, u, n_users),
        _voter_means(seen_everyone - seen_mine, u, n_users),
        _voter_means(seen_everyone - seen_refitted, u, n_users),
        int(on_board.distinct.any(axis=1).sum()),
    )


def tell_apart(votes: TasteVotes, method: StyleAlphaMethod = "cv") -> tuple[UserStyle, FloatArray]:
    """Every voter's taste fitted on all their votes (``alpha`` learnt by ``method``, for
    ``"later"`` each voter's first half judged by their second), and the aggregate's
    coefficients."""
    rows = np.ones(votes.users.size, dtype=bool)
    theta, beta, covariance = _aggregate(votes, rows)
    data = votes.data
    offsets = theta[data.matchups[:, 0]] - theta[data.matchups[:, 1]]
    taste = fit_user_style(
        votes.differences, data.outcomes, offsets, votes.users, votes.n_users, beta,
        features=ANSWER_STYLE_FEATURES, aggregate_covariance=covariance, method=method,
        earlier=earlier_votes(votes.users, votes.n_users) if method == "later" else None,
    )  # fmt: skip
    return taste, beta


def _points(value: float) -> str:
    return f"{ELO_PER_NAT * value:+.1f}"


def _judged_rows(judged: Judged, data_text: str) -> list[Row]:
    taste = judged.taste
    gain, gain_se, voters = judged.gain_voters
    pooled, pooled_se = judged.gain_votes
    heavy, heavy_se, heavy_voters = judged.gain_heavy
    unseen_gain, unseen_se, unseen_voters = judged.unseen_gain
    board_gain, board_se, board_voters = judged.board_gain
    refit_gain, refit_se, refit_voters = judged.refitted_gain
    held = taste.held_out
    rule = (
        f"gain {held.gain:+.4f} (se {held.se:.4f}) on the earlier votes' held-out ones"
        if held is not None
        else "alpha given"
    )
    way = f"alpha by {judged.method}"
    return [
        make_row(
            f"own style against everyone's, everyone's ratings as offsets, later votes ({way})",
            data_text,
            ours=f"{gain:+.4f} per vote (se {gain_se:.4f} over {voters} voters)",
            goal="> 0 by 2 se to show per-user taste",
            met=gain > 2 * gain_se,
            notes=f"pooled over votes {pooled:+.4f} (se {pooled_se:.4f}, clustered by "
            f"voter); voters with {HEAVY}+ votes {heavy:+.4f} (se {heavy_se:.4f}, "
            f"{heavy_voters} voters); per-user log-loss {judged.per_user[0]:.4f}; positive: "
            "per-user predicts better",
        ),
        make_row(
            f"answers unseen (each model's typical answer): own against everyone's taste ({way})",
            data_text,
            ours=f"{unseen_gain:+.4f} per vote (se {unseen_se:.4f} over {unseen_voters} voters)",
            notes=f"later votes' log-loss: raw board {judged.unseen['raw'][0]:.4f}, "
            f"controlled + everyone's taste {judged.unseen['everyone'][0]:.4f}, controlled "
            f"+ own taste {judged.unseen['per_user'][0]:.4f} (ranking.personal_style.predict."
            "taste_strengths: a person's board before any answer is seen); the personal "
            f"board of per-user ratings {judged.unseen['board'][0]:.4f}",
        ),
        make_row(
            f"the personal board, then the answers: own against everyone's taste ({way})",
            data_text,
            ours=f"{board_gain:+.4f} per vote (se {board_se:.4f} over {board_voters} voters)",
            notes="later votes' log-loss: the personal board (per-user ratings) alone "
            f"{judged.unseen['board'][0]:.4f}; with the answers' departure from the models' "
            f"typical ones under everyone's taste {judged.unseen['board_everyone'][0]:.4f}, "
            f"under the voter's own {judged.unseen['board_mine'][0]:.4f}",
        ),
        make_row(
            f"own taste refitted on top of the personal board, against everyone's ({way})",
            data_text,
            ours=f"{refit_gain:+.4f} per vote (se {refit_se:.4f} over {refit_voters} voters)",
            notes=f"later votes' log-loss {judged.unseen['board_refitted'][0]:.4f} (everyone's "
            f"taste {judged.unseen['board_everyone'][0]:.4f}); voters told apart on the "
            f"earlier votes: {judged.refitted_told}",
        ),
        make_row(
            f"the fallback rule, everyone's ratings as offsets, earlier votes ({way})",
            data_text,
            ours="per-user taste kept" if taste.personal else "falls back to the aggregate",
            notes=f"{rule}; prior sd {ELO_PER_NAT * taste.prior_sd:.0f} points per "
            f"doubling of length; what the product scores on the later votes: "
            f"{judged.product[0]:.4f}; fit {judged.seconds:.2f} s",
        ),
    ]


def _rows(votes: TasteVotes, label: str) -> list[Row]:
    data_text = f"{label}: {votes.data.outcomes.size:,} votes of {votes.n_users} voters"
    cv = judge_later_votes(votes, "cv")
    style, style_se = cv.style_gain_votes
    rows = [
        make_row(
            "later votes' log-loss: raw / aggregate style",
            data_text,
            ours=f"raw {cv.raw[0]:.4f}, aggregate style {cv.aggregate[0]:.4f}",
            notes=f"{cv.n_later:,} later votes; aggregate style against raw {style:+.4f} "
            f"(se {style_se:.4f}, clustered by voter)",
        ),
        *_judged_rows(cv, data_text),
        *_judged_rows(judge_later_votes(votes, "later"), data_text),
    ]
    document = fit_style_document(votes.battles)
    methods: tuple[StyleAlphaMethod, ...] = ("cv", "later")
    for method in methods:
        prior = fit_taste_prior(votes.battles, document, method=method)
        if prior is not None:
            rows.append(
                make_row(
                    f"the product on all votes: fit_taste_prior (alpha by {method})",
                    data_text,
                    ours="per-user taste kept" if prior.personal else "falls back to everyone's",
                    notes="each voter's taste beyond their own board (the answers' departures "
                    "from the models' typical ones, the voter's shrunk ratings as offsets); "
                    f"prior sd {ELO_PER_NAT / math.sqrt(prior.alpha):.0f} points per doubling",
                )
            )
    for method in methods:
        every, beta = tell_apart(votes, method)
        distinct = np.asarray(every.distinct.any(axis=1), dtype=bool)
        length = np.asarray(every.distinct[:, 0], dtype=bool)
        heavy = every.n_battles >= HEAVY
        coefficient = ", ".join(
            f"{f} {_points(b)}" for f, b in zip(ANSWER_STYLE_FEATURES, beta, strict=True)
        )
        rule = "per-user kept" if every.personal else "falls back to the aggregate"
        held = every.held_out
        rows.append(
            make_row(
                f"voters told apart, everyone's ratings as offsets (all votes, alpha by {method})",
                data_text,
                ours=f"{int(distinct.sum())} of {votes.n_users}",
                notes=f"on length: {int(length.sum())}; of the {int(heavy.sum())} voters with "
                f"{HEAVY}+ votes: {int(distinct[heavy].sum())}; prior sd "
                f"{ELO_PER_NAT * every.prior_sd:.0f} points per doubling; the rule: {rule}"
                + (f" (gain {held.gain:+.4f}, se {held.se:.4f})" if held is not None else "")
                + f"; aggregate coefficients (points per unit): {coefficient}",
            )
        )
    return rows


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
