"""The ``plb`` command line: one sub-command a module, errors mapped to exit codes.

Exit codes: 0 on success, 2 on bad usage or bad input (one line on stderr), 1 on an
internal error.

Only the command a run names is imported (:mod:`service.cli.commands` lists the others by
name), so ``plb --help`` answers at once and ``plb leaderboard`` loads no topic model.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Collection, Sequence
from typing import NoReturn

from service.cli import progress
from service.cli.commands import COMMANDS
from service.cli.errors import UsageError

__all__ = ["build_parser", "main", "named_command"]

log = logging.getLogger("plb")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def named_command(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word that is not an option (``plb``'s own
    options take no value); None when there is none (``plb --help``)."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``plb`` parser.

    Parameters
    ----------
    commands : collection of str, optional
        The sub-commands to register in full (those a run names): only their modules are
        imported; the others are listed by name and help line alone, enough for ``plb
        --help`` and for argparse to refuse a misspelt command. None registers every
        command in full, importing them all.
    """
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
    for name, entry in COMMANDS.items():
        if commands is None or name in commands:
            module = importlib.import_module(f"{__name__}.{entry.module}")
            getattr(module, entry.register)(subparsers)
        else:
            subparsers.add_parser(name, help=entry.help)
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
    words = sys.argv[1:] if argv is None else list(argv)
    command = named_command(words)
    args = build_parser([] if command is None else [command]).parse_args(words)
    configure_logging(verbose=args.verbose)
    progress.configure(quiet=args.quiet)
    try:
        args.run(args)
    except (UsageError, ValueError) as error:  # ValueError: a bad battle log among them
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
