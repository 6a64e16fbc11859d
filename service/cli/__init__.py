"""The ``plb`` command line: one sub-command a module, errors mapped to exit codes.

Exit codes: 0 on success, 2 on bad usage or bad input (one line on stderr), 1 on an
internal error.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from ranking.io.ingest import BattleLogError
from service.cli import (
    evaluate,
    fit,
    leaderboard,
    next_battle,
    progress,
    recommend,
    report,
    serve,
    simulate,
    topics,
    users,
)
from service.cli.common import UsageError

__all__ = ["build_parser", "main"]

log = logging.getLogger("plb")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``plb`` parser with every sub-command registered."""
    parser = _Parser(
        prog="plb",
        description="personal-leaderboard: which LLM is best for you, from pairwise votes.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars and no progress notes on stderr (bars are drawn only when "
        "stderr is a terminal anyway); warnings, what reading skipped, and errors are still "
        "printed",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module in (leaderboard, users, topics, fit, recommend, evaluate, simulate, report, serve):
        module.add_parser(subparsers)
    next_battle.add_parser(subparsers)
    serve.add_refit_parser(subparsers)
    serve.add_models_parser(subparsers)
    return parser


#: The packages whose details ``plb -v`` logs; other libraries log their notices only.
OWN_LOGGERS = ("ranking", "features", "service", "data")


def configure_logging(*, verbose: bool) -> None:
    """Warnings to stderr; with ``verbose``, this project's details too, and other
    libraries' notices (their debug output, numba's compiler dumps among it, stays off)."""
    logging.basicConfig(format="plb: %(message)s", stream=sys.stderr)
    # set here, not by basicConfig, which does nothing where a handler was there before
    logging.getLogger().setLevel(logging.INFO if verbose else logging.WARNING)
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.NOTSET)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``plb``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(verbose=args.verbose)
    progress.configure(quiet=args.quiet)
    try:
        args.run(args)
    except (UsageError, BattleLogError, ValueError) as error:
        reason = str(error).strip().replace("\n", " ") or type(error).__name__
        print(f"plb {args.command}: error: {reason}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as error:  # an internal error is a bug: say so, on one line
        log.debug("internal error", exc_info=True)
        print(f"plb {args.command}: internal error: {error!r} (rerun with -v)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
