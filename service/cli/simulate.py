"""``plb simulate``: a synthetic arena with known true preferences."""

from __future__ import annotations

import argparse
import math
import os

from data.real_prompts import load_real_prompts
from data.simulate import simulate
from data.simulation_files import write_simulation
from data.truth import mean_spearman
from service.cli.commands import COMMANDS
from service.cli.common import add_out_dir_option, add_output_options, check_seed, emit
from service.cli.errors import UsageError

__all__ = ["add_parser"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb simulate``."""
    parser = subparsers.add_parser(
        "simulate",
        help=COMMANDS["simulate"].help,
        description="Simulate users with topic mixtures and writing styles voting on models "
        "with per-topic strengths and style traits, and write the battle log "
        "(DIR/battles.jsonl.gz, docs/SPEC.md section 1) and the truth (DIR/truth.json: "
        "every user's and the population's true rating per model).",
    )
    add_out_dir_option(parser)
    parser.add_argument("--users", type=int, default=400, metavar="N", help="default 400")
    parser.add_argument(
        "--battles-per-user", type=int, default=60, metavar="B", help="mean votes a user (60)"
    )
    parser.add_argument("--models", type=int, default=15, metavar="K", help="default 15")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="default 0")
    parser.add_argument(
        "--random-voters",
        type=float,
        default=0.0,
        metavar="F",
        help="share of users who vote by coin flip (default 0)",
    )
    parser.add_argument(
        "--brigade",
        type=float,
        default=0.0,
        metavar="F",
        help="share of users who always vote one of the 3 weakest models up (default 0)",
    )
    parser.add_argument(
        "--prompts",
        metavar="FILE",
        help="write the votes with real prompts from FILE (JSON Lines with 'prompt' and "
        "'cluster'), chosen by each user's writing style within the drawn topic; default: "
        "template text",
    )
    add_output_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Execute ``plb simulate``."""
    for flag, value, least in (
        ("--users", args.users, 1),
        ("--battles-per-user", args.battles_per_user, 1),
        ("--models", args.models, 2),
    ):
        if value < least:
            raise UsageError(f"{flag} must be at least {least}, not {value}")
    check_seed(args)
    for flag, share in (("--random-voters", args.random_voters), ("--brigade", args.brigade)):
        if not (math.isfinite(share) and 0.0 <= share < 1.0):
            raise UsageError(f"{flag} must be at least 0 and below 1, not {share}")
    if args.random_voters + args.brigade >= 1.0:
        raise UsageError(
            "--random-voters plus --brigade must be below 1, "
            f"not {args.random_voters + args.brigade}"
        )
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out!r} is a file; plb simulate writes a directory there")
    real = None
    if args.prompts is not None:
        if not os.path.isfile(args.prompts):
            raise UsageError(f"--prompts {args.prompts!r} is not a file")
        try:
            real = load_real_prompts(args.prompts)
        except ValueError as exc:
            raise UsageError(f"--prompts {args.prompts!r}: {exc}") from exc
    sim = simulate(
        args.users,
        args.battles_per_user,
        args.models,
        rng=args.seed,
        random_voters=args.random_voters,
        brigade=args.brigade,
        prompts=real,
    )
    paths = write_simulation(sim, args.out)
    battles = sim.battles
    document = {
        "battles": str(paths["battles"]),
        "truth": str(paths["truth"]),
        "n_battles": len(battles),
        "users": args.users,
        "models": args.models,
        "seed": args.seed,
        "tie_share": round(float(battles["winner"].isin(["tie", "tie (bothbad)"]).mean()), 4),
        "mean_spearman_user_vs_population": round(
            mean_spearman(sim.user_ratings, sim.population_ratings), 4
        ),
    }
    if real is not None:
        document["prompts"] = real.source
        document["prompt_topics"] = real.topic_sizes()
        document["distinct_prompts_used"] = int(battles["prompt"].nunique())
    if sim.attackers is not None:
        document["random_voters"] = int((sim.attackers == "random").sum())
        document["brigade_voters"] = int((sim.attackers == "brigade").sum())
        document["brigade_model"] = sim.brigade_model
    table = "\n".join(f"{key:34} {value}" for key, value in document.items())
    emit(document, table, args.format)
