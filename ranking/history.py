"""Boards over time: one Bradley-Terry board a period, and which models drifted.

Each period's board is :func:`ranking.leaderboard.fit_leaderboard` of that period's votes
(sandwich intervals). Between two consecutive periods, a model ranked in both is tested
for a change of rating larger than its two intervals allow: ``z = change / sd``, the two
estimates independent (disjoint votes), ``sd^2`` the sum of their variances (each read
off its normal interval) and of the offset's below. Each period's scale has its own zero
(its ratings average 1000 over the models it ranks), so ``change`` is the model's
difference less the offset, the median difference of the models ranked in both: one
drifting model does not move the others (and once flagged, the median is taken again
without it, and every test redone). The two-sided p-values of every model and every pair
of periods are corrected together by Holm's step-down method, so that a stable arena
raises a false alarm anywhere with probability at most ``level``, whatever the number of
models and periods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr

from ranking.bt import DEFAULT_ALPHA
from ranking.leaderboard import fit_leaderboard, read_leaderboard
from ranking.odds import interval_sd
from ranking.types import Leaderboard, PairwiseData
from ranking.windows import DEFAULT_UNIT, PeriodGrid, format_instant, period_grid

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_MIN_VOTES",
    "DriftTest",
    "Period",
    "RatingHistory",
    "fit_history",
    "holm_adjust",
    "read_history",
]

#: The family-wise rate of false drift alarms a history allows by default.
DEFAULT_LEVEL = 0.05
#: The fewest votes a model needs in a period to be ranked (and tested) there.
DEFAULT_MIN_VOTES = 20


@dataclass(frozen=True)
class Period:
    """One period of a rating history.

    Attributes
    ----------
    label : str
        ``2024-05``, ``2024-W19``, ``2024-05-06`` or the start of an equal period.
    start, end : float
        Its first instant and the instant after its last, in unix seconds.
    board : Leaderboard
        The Bradley-Terry board of its votes.
    """

    label: str
    start: float
    end: float
    board: Leaderboard

    def to_dict(self) -> dict[str, Any]:
        """The period as JSON: its label, ends (seconds and ISO) and board."""
        return {
            "label": self.label,
            "start": self.start,
            "end": self.end,
            "start_time": format_instant(self.start),
            "end_time": format_instant(self.end),
            "board": self.board.to_dict(),
        }


@dataclass(frozen=True)
class DriftTest:
    """A model's change of rating between two consecutive periods, and its test.

    Attributes
    ----------
    model : str
    before, after : str
        The two periods' labels.
    change : float
        The rating's change, on the Elo scale, less the median change of the models
        ranked in both periods.
    sd : float
        The change's standard deviation from the two intervals.
    z, p_value, p_adjusted : float
        The z statistic, its two-sided p-value and that p-value corrected by Holm's method
        over every test of the history.
    flagged : bool
        Whether ``p_adjusted`` is at most the history's ``level``.
    """

    model: str
    before: str
    after: str
    change: float
    sd: float
    z: float
    p_value: float
    p_adjusted: float
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        """The test as JSON, rounded as boards are."""
        return {
            "model": self.model,
            "before": self.before,
            "after": self.after,
            "change": round(self.change, 2),
            "sd": round(self.sd, 2),
            "z": round(self.z, 3),
            "p_value": float(f"{self.p_value:.4g}"),
            "p_adjusted": float(f"{self.p_adjusted:.4g}"),
            "flagged": self.flagged,
        }


@dataclass(frozen=True)
class RatingHistory:
    """Boards per period and the drift tests between consecutive ones.

    Attributes
    ----------
    unit : str
        ``"month"``, ``"week"``, ``"day"`` or ``"equal"``.
    periods : tuple of Period
        In time order, only those holding a vote.
    tests : tuple of DriftTest
        By period, then model.
    level : float
        The family-wise false-alarm rate of the flags.
    n_battles : int
        Votes with a timestamp, in some period.
    n_undated : int
        Votes without one, in none.
    """

    unit: str
    periods: tuple[Period, ...]
    tests: tuple[DriftTest, ...]
    level: float
    n_battles: int
    n_undated: int = 0

    @property
    def drifting(self) -> tuple[str, ...]:
        """The models with a flagged change, by name."""
        return tuple(sorted({t.model for t in self.tests if t.flagged}))

    def to_dict(self) -> dict[str, Any]:
        """The history as the JSON document of the fit directory's ``history.json``."""
        return {
            "unit": self.unit,
            "level": self.level,
            "n_battles": self.n_battles,
            "n_undated": self.n_undated,
            "periods": [p.to_dict() for p in self.periods],
            "drift": [t.to_dict() for t in self.tests],
            "drifting": list(self.drifting),
        }


def read_history(document: Mapping[str, Any]) -> RatingHistory:
    """The :class:`RatingHistory` of a :meth:`RatingHistory.to_dict` document; each
    period's board with its ranked rows (:func:`ranking.leaderboard.read_leaderboard`)."""
    periods = tuple(
        Period(p["label"], float(p["start"]), float(p["end"]), read_leaderboard(p["board"]))
        for p in document["periods"]
    )
    tests = tuple(DriftTest(**t) for t in document["drift"])
    return RatingHistory(
        document["unit"],
        periods,
        tests,
        float(document["level"]),
        int(document["n_battles"]),
        int(document.get("n_undated", 0)),
    )


def holm_adjust(p_values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Holm's step-down adjusted p-values: reject where at most the family-wise level.

    Parameters
    ----------
    p_values : array_like
        ``(m,)`` p-values of the family.

    Returns
    -------
    ndarray
        ``(m,)`` in the same order: the running maximum of ``(m - i) p_(i)`` over the
        sorted p-values, capped at 1.
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def _present(data: PairwiseData) -> PairwiseData:
    """``data`` indexed by the models it has votes of only."""
    used = np.zeros(data.n_models, dtype=bool)
    used[data.matchups.ravel()] = True
    index = np.cumsum(used) - 1
    models = tuple(m for m, u in zip(data.models, used, strict=True) if u)
    return PairwiseData(models, index[data.matchups], data.outcomes, data.weights)


def _rows(board: Leaderboard) -> dict[str, tuple[float, float]]:
    """Each ranked model's rating and sd."""
    if not board.models:
        return {}
    sd = interval_sd(
        [m.lower for m in board.models], [m.upper for m in board.models], board.confidence
    )
    return {m.model: (m.rating, float(s)) for m, s in zip(board.models, sd, strict=True)}


def _raw_tests(
    before: Period, after: Period, apart: frozenset[str]
) -> list[tuple[str, float, float]]:
    """``(model, change, sd)`` of each model ranked in both periods (at least two), the
    offset between the two scales the median difference of the models not ``apart``."""
    first, second = _rows(before.board), _rows(after.board)
    common = [m for m in second if m in first]
    if len(common) < 2:
        return []
    raw = np.array([second[m][0] - first[m][0] for m in common])
    variance = np.array([first[m][1] ** 2 + second[m][1] ** 2 for m in common])
    steady = np.array([m not in apart for m in common])
    if steady.sum() < 2:
        steady[:] = True
    offset = float(np.median(raw[steady]))
    # the median's own variance, about pi/2 times a mean's
    offset_variance = np.pi / 2 * float(variance[steady].mean()) / int(steady.sum())
    sd = np.sqrt(variance + offset_variance)
    return [(m, float(r - offset), float(s)) for m, r, s in zip(common, raw, sd, strict=True)]


def _drift_tests(
    periods: list[Period], level: float, apart: frozenset[tuple[str, str, str]]
) -> tuple[DriftTest, ...]:
    """Every model's test between consecutive periods, Holm-corrected together; the
    models ``apart`` (model, before, after) left out of their pair's offset."""
    raw = []
    for before, after in zip(periods, periods[1:], strict=False):
        out = frozenset(m for m, b, a in apart if (b, a) == (before.label, after.label))
        raw += [(before.label, after.label, *t) for t in _raw_tests(before, after, out)]
    z = np.array([r[3] / r[4] if r[4] > 0 else 0.0 for r in raw])
    p_values = 2.0 * ndtr(-np.abs(z))
    adjusted = holm_adjust(p_values)
    return tuple(
        DriftTest(m, b, a, change, sd, float(zi), float(pv), float(pa), bool(pa <= level))
        for (b, a, m, change, sd), zi, pv, pa in zip(raw, z, p_values, adjusted, strict=True)
    )


def fit_history(
    data: PairwiseData,
    stamps: npt.ArrayLike,
    *,
    unit: str | int | PeriodGrid = DEFAULT_UNIT,
    confidence: float = 0.95,
    level: float = DEFAULT_LEVEL,
    min_votes: int = DEFAULT_MIN_VOTES,
    alpha: float = DEFAULT_ALPHA,
) -> RatingHistory:
    """Fit a Bradley-Terry board a period and test each model's change between periods.

    Parameters
    ----------
    data : PairwiseData
        The votes.
    stamps : array_like
        ``(n,)`` each vote's unix seconds, in the order of ``data``'s rows; NaN where
        unknown (such a vote is in no period).
    unit : {"auto", "month", "week", "day"}, int or PeriodGrid
        The periods (:func:`ranking.windows.period_grid`), or a grid of ``stamps`` already
        cut (:func:`ranking.windows.coarsen_grid`).
    confidence : float
        Coverage of each period's intervals, in (0, 1).
    level : float
        The family-wise rate of false alarms, in (0, 1).
    min_votes : int
        The fewest votes a model needs in a period to be ranked there (at least 1); the
        others are listed as provisional and not tested.
    alpha : float
        Prior precision of the Bradley-Terry fits.

    Returns
    -------
    RatingHistory

    Raises
    ------
    ValueError
        On a bad ``level`` or ``min_votes``, a ``stamps`` of another length than the
        votes, or votes without any timestamp.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"Argument 'level' must be between 0 and 1, not {level}.")
    if isinstance(min_votes, bool) or not isinstance(min_votes, int) or min_votes < 1:
        raise ValueError(
            f"Argument 'min_votes' must be an integer of at least 1, not {min_votes!r}."
        )
    t = np.asarray(stamps, dtype=np.float64)
    if t.shape != (data.outcomes.shape[0],):
        raise ValueError(
            f"Argument 'stamps' must hold one timestamp a vote ({data.outcomes.shape[0]}), "
            f"not {t.shape}."
        )
    grid = unit if isinstance(unit, PeriodGrid) else period_grid(t, unit)
    if grid.codes.shape != t.shape:
        raise ValueError("Argument 'unit' is a grid of other votes than 'stamps'.")
    periods = []
    for p in range(grid.n_periods):
        votes = _present(data.select(grid.codes == p))
        board = fit_leaderboard(
            votes,
            method="bt",
            interval="sandwich",
            confidence=confidence,
            alpha=alpha,
            min_votes=min_votes,
        )
        periods.append(Period(grid.labels[p], float(grid.starts[p]), float(grid.ends[p]), board))
    tests = _drift_tests(periods, level, frozenset())
    # A model that moved far pulls the median it is part of: the offsets again without
    # the models flagged, and the tests with them.
    flagged = frozenset((t.model, t.before, t.after) for t in tests if t.flagged)
    if flagged:
        tests = _drift_tests(periods, level, flagged)
    dated = int(np.count_nonzero(grid.codes >= 0))
    return RatingHistory(grid.unit, tuple(periods), tests, level, dated, len(t) - dated)
