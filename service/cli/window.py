"""``--since`` and ``--until``: a board of the votes of a time window, by ``tstamp``.

The options are parsed before any log is read (a bad date is refused at once); a log
whose votes carry no ``tstamp`` cannot be windowed and is refused once read.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pandas as pd

from ranking.windows import check_window, format_instant, parse_instant, window_mask
from service.cli.errors import UsageError

__all__ = ["Window", "add_window_options", "check_window_options"]

_WHEN = "a date (2024-05-01, midnight UTC), a date and time (2024-05-01T12:00, UTC unless it "
_WHEN += "carries an offset such as Z or +02:00) or unix seconds"


def add_window_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--since`` and ``--until`` to a command reading battle logs."""
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help=f"keep only votes at or after WHEN, by their tstamp: {_WHEN}",
    )
    parser.add_argument(
        "--until",
        metavar="WHEN",
        help="keep only votes before WHEN (not at it: --since 2024-05-01 --until 2024-06-01 "
        "is May), by their tstamp; the same forms as --since",
    )


@dataclass(frozen=True)
class Window:
    """The window of ``--since`` and ``--until``, in unix seconds (None: open)."""

    since: float | None = None
    until: float | None = None
    since_text: str | None = None
    until_text: str | None = None

    @property
    def is_open(self) -> bool:
        """Whether neither end is set (every vote is kept)."""
        return self.since is None and self.until is None

    def phrase(self) -> list[str]:
        """The window as conditions of a table's header (``["tstamp >= 2024-05-01"]``)."""
        parts = []
        if self.since is not None:
            parts.append(f"tstamp >= {format_instant(self.since)}")
        if self.until is not None:
            parts.append(f"tstamp < {format_instant(self.until)}")
        return parts

    def to_dict(self) -> dict[str, str]:
        """The window as the JSON document's ``window``: its ends in ISO time."""
        ends = {"since": self.since, "until": self.until}
        return {k: format_instant(v) for k, v in ends.items() if v is not None}

    def apply(self, battles: pd.DataFrame, paths: list[str]) -> pd.DataFrame:
        """The battles in the window.

        Raises
        ------
        UsageError
            Naming the option when the log has no ``tstamp``, and when no vote is left.
        """
        if self.is_open:
            return battles
        option = f"--since {self.since_text}" if self.since is not None else ""
        if self.until is not None:
            option = f"{option} --until {self.until_text}".strip()
        logs = ", ".join(paths)
        if "tstamp" not in battles.columns or battles["tstamp"].isna().all():
            raise UsageError(
                f"{option}: the votes of {logs} carry no tstamp, so they cannot be windowed "
                "(name the column holding unix seconds with --columns tstamp=COLUMN)"
            )
        stamps = battles["tstamp"].to_numpy(dtype="float64", na_value=float("nan"))
        kept = battles.loc[window_mask(stamps, self.since, self.until)]
        if kept.empty:
            raise UsageError(f"{option}: no vote of {logs} falls in that window")
        return kept


def check_window_options(args: argparse.Namespace) -> Window:
    """The window of ``--since`` and ``--until``, refused before any log is read.

    Raises
    ------
    UsageError
        Naming the option and its value: one that is not a date, a date and time or unix
        seconds (a long number abbreviated), or ``--since`` not before ``--until``.
    """
    ends: dict[str, float | None] = {}
    for name in ("since", "until"):
        text = getattr(args, name, None)
        ends[name] = None
        if text is not None:
            try:
                ends[name] = parse_instant(text)
            except ValueError as error:
                raise UsageError(f"--{name}: {error}") from None
    try:
        check_window(ends["since"], ends["until"])
    except ValueError as error:
        raise UsageError(f"--since {args.since} --until {args.until}: {error}") from None
    return Window(ends["since"], ends["until"], args.since, args.until)
