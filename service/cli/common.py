"""What every ``plb`` command shares: reading battle logs, output format, errors."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, Protocol, cast

import pandas as pd

from features.embeddings import BACKENDS
from ranking.io.chunks import BattleLogError
from ranking.io.column_map import ColumnMap
from ranking.io.exports import TABLE_FORMATS, TableFormat, leaderboard_bytes
from ranking.io.ingest import IngestResult, read_battles
from ranking.io.prompt_texts import PromptTexts
from service.cli import progress
from service.cli.errors import UsageError
from service.cli.log_shape import LogShape, add_shape_options, log_shape, shape_error

__all__ = [
    "LeftOut",
    "add_input_options",
    "add_output_options",
    "add_topic_options",
    "battles_phrase",
    "check_at_least",
    "check_existing",
    "check_output",
    "check_seed",
    "check_share",
    "check_topic_options",
    "emit",
    "load_battles",
    "load_input",
    "nothing_left",
    "read_input",
    "read_log",
    "report_left_out",
]


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """The battle-log arguments of commands that read them: the files, ``--skip-invalid``,
    and the options of a log in its own shape (:mod:`service.cli.log_shape`), read by
    :func:`read_input`."""
    parser.add_argument(
        "battles",
        nargs="+",
        metavar="BATTLES",
        help="battle log file(s): .jsonl, .json, .csv or .parquet, each optionally .gz",
    )
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="skip malformed rows (reporting how many and why) instead of rejecting the file",
    )
    add_shape_options(parser)


def add_topic_options(parser: argparse.ArgumentParser) -> None:
    """The topic-model options of commands that fit one: ``--embedding``, ``--n-topics``."""
    parser.add_argument(
        "--embedding",
        choices=BACKENDS,
        help="embedding backend (default: minilm-onnx; tfidf where PyTorch is missing)",
    )
    parser.add_argument(
        "--n-topics",
        type=int,
        default=10,
        metavar="K",
        help="number of topics (k-means), or the most kept (hdbscan); default 10",
    )


def check_topic_options(args: argparse.Namespace) -> None:
    """Reject a bad ``--n-topics`` before any work starts."""
    check_at_least("--n-topics", args.n_topics, 1)


# -- options checked before any file is read -------------------------------------------


def check_at_least(option: str, value: int | None, least: int) -> None:
    """Reject ``option``'s ``value`` below ``least`` (None: not given, nothing to check)."""
    if value is not None and value < least:
        raise UsageError(f"{option} must be at least {least}, not {value}")


def check_share(option: str, value: float) -> None:
    """Reject ``option``'s ``value`` outside the open interval (0, 1)."""
    if not (math.isfinite(value) and 0.0 < value < 1.0):
        raise UsageError(f"{option} must be between 0 and 1 (exclusive), not {value}")


def add_out_dir_option(parser: argparse.ArgumentParser) -> None:
    """The required ``--out DIR`` of the commands that write a directory."""
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")


def add_method_option(parser: argparse.ArgumentParser) -> None:
    """The ``--method`` option of the commands that fit Bradley-Terry or Elo ratings."""
    parser.add_argument("--method", choices=("bt", "elo"), default="bt", help="default: bt")


def add_seed_option(
    parser: argparse.ArgumentParser, default: int = 0, help: str = "seed (default 0)"
) -> None:
    """The ``--seed`` option, checked by :func:`check_seed`."""
    parser.add_argument("--seed", type=int, default=default, help=help)


def check_seed(args: argparse.Namespace) -> None:
    """Reject a negative ``--seed`` (NumPy seeds are non-negative integers)."""
    check_at_least("--seed", args.seed, 0)


def check_existing(option: str, path: str | None) -> None:
    """Reject a file named by ``option`` that does not exist (None: not given)."""
    if path is not None and not os.path.exists(path):
        raise UsageError(f"{option} {path!r}: no such file or directory")


def add_output_options(parser: argparse.ArgumentParser, *, exports: bool = False) -> None:
    """The ``--format`` option every command has; ``exports`` adds ``csv`` and ``parquet``."""
    if exports:
        parser.add_argument(
            "--format",
            choices=("table", "json", *TABLE_FORMATS),
            default="table",
            help="a readable table (default), exactly one JSON document, or the leaderboard "
            "as CSV or Parquet (one row a model; parquet needs stdout redirected to a file)",
        )
        return
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="a readable table (default) or exactly one JSON document on stdout",
    )


def read_log(
    paths: Sequence[str],
    *,
    skip_invalid: bool,
    columns: ColumnMap | None = None,
    prompts: PromptTexts | None = None,
) -> IngestResult:
    """Read battle logs for a command, reporting what was left out on stderr.

    ``columns`` and ``prompts`` read a log in its own shape (see
    :func:`ranking.io.ingest.read_battles`).

    Raises
    ------
    UsageError
        When no battle is left, saying why (no records, or what was left out).
    """
    with progress.stages() as stages:
        result = read_battles(
            list(paths),
            skip_invalid=skip_invalid,
            progress=stages,
            columns=columns,
            prompts=prompts,
        )
    if result.battles.empty:  # one line says it all: what was read, and why none is left
        raise UsageError(nothing_left(paths, result))
    report_left_out(result)
    return result


def load_battles(paths: Sequence[str], *, skip_invalid: bool) -> pd.DataFrame:
    """The battles of :func:`read_log`."""
    return read_log(paths, skip_invalid=skip_invalid).battles


def read_input(args: argparse.Namespace) -> IngestResult:
    """:func:`read_log` of the options of :func:`add_input_options`: ``BATTLES``,
    ``--skip-invalid`` and the shape of the log (``--columns``, ``--winner-values``,
    ``--battle-id``, ``--preset``, ``--prompts``).

    Raises
    ------
    UsageError
        For shape options that do not fit the log, naming the option and the value; and
        as :func:`read_log`.
    """
    shape: LogShape = log_shape(args)
    try:
        return read_log(
            args.battles,
            skip_invalid=args.skip_invalid,
            columns=shape.columns,
            prompts=shape.prompts,
        )
    except BattleLogError as error:
        raise UsageError(shape_error(error, shape)) from None


def load_input(args: argparse.Namespace) -> pd.DataFrame:
    """The battles of :func:`read_input`."""
    return read_input(args).battles


class LeftOut(Protocol):
    """What reading battle logs left out (``IngestResult``, or the Dask path's report)."""

    @property
    def n_read(self) -> int: ...

    @property
    def n_skipped(self) -> int: ...

    @property
    def n_duplicates(self) -> int: ...

    @property
    def n_self_battles(self) -> int: ...

    @property
    def skipped_reasons(self) -> dict[str, int]: ...


def report_left_out(report: LeftOut) -> None:
    """Say on stderr which rows reading skipped or ignored, and why (even with --quiet)."""
    if report.n_skipped:
        print(f"plb: skipped {report.n_skipped} invalid rows: {_reasons(report)}", file=sys.stderr)
    if report.n_self_battles:
        print(
            f"plb: ignored {report.n_self_battles} votes of a model against itself",
            file=sys.stderr,
        )
    if report.n_duplicates:
        print(f"plb: skipped {report.n_duplicates} duplicate battle ids", file=sys.stderr)


def _reasons(report: LeftOut, most: int | None = None) -> str:
    """``"3 x field 'winner': ...; 1 x ..."``, the commonest reasons first."""
    reasons = sorted(report.skipped_reasons.items(), key=lambda item: -item[1])
    shown = "; ".join(f"{n} x {why}" for why, n in reasons[:most])
    if most is not None and len(reasons) > most:
        shown += f"; and {len(reasons) - most} other reasons"
    return shown


def _left_out(report: LeftOut) -> list[str]:
    """What reading dropped, one phrase a kind, e.g. ``"10 votes of a model against itself
    dropped"``."""
    parts = []
    if report.n_skipped:
        parts.append(f"{report.n_skipped:,} invalid rows skipped")
    if report.n_duplicates:
        parts.append(f"{report.n_duplicates:,} duplicate battle ids skipped")
    if report.n_self_battles:
        parts.append(f"{report.n_self_battles:,} votes of a model against itself dropped")
    return parts


def nothing_left(paths: Sequence[str], report: LeftOut) -> str:
    """Why reading ``paths`` left no battle, on one line."""
    files = ", ".join(paths)
    if report.n_read == 0:
        return f"no battles in {files}: {'it holds' if len(paths) == 1 else 'they hold'} no records"
    if report.n_skipped == report.n_read:
        return (
            f"no valid battles in {files}: all {report.n_read:,} rows were skipped "
            f"({_reasons(report, 3)})"
        )
    detail = f" ({_reasons(report, 3)})" if report.n_skipped else ""
    return (
        f"no battles left in {files}: of {report.n_read:,} rows read, "
        + "; ".join(_left_out(report))
        + detail
    )


def battles_phrase(n_battles: int, report: LeftOut | None, where: Sequence[str] = ()) -> str:
    """How many battles a result stands on, and what of the log it left out.

    ``"135,624 battles (of 135,634 read; 10 votes of a model against itself dropped)"``;
    with ``where``, ``"100 battles where lang=de (of 600 read)"``.
    """
    text = f"{n_battles:,} battles"
    if where:
        text += " where " + " and ".join(where)
    if report is not None and report.n_read != n_battles:
        text += f" (of {report.n_read:,} read" + "".join(f"; {p}" for p in _left_out(report))
        text += ")"
    return text


def check_output(output_format: str) -> None:
    """Reject ``--format parquet`` with stdout a terminal (binary output would garble it),
    before any work is done.

    Raises
    ------
    UsageError
        Naming the option and how to fix it.
    """
    if output_format == "parquet" and sys.stdout.isatty():
        raise UsageError(
            "--format parquet writes a binary file: redirect stdout, e.g. > board.parquet"
        )


def emit(document: dict[str, Any], table: str, output_format: str) -> None:
    """Print the table, or the JSON document, on stdout.

    With ``csv`` or ``parquet`` (commands with ``add_output_options(exports=True)``),
    ``document`` is a leaderboard written as that file (:mod:`ranking.io.exports`).

    Raises
    ------
    UsageError
        On ``parquet`` with stdout a terminal (binary output would garble it).
    """
    if output_format in TABLE_FORMATS:
        check_output(output_format)
        data = leaderboard_bytes(document, cast(TableFormat, output_format))
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    elif output_format == "json":
        json.dump(document, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(table.rstrip("\n") + "\n")
