"""``plb report``: a self-contained HTML research report of a fit directory."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from service.cli.commands import COMMANDS
from service.cli.common import add_output_options, emit
from service.cli.errors import UsageError
from service.pipeline.artifacts import load_fit

__all__ = ["add_parser", "run", "write_atomically"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``plb report``."""
    parser = subparsers.add_parser(
        "report",
        help=COMMANDS["report"].help,
        description="Render the fit directory written by 'plb fit' as one HTML file with "
        "inline plots: the agreement of per-user rankings with the aggregate (plain and "
        "shrunk), a few users' rankings against the aggregate, agreement against votes per "
        "user, the held-out evaluation and the aggregate leaderboard. The file needs no "
        "network and no other file to display.",
    )
    parser.add_argument("fit_dir", metavar="DIR", help="fit directory written by 'plb fit'")
    parser.add_argument("--out", required=True, metavar="FILE.html", help="report file to write")
    parser.add_argument("--title", default="Personal leaderboards: report", help="page title")
    add_output_options(parser)
    parser.set_defaults(run=run)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary sibling renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, 0o644)  # mkstemp makes it private; a report is meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> None:
    """Execute ``plb report``."""
    fit_dir = Path(args.fit_dir)
    if not fit_dir.is_dir():
        raise UsageError(f"DIR {args.fit_dir!r} is not a directory; run 'plb fit --out DIR' first")
    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"--out {args.out!r} is a directory; give a file name such as report.html")
    fit = load_fit(fit_dir)
    try:
        from service.report.document import build_report
    except ImportError as error:  # matplotlib is needed only here
        raise UsageError(f"plb report needs matplotlib ({error}); pip install matplotlib") from None
    report = build_report(fit, title=args.title)
    try:
        write_atomically(out, report.html)
    except OSError as error:
        raise UsageError(f"--out {args.out!r}: {error.strerror or error}") from None
    size = len(report.html.encode("utf-8"))
    document = {"out": str(out), "sections": list(report.sections), "bytes": size}
    table = (
        f"Wrote {out} ({size / 1024:.0f} KiB): {len(report.sections)} sections "
        f"({', '.join(report.sections)})"
    )
    emit(document, table, args.format)
