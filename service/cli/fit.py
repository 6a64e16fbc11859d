"""``plb fit``: fit everything into a directory for ``plb report`` and ``plb serve``."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.common import (
    LeftOut,
    add_input_options,
    add_out_dir_option,
    add_output_options,
    add_seed_option,
    add_topic_options,
    battles_phrase,
    check_at_least,
    check_existing,
    check_seed,
    check_share,
    check_topic_options,
    emit,
    read_input,
    report_left_out,
)
from service.cli.errors import UsageError
from service.cli.evaluate import format_evaluation
from service.cli.log_shape import log_shape
from service.cli.repeats import add_repeat_options, check_repeat_options, format_repeats
from service.cli.tables import format_table
from service.pipeline import FitConfig, FitResult, fit_all, manifest_document, write_result
from service.pipeline.reuse import Earlier
from service.pipeline.timings import SEPARATOR, Stopwatch

__all__ = ["add_parser"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb fit``."""
    parser = subparsers.add_parser(
        "fit",
        help=COMMANDS["fit"].help,
        description="Fit the aggregate leaderboards (BT and Elo), every user's ratings with "
        "and without shrinkage, their agreement with the aggregate, and the held-out "
        "evaluation, and write them into DIR (replaced atomically) for 'plb report' and "
        "'plb serve'.",
    )
    add_out_dir_option(parser)
    parser.add_argument(
        "--min-battles",
        type=int,
        default=FitConfig.min_battles,
        metavar="N",
        help="summarise agreement over users with at least N votes (default 10)",
    )
    parser.add_argument(
        "--truth", metavar="FILE", help="truth.json of 'plb simulate', for the evaluation"
    )
    parser.add_argument(
        "--fraction", type=float, default=FitConfig.fraction, help="held-out share (0.2)"
    )
    parser.add_argument(
        "--features",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit the topic model and the users' query profiles when the log has prompts "
        "(default; --no-features skips them)",
    )
    add_topic_options(parser)
    parser.add_argument(
        "--reuse",
        metavar="DIR",
        help="refit from the earlier fit in DIR (often the --out directory itself): embed and "
        "measure only the prompts it has not seen (the others' rows are kept by text in "
        "its texts/), give new prompts its topics instead of fitting topics again (when "
        "--embedding, --n-topics and --seed are as it was fitted), and start the rating "
        "predictor from its own. Without --reuse every fit is made afresh",
    )
    add_repeat_options(parser)
    add_seed_option(parser, FitConfig.seed)
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
    check_repeat_options(args)
    check_at_least("--partitions", args.partitions, 1)
    if args.partitions is not None and not args.scheduler:
        raise UsageError(f"--partitions needs --scheduler (or ${SCHEDULER_ENV})")
    if args.scheduler and isinstance(args.repeat_cap, int):
        raise UsageError(
            f"--repeat-cap does not run on a cluster yet: drop --scheduler (or "
            f"${SCHEDULER_ENV}), or the cap"
        )
    check_existing("--truth", args.truth)
    check_fit_dir(args.out)
    check_reuse(args)


def check_reuse(args: argparse.Namespace) -> None:
    """Reject a ``--reuse`` that cannot work: not an earlier fit, or with options that
    fit no query features or fit on a cluster."""
    if args.reuse is None:
        return
    if not (Path(args.reuse) / "manifest.json").is_file():
        raise UsageError(f"--reuse {args.reuse!r} is not an earlier fit (no manifest.json)")
    if not args.features:
        raise UsageError("--reuse reuses the query features, which --no-features skips")
    if args.scheduler:
        raise UsageError(
            f"--reuse does not run on a cluster yet: drop --scheduler (or ${SCHEDULER_ENV})"
        )


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


def fit_config(args: argparse.Namespace) -> FitConfig:
    """The :class:`FitConfig` of ``plb fit``'s options (each field an option of its name)."""
    return FitConfig(**{field.name: getattr(args, field.name) for field in fields(FitConfig)})


def run(args: argparse.Namespace) -> None:
    """Execute ``plb fit``: here, or with ``--scheduler`` on a Dask cluster."""
    check_options(args)
    config = fit_config(args)
    if args.scheduler:
        _run_on_cluster(args, config)
        return
    watch = Stopwatch()
    earlier = None
    if args.reuse is not None:
        with watch.step("reading the earlier fit"):
            earlier = _earlier(args.reuse)
    with watch.step("ingest"):
        read = read_input(args)
    with progress.stages() as stages:
        result = fit_all(
            read.battles, config, stages, note=progress.note, stopwatch=watch, earlier=earlier
        )
    _finish(args, result, manifest_document(result, config, args.battles), read)


def _earlier(fit_dir: str) -> Earlier:
    """The earlier fit of ``--reuse``; a usage error when it cannot be read."""
    try:
        return Earlier.load(fit_dir)
    except (ValueError, OSError) as error:
        raise UsageError(f"--reuse {fit_dir!r}: {error}") from None


def _run_on_cluster(args: argparse.Namespace, config: FitConfig) -> None:
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

    shape = log_shape(args)
    try:
        with connect(args.scheduler) as client:
            if config.repeat_cap is not None:  # said once the cluster answers, not before
                progress.note(
                    "the Dask fit counts every vote of every prompt (no --repeat-cap yet)"
                )
            fitted = fit_distributed(
                client,
                [str(p) for p in args.battles],
                config,
                n_partitions=args.partitions,
                progress=progress.note,
                columns=shape.columns,
                prompts=shape.prompts,
            )
    except ClusterError as error:
        raise UsageError(str(error)) from None
    report_left_out(fitted.report)
    manifest = manifest_document(
        fitted,
        config,
        args.battles,
        scheduler=describe(args.scheduler),
        partitions=fitted.partitions,
        workers=fitted.workers,
    )
    _finish(args, fitted, manifest, fitted.report)


def _finish(
    args: argparse.Namespace, result: FitResult, manifest: dict[str, Any], read: LeftOut
) -> None:
    """Write the fit directory and print what was fitted: both paths end here."""
    started = time.perf_counter()
    out = write_result(args.out, result, manifest)
    timings = {**result.timings, "writing": round(time.perf_counter() - started, 3)}
    analyses, evaluation, topic_model = result.analyses, result.evaluation, result.topic_model
    document = {
        "out": str(out),
        **manifest,
        "timings": timings,
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
        f"Fitted {battles_phrase(len(result.battles), read)} from {manifest['n_users']:,} users "
        f"into {out}\n\n"
        "Agreement of per-user rankings with the aggregate\n\n"
        + format_table(("method", "shrinkage", "users", "mean", "median", "<= 0.1"), rows)
    )
    repeats = format_repeats(manifest.get("repeats"))
    if repeats:
        table += "\n\n" + repeats
    if manifest.get("query_evidence"):
        table += "\n\n" + format_query_evidence(manifest["query_evidence"])
    if evaluation is not None:
        table += "\n\n" + format_evaluation(evaluation)
    if topic_model is not None:
        table += f"\n\nTopics of the users' queries ({len(topic_model.topics_)})\n\n"
        table += format_table(
            ("topic", "queries", "top words"),
            [(t.topic, t.size, ", ".join(t.words[:8])) for t in topic_model.topics_],
        )
    table += "\n\n" + format_timings(timings)
    emit(document, table, args.format)


def format_query_evidence(evidence: dict[str, Any]) -> str:
    """How much a person's queries are worth, as the fit learnt it, in words and figures."""
    if not evidence["n_votes"]:
        return (
            "Personal answers from queries: no training user had votes enough to learn from "
            "(3 or more), so a person's predicted ranking is the public one"
        )
    loss = evidence["log_loss"]
    head = (
        f"Personal answers from queries, learnt on the later votes of "
        f"{evidence['n_users']:,} training users ({evidence['n_votes']:,} votes) after their "
        "first queries"
    )
    rows = [
        ("the public ranking", "", f"{loss['aggregate']:.4f}", ""),
        (
            "a person's ranking",
            f"{evidence['person']:.0%}",
            f"{loss['person']:.4f}",
            _gain(evidence["gain_person"], evidence["se_person"]),
        ),
        (
            "one prompt's ranking",
            f"{evidence['prompt']:.0%}",
            f"{loss['prompt']:.4f}",
            _gain(evidence["gain_prompt"], evidence["se_prompt"]),
        ),
    ]
    table = format_table(("answer", "kept of what queries say", "log-loss", "gain (se)"), rows)
    verdict = (
        "queries don't separate people here: a person's predicted ranking is the public one "
        "until they vote"
        if evidence["person"] == 0.0
        else f"a person's ranking moves {evidence['person']:.0%} of the way from the public "
        "ranking toward what their queries say"
    )
    return f"{head}\n\n{table}\n\n{verdict}"


def _gain(gain: float | None, se: float | None) -> str:
    if gain is None:
        return "n/a"
    return f"{gain:+.4f}" + ("" if se is None else f" ({se:.4f})")


def format_timings(timings: dict[str, float]) -> str:
    """The steps of the fit and their wall seconds, their parts indented, and the total."""
    rows: list[tuple[str, object]] = []
    total = 0.0
    for name, seconds in timings.items():
        step, _, part = name.partition(SEPARATOR)
        rows.append((f"  {part}" if part else step, round(seconds, 1)))
        total += 0.0 if part else seconds
    rows.append(("total", round(total, 1)))
    return "Steps (wall seconds)\n\n" + format_table(("step", "seconds"), rows)
