"""Time windows and periods of a vote log, by its ``tstamp`` (unix seconds, UTC).

A window keeps the votes with ``since <= tstamp < until`` (either end may be open), so
that consecutive windows never share a vote. A period grid cuts the votes into calendar
days, ISO weeks (Monday to Monday) or months, in UTC, or into ``n`` periods of equal
length. Votes without a timestamp (NaN) are in no window and no period.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_UNIT",
    "UNITS",
    "PeriodGrid",
    "check_window",
    "coarsen_grid",
    "format_instant",
    "parse_instant",
    "parse_unit",
    "period_grid",
    "snap_window",
    "window_mask",
]

#: Calendar units of a period grid, coarsest first.
UNITS = ("month", "week", "day")
#: The unit a period grid gets when none is asked for: the coarsest calendar unit that
#: gives at least :data:`AUTO_PERIODS` periods with votes, else that many equal periods.
DEFAULT_UNIT = "auto"
#: The fewest periods ``"auto"`` aims for.
AUTO_PERIODS = 4
#: The most periods an equal split may ask for.
MAX_PERIODS = 100

_NUMBER = re.compile(r"[+-]?\d+(\.\d*)?")
#: Unix seconds in the 64-bit range of nanoseconds pandas and numpy date types hold.
_LIMIT = 9.2e9
_DAY = 86_400.0


def _shown(text: str) -> str:
    """``text`` abbreviated for an error message: a long number by its digit count."""
    if len(text) <= 40:
        return repr(text)
    if _NUMBER.fullmatch(text):
        return f"'{text[:12]}...{text[-4:]} ({len(text.lstrip('+-'))} digits)'"
    return repr(text[:37] + "...")


def parse_instant(text: str) -> float:
    """The unix seconds (UTC) of a date, a date and time, or a number of unix seconds.

    Parameters
    ----------
    text : str
        ``2024-05-01`` (midnight UTC), ``2024-05-01T12:30`` (UTC unless it carries an
        offset: ``...Z``, ``...+02:00``), or unix seconds (``1714521600``, ``1714521600.5``).

    Returns
    -------
    float
        Unix seconds.

    Raises
    ------
    ValueError
        Naming the value (a long number abbreviated by its digit count) when it is none of
        these, or lies outside the years 1678-2261 that timestamps can hold.
    """
    value = text.strip()
    if _NUMBER.fullmatch(value):
        seconds = float(value) if len(value.lstrip("+-")) <= 40 else math.inf
    else:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                f"{_shown(text)} is not a date (2024-05-01), a date and time "
                "(2024-05-01T12:00:00Z) or unix seconds (1714521600)"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = moment.timestamp()
    if not -_LIMIT < seconds < _LIMIT:
        raise ValueError(f"{_shown(text)} is outside the years 1678-2261 that timestamps hold")
    return seconds


def format_instant(seconds: float) -> str:
    """``seconds`` as an ISO date and time in UTC (``2024-05-01T00:00:00Z``)."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def check_window(since: float | None, until: float | None) -> None:
    """Raise ``ValueError`` unless ``since`` comes before ``until`` (when both are given)."""
    if since is not None and until is not None and not since < until:
        raise ValueError(
            f"since ({format_instant(since)}) must come before until ({format_instant(until)})"
        )


def window_mask(
    stamps: npt.ArrayLike, since: float | None = None, until: float | None = None
) -> npt.NDArray[np.bool_]:
    """Which votes lie in ``[since, until)``; a vote without a timestamp (NaN) never does.

    Parameters
    ----------
    stamps : array_like
        ``(n,)`` unix seconds, NaN where unknown.
    since, until : float, optional
        The window's ends; None leaves that end open.
    """
    t = np.asarray(stamps, dtype=np.float64)
    mask = ~np.isnan(t)
    if since is not None:
        mask &= t >= since
    if until is not None:
        mask &= t < until
    return mask


def parse_unit(text: str) -> str | int:
    """A period unit as given on a command line or a query: ``auto``, a calendar unit,
    or a number of equal periods.

    Raises
    ------
    ValueError
        Naming the value when it is none of these, or a number outside 1-100.
    """
    value = text.strip().lower()
    if value == DEFAULT_UNIT or value in UNITS:
        return value
    if value.isdigit() and len(value) <= 4 and 1 <= int(value) <= MAX_PERIODS:
        return int(value)
    raise ValueError(
        f"{_shown(text)} is not 'auto', 'month', 'week', 'day' or a number of equal periods "
        f"(1-{MAX_PERIODS})"
    )


@dataclass(frozen=True)
class PeriodGrid:
    """Votes cut into periods.

    Attributes
    ----------
    unit : str
        ``"month"``, ``"week"``, ``"day"`` or ``"equal"``.
    codes : ndarray
        ``(n,)`` each vote's period, ``-1`` for a vote without a timestamp.
    starts, ends : ndarray
        ``(p,)`` each period's first instant and the instant after its last, in unix
        seconds; only periods holding a vote are listed, in time order.
    labels : tuple of str
        ``2024-05``, ``2024-W19``, ``2024-05-06``, or the start instant of an equal period.
    """

    unit: str
    codes: npt.NDArray[np.intp]
    starts: npt.NDArray[np.float64]
    ends: npt.NDArray[np.float64]
    labels: tuple[str, ...]

    @property
    def n_periods(self) -> int:
        """Number of periods."""
        return len(self.labels)


def _calendar_keys(t: npt.NDArray[np.float64], unit: str) -> npt.NDArray[np.int64]:
    """Each instant's day, ISO week or month, counted from the epoch."""
    days = np.floor(t / _DAY).astype(np.int64)
    if unit == "day":
        return days
    if unit == "week":
        return (days + 3) // 7  # 1970-01-01 was a Thursday: weeks start on Mondays
    moments = t.astype("datetime64[s]").astype("datetime64[M]")
    return moments.astype(np.int64)


def _calendar_bounds(key: int, unit: str) -> tuple[float, float, str]:
    """Start, end and label of a calendar period's ``key``."""
    epoch = date(1970, 1, 1)
    if unit == "day":
        first = epoch + timedelta(days=key)
        after = first + timedelta(days=1)
        label = first.isoformat()
    elif unit == "week":
        first = epoch + timedelta(days=7 * key - 3)
        after = first + timedelta(days=7)
        year, week, _ = first.isocalendar()
        label = f"{year}-W{week:02d}"
    else:
        year, month = 1970 + key // 12, key % 12 + 1
        first = date(year, month, 1)
        after = date(year + month // 12, month % 12 + 1, 1)
        label = f"{year}-{month:02d}"

    def seconds(day: date) -> float:
        return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()

    return seconds(first), seconds(after), label


def period_grid(stamps: npt.ArrayLike, unit: str | int = DEFAULT_UNIT) -> PeriodGrid:
    """Cut votes into periods by their timestamps.

    Parameters
    ----------
    stamps : array_like
        ``(n,)`` unix seconds, NaN where unknown.
    unit : {"auto", "month", "week", "day"} or int
        A calendar unit in UTC, ``n`` periods of equal length from the first vote to the
        last, or ``"auto"``: the coarsest calendar unit giving at least
        :data:`AUTO_PERIODS` periods with votes, else that many equal periods.

    Returns
    -------
    PeriodGrid
        Only the periods that hold a vote.

    Raises
    ------
    ValueError
        On an unknown unit, or when no vote has a timestamp.
    """
    t = np.asarray(stamps, dtype=np.float64)
    dated = ~np.isnan(t)
    if not dated.any():
        raise ValueError("Argument 'stamps' holds no timestamp: the votes cannot be dated.")
    if isinstance(unit, str) and unit not in UNITS and unit != DEFAULT_UNIT:
        raise ValueError(
            f"Argument 'unit' must be 'auto', {', '.join(UNITS)} or an int, not {unit!r}."
        )
    if unit == DEFAULT_UNIT:
        for calendar in UNITS:
            if np.unique(_calendar_keys(t[dated], calendar)).size >= AUTO_PERIODS:
                return period_grid(t, calendar)
        return period_grid(t, AUTO_PERIODS)
    codes = np.full(t.shape, -1, dtype=np.intp)
    if isinstance(unit, str):
        keys, inverse = np.unique(_calendar_keys(t[dated], unit), return_inverse=True)
        codes[dated] = inverse
        bounds = [_calendar_bounds(int(k), unit) for k in keys]
        starts = np.array([b[0] for b in bounds])
        ends = np.array([b[1] for b in bounds])
        return PeriodGrid(unit, codes, starts, ends, tuple(b[2] for b in bounds))
    if isinstance(unit, bool) or not 1 <= int(unit) <= MAX_PERIODS:
        raise ValueError(
            f"Argument 'unit' must be between 1 and {MAX_PERIODS} periods, not {unit!r}."
        )
    low, high = float(t[dated].min()), float(t[dated].max())
    edges = np.linspace(low, np.nextafter(high, np.inf), int(unit) + 1)
    cell = np.clip(np.searchsorted(edges, t[dated], side="right") - 1, 0, int(unit) - 1)
    used, inverse = np.unique(cell, return_inverse=True)
    codes[dated] = inverse
    starts, ends = edges[used], edges[used + 1]
    return PeriodGrid("equal", codes, starts, ends, tuple(format_instant(s) for s in starts))


def coarsen_grid(
    grid: PeriodGrid, users: npt.ArrayLike, *, min_votes: int, min_users: int
) -> PeriodGrid | None:
    """``grid`` with consecutive periods merged until each holds ``min_votes`` votes from
    ``min_users`` distinct users; None when all its votes together hold fewer.

    Periods are merged forward, in time order; what is left at the end joins the last
    period that had enough. A window made of whole periods of the result then differs
    from any other such window by whole periods: never by fewer than ``min_users``
    people's votes.

    Parameters
    ----------
    grid : PeriodGrid
    users : array_like
        ``(n,)`` each vote's user code (``-1`` for a vote without a user, who counts for
        no one).
    min_votes, min_users : int
        The fewest votes and distinct users a period must hold.
    """
    user = np.asarray(users)
    dated = grid.codes >= 0
    per_period = np.bincount(grid.codes[dated], minlength=grid.n_periods)
    known = dated & (user >= 0)
    width = int(user[known].max()) + 1 if known.any() else 1
    pairs = np.sort(grid.codes[known].astype(np.int64) * width + user[known])
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if pairs.size else pairs
    cuts = np.searchsorted(pairs // width, np.arange(grid.n_periods + 1))
    members = [set((pairs[a:b] % width).tolist()) for a, b in zip(cuts, cuts[1:], strict=False)]
    merged = np.empty(grid.n_periods, dtype=np.intp)
    closed: list[int] = []  # the last original period of each merged one
    votes, cell = 0, 0
    people: set[int] = set()
    for p in range(grid.n_periods):
        merged[p] = cell
        votes += int(per_period[p])
        people |= members[p]
        if votes >= min_votes and len(people) >= min_users:
            closed.append(p)
            votes, people, cell = 0, set(), cell + 1
    if not closed:
        return None
    merged[closed[-1] + 1 :] = len(closed) - 1
    firsts = [0] + [c + 1 for c in closed[:-1]]
    lasts = closed[:-1] + [grid.n_periods - 1]
    labels = tuple(
        grid.labels[f] if f == last else f"{grid.labels[f]}/{grid.labels[last]}"
        for f, last in zip(firsts, lasts, strict=True)
    )
    codes = np.where(dated, merged[np.maximum(grid.codes, 0)], -1).astype(np.intp)
    return PeriodGrid(grid.unit, codes, grid.starts[firsts], grid.ends[lasts], labels)


def snap_window(
    grid: PeriodGrid, since: float | None, until: float | None
) -> tuple[float, float] | None:
    """The window of whole periods of ``grid`` that overlap ``[since, until)``, as its
    first instant and the instant after its last; None when no period does."""
    low = -np.inf if since is None else since
    high = np.inf if until is None else until
    overlap = np.flatnonzero((grid.ends > low) & (grid.starts < high))
    if overlap.size == 0:
        return None
    return float(grid.starts[overlap[0]]), float(grid.ends[overlap[-1]])
