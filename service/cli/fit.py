"""``plb fit``: fit everything into a directory for ``plb report`` and ``plb serve``."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ranking.analysis import analyse_users
from ranking.evaluation import MIN_VOTES, evaluate_personalisation, latest_split
from ranking.frames import pairwise_from_battles, user_codes
from ranking.leaderboard import fit_leaderboard
from ranking.progress import Progress
from ranking.types import Method
from service.artifacts import write_fit
from service.cli import progress
from service.cli.common import (
    LeftOut,
    UsageError,
    add_input_options,
    add_output_options,
    add_topic_options,
    battles_phrase,
    check_at_least,
    check_existing,
    check_seed,
    check_share,
    check_topic_options,
    emit,
    read_log,
    report_left_out,
)
from service.cli.evaluate import evaluation_document, format_evaluation, truth_matrix
from service.cli.tables import format_table

__all__ = ["add_parser"]

log = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb fit``."""
    parser = subparsers.add_parser(
        "fit",
        help="fit aggregate and per-user ratings, agreement and evaluation into DIR",
        description="Fit the aggregate leaderboards (BT and Elo), every user's ratings with "
        "and without shrinkage, their agreement with the aggregate, and the held-out "
        "evaluation, and write them into DIR (replaced atomically) for 'plb report' and "
        "'plb serve'.",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument(
        "--min-battles",
        type=int,
        default=10,
        metavar="N",
        help="summarise agreement over users with at least N votes (default 10)",
    )
    parser.add_argument(
        "--truth", metavar="FILE", help="truth.json of 'plb simulate', for the evaluation"
    )
    parser.add_argument("--fraction", type=float, default=0.2, help="held-out share (0.2)")
    parser.add_argument(
        "--features",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit the topic model and the users' query profiles when the log has prompts "
        "(default; --no-features skips them)",
    )
    add_topic_options(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=os.environ.get(SCHEDULER_ENV) or None,
        help="run the heavy steps on a Dask cluster: a scheduler address (tcp://HOST:8786), "
        "or local:N for a cluster of N worker processes on this machine (default "
        f"${SCHEDULER_ENV}; unset: this process alone). BATTLES may then also be "
        "directories of Parquet datasets; the workers must be able to read them. Needs the "
        "'dask' extra",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="P",
        help="with --scheduler: partitions of the votes by user (default: 2 per worker)",
    )
    add_input_options(parser)
    add_output_options(parser)
    parser.set_defaults(run=run)


#: The environment variable that sets ``--scheduler``.
SCHEDULER_ENV = "PLB_DASK_SCHEDULER"


def check_options(args: argparse.Namespace) -> None:
    """Reject options that cannot work, before any battle log is read."""
    check_topic_options(args)
    check_at_least("--min-battles", args.min_battles, 1)
    check_share("--fraction", args.fraction)
    check_seed(args)
    check_at_least("--partitions", args.partitions, 1)
    if args.partitions is not None and not args.scheduler:
        raise UsageError(f"--partitions needs --scheduler (or ${SCHEDULER_ENV})")
    check_existing("--truth", args.truth)
    check_fit_dir(args.out)


def check_fit_dir(out: str) -> None:
    """Reject an ``--out`` that ``plb fit`` must not replace: a file, or another folder.

    The fit directory is replaced whole once the fit is written, so only a new or empty
    directory, or an earlier fit (with its ``manifest.json``), may be named.
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {out!r} is a file; plb fit writes a directory there")
    if path.is_dir() and not (path / "manifest.json").is_file() and any(path.iterdir()):
        raise UsageError(
            f"--out {out!r} is a folder of other files, not an earlier fit; plb fit replaces "
            "DIR whole, so give a new or empty directory"
        )


def run(args: argparse.Namespace) -> None:
    """Execute ``plb fit``: here, or with ``--scheduler`` on a Dask cluster."""
    check_options(args)
    if args.scheduler:
        _run_on_cluster(args)
        return
    read = read_log(args.battles, skip_invalid=args.skip_invalid)
    battles = read.battles
    codes, names = user_codes(battles)
    data = pairwise_from_battles(battles)
    methods: tuple[Method, ...] = ("bt", "elo")
    steps = [(m, s) for m in methods for s in ("cv", "none")]
    analyses = []
    evaluation = None
    with progress.stages() as stages:
        aggregates = {
            m: fit_leaderboard(data, method=m, rng=args.seed, progress=stages) for m in methods
        }
        advance = stages("per-user fits", len(steps), "fits")
        for method, shrinkage in steps:
            analyses.append(
                analyse_users(
                    data,
                    codes,
                    names,
                    method=method,
                    shrinkage=shrinkage,  # type: ignore[arg-type]
                    min_battles=args.min_battles,
                    aggregate=aggregates[method],
                    rng=args.seed,
                )
            )
            advance(1)
        if latest_split(codes, len(names), args.fraction).any():
            truth = truth_matrix(args.truth, names, data.models) if args.truth else None
            results = evaluate_personalisation(
                data,
                codes,
                len(names),
                fraction=args.fraction,
                true_ratings=truth,
                rng=args.seed,
                progress=stages,
            )
            evaluation = evaluation_document(results, args.fraction, MIN_VOTES, len(names))
    if evaluation is None:
        log.warning("no user has enough votes for a held-out evaluation; skipped")
    predictor, profiles = None, None
    if args.features:
        with progress.stages() as stages:
            predictor, profiles = _query_features(battles, data.models, args, stages)
    manifest = {
        "battles": [str(p) for p in args.battles],
        "n_battles": len(battles),
        "n_users": len(names),
        "models": list(data.models),
        "min_battles": args.min_battles,
        "seed": args.seed,
        "truth": args.truth,
        "features": profiles is not None,
        "prior_sd_from_prediction": None if predictor is None else predictor.prior_sd,
    }
    _finish(args, manifest, analyses, evaluation, predictor, profiles, battles, read)


def _run_on_cluster(args: argparse.Namespace) -> None:
    """``plb fit --scheduler``: the same fit, the heavy steps on a Dask cluster."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as error:
        raise UsageError(
            f"--scheduler needs Dask ({error.name} is missing): "
            "pip install 'personal-leaderboard[dask]'"
        ) from None
    from service.scale import ClusterError, connect, describe, fit_distributed

    try:
        with connect(args.scheduler) as client:
            fitted = fit_distributed(
                client,
                [str(p) for p in args.battles],
                seed=args.seed,
                min_battles=args.min_battles,
                fraction=args.fraction,
                truth=args.truth,
                features=args.features,
                embedding=args.embedding,
                n_topics=args.n_topics,
                skip_invalid=args.skip_invalid,
                n_partitions=args.partitions,
                progress=progress.note,
            )
    except ClusterError as error:
        raise UsageError(str(error)) from None
    report_left_out(fitted.report)
    predictor = fitted.predictor
    manifest = {
        "battles": [str(p) for p in args.battles],
        "n_battles": len(fitted.battles),
        "n_users": fitted.n_users,
        "models": list(fitted.models),
        "min_battles": args.min_battles,
        "seed": args.seed,
        "truth": args.truth,
        "features": fitted.profiles is not None,
        "prior_sd_from_prediction": None if predictor is None else predictor.prior_sd,
        "scheduler": describe(args.scheduler),
        "partitions": fitted.partitions,
        "workers": fitted.workers,
    }
    _finish(
        args,
        manifest,
        fitted.analyses,
        fitted.evaluation,
        predictor,
        fitted.profiles,
        fitted.battles,
        fitted.report,
    )


def _finish(
    args: argparse.Namespace,
    manifest: dict[str, Any],
    analyses: list[Any],
    evaluation: dict[str, Any] | None,
    predictor: Any,
    profiles: pd.DataFrame | None,
    battles: pd.DataFrame,
    read: LeftOut,
) -> None:
    """Write the fit directory and print what was fitted: both paths end here."""
    topic_model = None if predictor is None else predictor.profiler_.topic_model_
    out = write_fit(
        args.out,
        manifest=manifest,
        analyses=analyses,
        evaluation=evaluation,
        topic_model=topic_model,
        profiles=profiles,
        predictor=predictor,
        battles=battles,
    )
    document = {
        "out": str(out),
        **manifest,
        "summary": {
            f"{a.ratings.method}/{a.ratings.shrinkage}": a.summary.to_dict() for a in analyses
        },
        "evaluation": evaluation,
        "topics": None if topic_model is None else [t.to_dict() for t in topic_model.topics_],
    }
    rows = [
        (
            a.ratings.method,
            a.ratings.shrinkage,
            a.summary.users,
            f"{a.summary.mean_spearman:.3f}",
            f"{a.summary.median_spearman:.3f}",
            f"{a.summary.share_near_zero_or_negative:.0%}",
        )
        for a in analyses
    ]
    table = (
        f"Fitted {battles_phrase(len(battles), read)} from {manifest['n_users']:,} users "
        f"into {out}\n\n"
        "Agreement of per-user rankings with the aggregate\n\n"
        + format_table(("method", "shrinkage", "users", "mean", "median", "<= 0.1"), rows)
    )
    if evaluation is not None:
        table += "\n\n" + format_evaluation(evaluation)
    if topic_model is not None:
        table += f"\n\nTopics of the users' queries ({len(topic_model.topics_)})\n\n"
        table += format_table(
            ("topic", "queries", "top words"),
            [(t.topic, t.size, ", ".join(t.words[:8])) for t in topic_model.topics_],
        )
    emit(document, table, args.format)


def _query_features(
    battles: pd.DataFrame,
    models: tuple[str, ...],
    args: argparse.Namespace,
    stages: Progress | None = None,
) -> tuple[Any, Any]:
    """The rating predictor (with its topic model) and the users' profiles.

    ``(None, None)`` when the log has no prompts.
    """
    if "prompt" not in battles.columns or battles["prompt"].isna().all():
        log.warning("the log has no prompts: no topics, profiles or predictor fitted")
        return None, None
    from features.predictor import RatingPredictor  # heavy imports: only when needed
    from features.profile import UserProfiler
    from features.topics import TopicModel

    progress.note("fitting topics, query profiles and the rating predictor")
    topics = TopicModel(args.embedding, n_topics=args.n_topics, random_state=args.seed)
    predictor = RatingPredictor(UserProfiler(topics), random_state=args.seed)
    predictor.fit(battles, models=models, progress=stages)
    return predictor, predictor.training_profiles_.to_frame()
