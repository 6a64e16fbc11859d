"""Benchmark AD (issue 34, item 4): prompts repeated too often, capped before the boards.

What the cap of ``plb fit --repeat-cap`` (:mod:`ranking.repeats`) does to the public
Bradley-Terry board, judged where the truth is known and shown where it is not:

* **The simulator with bots** (:func:`data.repeated_prompts.with_repeated_prompts`): an
  arena of 400 users (about 24,000 votes on distinct prompts) plus 3 prompts asked 3,000
  times each by one-shot voters whose taste is the prompt's own; and the same with 3
  popular prompts asked 1,000 times each with the population's taste (votes a cap only
  wastes). A fifth of the distinct-prompt votes is held out; the board is fitted on the
  rest with every repeated vote, uncapped, then with each cap (a seeded sample, and the
  down-weight ``cap / count``), and scored on the held-out votes: log-loss with its paired
  standard error against the uncapped board, and Spearman with the population's true
  ratings. Over ``SEEDS``.
* **The simulator with popular prompts only** (no bots): what the cap costs where the
  repeated votes are as good as any.
* **The simulator without repeated prompts**: what ``auto`` does where nothing is
  repeated too often (the template prompts repeat "hi" a few dozen times): the votes it
  touches.
* **LLMFAO** (``../shared/data/llmfao/``, 13 prompts each judged about 690 times by
  design): the cap ``auto`` picks and what it touches (nothing), and what fixed caps would
  do (votes dropped, models still ranked, how the board moves) - why the default must
  be relative to the log.
* **The real Arena log** has no prompt text: nothing can be counted there.

Nothing is timed. ``python -m bench.ranking.repeats [--quick]`` prints the rows;
``python -m bench.run repeats`` writes them into bench/RESULTS.md. ``--quick``: one seed,
60 users, 500 votes a bot prompt.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.common import SHARED_DATA, Row, load_llmfao, make_row, quick_option

__all__ = ["CAPS", "SEEDS", "held_out_scores", "run"]

logger = logging.getLogger("bench")

_SHARED = SHARED_DATA
LLMFAO = _SHARED / "llmfao"
ARENA_LOG = _SHARED / "arena-140k" / "battles.csv.gz"
#: The simulator's seeds.
SEEDS = (0, 1, 2, 3, 4)
#: The fixed caps compared with ``auto`` on the simulator.
CAPS = (10, 50, 200, 1000)
#: Fixed caps shown on LLMFAO.
LLMFAO_CAPS = (50, 200, 500)


@dataclass(frozen=True)
class Scores:
    """One board's held-out scores on one seed."""

    log_loss: float
    diff: float  # mean paired log-loss difference with the uncapped board
    se: float  # its standard error
    spearman: float  # with the population's true ratings
    removed: float  # votes' worth taken away


def _bt_ratings(data: Any) -> Any:
    from ranking.bt import fit_bt
    from ranking.pairwise import collapse, to_elo_scale

    votes = collapse(data)
    return to_elo_scale(fit_bt(votes.n_models, votes.matchups, votes.outcomes, votes.weights))


def held_out_scores(
    seed: int,
    *,
    users: int,
    n_bots: int,
    bot_votes: int,
    n_popular: int,
    treatments: Sequence[tuple[str, Any]],
) -> dict[str, Scores]:
    """Each treatment's held-out scores on one simulated arena with bot prompts.

    ``treatments`` are ``(name, (cap, mode))``; ``cap`` ``"auto"`` or an int, and the
    uncapped board ``("none", None)``.
    """
    from data.repeated_prompts import with_repeated_prompts
    from data.simulate import simulate
    from ranking.agreement import spearman_per_row
    from ranking.evaluation import predict
    from ranking.io.frames import pairwise_from_battles, vote_order
    from ranking.repeats import auto_cap, prompt_codes, treat_repeats

    sim = simulate(users, 60, 15, rng=seed)
    arena = with_repeated_prompts(
        sim, n_bots=n_bots, bot_votes=bot_votes, n_popular=n_popular, popular_votes=1000, rng=seed
    )
    battles = arena.battles
    order = vote_order(battles)
    data = pairwise_from_battles(battles)
    codes = prompt_codes(battles["prompt"].to_numpy(dtype=object)[order])
    repeated = arena.repeated[order]
    test = ~repeated & (np.random.default_rng(1000 + seed).random(repeated.size) < 0.2)
    train, held, train_codes = data.select(~test), data.select(test), codes[~test]
    truth = sim.population_ratings.reindex(data.models).to_numpy()
    y = held.outcomes

    def losses(ratings: Any) -> Any:
        p = np.clip(predict(ratings, held.matchups, None), 1e-6, 1 - 1e-6)
        return -(y * np.log(p) + (1 - y) * np.log1p(-p))

    base = losses(_bt_ratings(train))
    scores = {}
    for name, treatment in treatments:
        removed = 0.0
        if treatment is None:
            ratings = _bt_ratings(train)
        else:
            cap, mode = treatment
            threshold = auto_cap(train_codes) if cap == "auto" else cap
            votes, effect = treat_repeats(train, train_codes, threshold, mode=mode, rng=seed)
            ratings, removed = _bt_ratings(votes), effect.weight_removed
        loss = losses(ratings)
        d = loss - base
        scores[name] = Scores(
            float(loss.mean()),
            float(d.mean()),
            float(d.std(ddof=1) / np.sqrt(d.size)),
            float(spearman_per_row(ratings[None, :], truth)[0]),
            removed,
        )
    return scores


def _simulator_rows(quick: bool) -> list[Row]:
    seeds = SEEDS[:1] if quick else SEEDS
    users, bot_votes = (60, 500) if quick else (400, 3000)
    treatments: list[tuple[str, Any]] = [
        ("uncapped", None),
        ("auto, sample (the default)", ("auto", "sample")),
        ("auto, weight cap/count", ("auto", "weight")),
        *((f"cap {c}, sample", (c, "sample")) for c in CAPS),
    ]
    rows: list[Row] = []
    for n_bots, n_popular in ((3, 0), (3, 3), (0, 3)):
        runs = [
            held_out_scores(
                s,
                users=users,
                n_bots=n_bots,
                bot_votes=bot_votes,
                n_popular=n_popular,
                treatments=treatments,
            )
            for s in seeds
        ]
        parts = [f"{users} users"]
        if n_bots:
            parts.append(f"{n_bots} bot prompts x {bot_votes:,}")
        if n_popular:
            parts.append(f"{n_popular} popular prompts x 1,000 (population taste)")
        data = (
            f"simulator, {' + '.join(parts)}; {len(seeds)} seeds, 20% of distinct-prompt "
            "votes held out"
        )
        for name, _ in treatments:
            s = [r[name] for r in runs]
            diffs = np.array([x.diff for x in s])
            se = np.sqrt(np.mean([x.se**2 for x in s]) / len(s))
            rho = np.array([x.spearman for x in s])
            uncapped = name == "uncapped"
            judged = not uncapped and name.startswith("auto") and n_bots > 0
            rows.append(
                make_row(
                    f"held-out log-loss, {name}",
                    data,
                    ours=f"{np.mean([x.log_loss for x in s]):.4f}",
                    goal="below uncapped" if judged else "",
                    met=bool(diffs.mean() + 2 * se < 0) if judged else None,
                    notes=(
                        f"Spearman with the true ratings {rho.mean():.3f} "
                        f"(seeds {min(rho):.3f}-{max(rho):.3f})"
                        + (
                            ""
                            if uncapped
                            else f"; vs uncapped {diffs.mean():+.4f} (se {se:.4f}), "
                            f"{np.mean([x.removed for x in s]):,.0f} votes' worth removed"
                        )
                    ),
                )
            )
    return rows


def _plain_rows(quick: bool) -> list[Row]:
    """``auto`` on simulated arenas without bots: what it touches."""
    from data.simulate import simulate
    from ranking.io.frames import pairwise_from_battles
    from ranking.io.repeat_codes import thin_repeated
    from ranking.leaderboard import fit_leaderboard
    from ranking.repeats import board_shift

    rows: list[Row] = []
    for users in (100,) if quick else (400, 2000):
        battles = simulate(users, 60, 15, rng=0).battles
        data = pairwise_from_battles(battles)
        capped, effect = thin_repeated(battles, data, "auto", rng=0)
        assert effect is not None
        notes = (
            f"cap {effect.cap}; {effect.n_repeated} prompts over it; the most asked prompt "
            f"has {effect.largest} votes"
        )
        if effect.n_touched:
            before, after = (fit_leaderboard(d, interval="none") for d in (data, capped))
            shift = board_shift(
                {m.model: m.rating for m in before.models},
                {m.model: m.rating for m in after.models},
            )
            notes += (
                f"; the board beside the uncapped one: Spearman {shift.spearman:.3f}, "
                f"largest move {shift.largest_move:.1f} points"
            )
        rows.append(
            make_row(
                "auto on a log without bots: votes touched",
                f"simulator, {users} users, {len(battles):,} votes, template prompts",
                ours=f"{effect.n_touched:,} of {len(battles):,}",
                notes=notes,
            )
        )
    return rows


def _llmfao_rows() -> list[Row]:
    data_text = "LLMFAO crowd votes, 13 prompts, Bradley-Terry, --min-votes 20"
    if not (LLMFAO / "crowd-comparisons.csv").is_file():
        return [make_row("LLMFAO", data_text, ours="skipped", notes=f"{LLMFAO} is absent")]
    from ranking.io.frames import pairwise_from_battles
    from ranking.io.repeat_codes import battle_prompt_codes
    from ranking.leaderboard import fit_leaderboard
    from ranking.repeats import auto_cap, board_shift, treat_repeats

    battles = load_llmfao(LLMFAO)
    assert battles is not None
    codes = battle_prompt_codes(battles)
    assert codes is not None
    data = pairwise_from_battles(battles)
    counts = np.bincount(codes[codes >= 0])
    raw = fit_leaderboard(data, min_votes=20)
    before = {m.model: m.rating for m in raw.models}
    cap = auto_cap(codes)
    rows = [
        make_row(
            "auto on LLMFAO: votes touched",
            data_text,
            ours=f"{int(counts[counts > cap].sum()):,} of {len(battles):,}",
            goal="0",
            met=bool((counts <= cap).all()),
            notes=f"cap {cap:,} (10 x the median prompt's {int(np.median(counts))} votes); "
            f"prompts hold {counts.min()}-{counts.max()} votes each",
        )
    ]
    for fixed in LLMFAO_CAPS:
        votes, effect = treat_repeats(data, codes, fixed, rng=0)
        board = fit_leaderboard(votes, min_votes=20)
        shift = board_shift(before, {m.model: m.rating for m in board.models})
        rows.append(
            make_row(
                f"a fixed cap of {fixed} on LLMFAO (what auto avoids)",
                data_text,
                ours=f"{effect.weight_removed:,.0f} of {len(battles):,} votes dropped",
                notes=f"{len(board.models)} of {len(raw.models)} models still ranked; "
                f"Spearman with the uncapped board {shift.spearman:.3f}, largest move "
                f"{shift.largest_move:.0f} points ({shift.model})",
            )
        )
    return rows


def run(quick: bool = False) -> list[Row]:
    """Run benchmark AD.

    Parameters
    ----------
    quick : bool
        One seed, 60 users, 500 votes a bot prompt; LLMFAO as it is.

    Returns
    -------
    list of Row
    """
    logger.info("repeats: the simulator with bot prompts")
    rows = _simulator_rows(quick)
    rows += _plain_rows(quick)
    logger.info("repeats: LLMFAO")
    rows += _llmfao_rows()
    rows.append(
        make_row(
            "the real Arena log",
            "arena-140k",
            ours="not measurable",
            notes="the log holds no prompt text (nor user ids): repeated prompts cannot be "
            "counted, and plb fit says 'not checked (the log has no prompts)'"
            + ("" if ARENA_LOG.is_file() else f"; {ARENA_LOG} is absent here"),
        )
    )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the rows (``python -m bench.ranking.repeats [--quick]``)."""
    quick = quick_option("bench.ranking.repeats", __doc__, "one seed, small arenas", argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for row in run(quick):
        print(row)


if __name__ == "__main__":
    main()
