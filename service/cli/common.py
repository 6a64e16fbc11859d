"""What every ``plb`` command shares: reading battle logs, output format, errors."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, Protocol

import pandas as pd

from ranking.ingest import read_battles

__all__ = [
    "EMBEDDINGS",
    "UsageError",
    "add_input_options",
    "add_output_options",
    "add_topic_options",
    "check_topic_options",
    "emit",
    "load_battles",
    "report_left_out",
]


class UsageError(Exception):
    """Bad usage or bad input: ``plb`` prints the message on one line and exits with 2."""


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """The battle-log arguments of commands that read them: the files, ``--skip-invalid``."""
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


#: The topic model's embedding backends (``features.embeddings.BACKENDS``, which is heavy
#: to import just for ``--help``).
EMBEDDINGS = ("minilm", "minilm-int8", "static", "tfidf")


def add_topic_options(parser: argparse.ArgumentParser) -> None:
    """The topic-model options of commands that fit one: ``--embedding``, ``--n-topics``."""
    parser.add_argument(
        "--embedding",
        choices=EMBEDDINGS,
        help="embedding backend (default: minilm-int8; tfidf where PyTorch is missing)",
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
    if args.n_topics < 1:
        raise UsageError(f"--n-topics must be at least 1, not {args.n_topics}")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """The ``--format`` option every command has."""
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="a readable table (default) or exactly one JSON document on stdout",
    )


def load_battles(paths: Sequence[str], *, skip_invalid: bool) -> pd.DataFrame:
    """Read battle logs for a command, reporting skipped rows and duplicates on stderr."""
    result = read_battles(list(paths), skip_invalid=skip_invalid, progress=sys.stderr.isatty())
    report_left_out(result)
    return result.battles


class LeftOut(Protocol):
    """What reading battle logs left out (``IngestResult``, or the Dask path's report)."""

    @property
    def n_skipped(self) -> int: ...

    @property
    def n_duplicates(self) -> int: ...

    @property
    def n_self_battles(self) -> int: ...

    @property
    def skipped_reasons(self) -> dict[str, int]: ...


def report_left_out(report: LeftOut) -> None:
    """Say on stderr which rows reading skipped or ignored, and why."""
    if report.n_skipped:
        reasons = "; ".join(f"{n} x {why}" for why, n in report.skipped_reasons.items())
        print(f"plb: skipped {report.n_skipped} invalid rows: {reasons}", file=sys.stderr)
    if report.n_self_battles:
        print(
            f"plb: ignored {report.n_self_battles} votes of a model against itself",
            file=sys.stderr,
        )
    if report.n_duplicates:
        print(f"plb: skipped {report.n_duplicates} duplicate battle ids", file=sys.stderr)


def emit(document: dict[str, Any], table: str, output_format: str) -> None:
    """Print the table, or the JSON document, on stdout."""
    if output_format == "json":
        json.dump(document, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(table.rstrip("\n") + "\n")
