"""How far per-user rankings agree with a reference ranking: Spearman and Kendall, per user.

Both coefficients are computed for all users at once over the models each user actually
voted on (a mask), with average ranks for ties (Spearman) and tau-b (Kendall). A user with
fewer than two such models, or whose ratings over them are all equal, has no defined
coefficient (NaN).

The summary's figures carry percentile intervals from a bootstrap over users (users are
the sampling unit: resampled with replacement, :data:`BOOTSTRAP_RESAMPLES` times, seed
:data:`BOOTSTRAP_SEED`). :func:`compare_with_null` sets the users' agreement beside the
agreement that sampling noise alone gives them (:mod:`ranking.noise` draws it), with the
same resamples for both, so that their difference and ratio have intervals too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

from ranking.types import BoolArray, FloatArray

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "NEAR_ZERO",
    "AgreementSummary",
    "NoiseComparison",
    "bootstrap_users",
    "compare_with_null",
    "kendall_per_row",
    "spearman_per_row",
    "summarise",
]


#: A per-user Spearman at or below this counts as "near zero or negative" (docs/SPEC.md section 3).
NEAR_ZERO = 0.1
#: Most (user, model pair) cells held at once by :func:`kendall_per_row`.
_MAX_PAIR_CELLS = 5_000_000
#: Resamples of the bootstrap over users behind the summary's intervals, and its seed.
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
#: Most (resample, user) cells held at once by :func:`bootstrap_users`.
_MAX_RESAMPLE_CELLS = 4_000_000

Interval = tuple[float, float]
_NO_INTERVAL: Interval = (float("nan"), float("nan"))


def _masked(values: npt.ArrayLike, shape: tuple[int, int], mask: BoolArray) -> FloatArray:
    arr = np.broadcast_to(np.asarray(values, dtype=np.float64), shape)
    return np.where(mask, arr, np.nan)


def spearman_per_row(x: FloatArray, y: npt.ArrayLike, mask: BoolArray | None = None) -> FloatArray:
    """Spearman correlation between each row of ``x`` and ``y``, over the masked entries.

    Parameters
    ----------
    x : ndarray
        ``(U, k)`` ratings, one row per user.
    y : array_like
        ``(k,)`` reference ratings, or ``(U, k)`` one reference per row.
    mask : ndarray of bool, optional
        ``(U, k)`` entries to compare; all by default.

    Returns
    -------
    ndarray
        ``(U,)`` coefficients; NaN where undefined.
    """
    x = np.asarray(x, dtype=np.float64)
    mask = np.ones(x.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    rx = rankdata(np.where(mask, x, np.nan), axis=1, nan_policy="omit")
    ry = rankdata(_masked(y, x.shape, mask), axis=1, nan_policy="omit")
    n = mask.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = rx - np.nansum(rx, axis=1, keepdims=True) / n[:, None]
        dy = ry - np.nansum(ry, axis=1, keepdims=True) / n[:, None]
        cov = np.nansum(dx * dy, axis=1)
        var = np.sqrt(np.nansum(dx * dx, axis=1) * np.nansum(dy * dy, axis=1))
        rho = cov / var
    rho[(n < 2) | ~(var > 0)] = np.nan
    return np.clip(rho, -1.0, 1.0)


def kendall_per_row(x: FloatArray, y: npt.ArrayLike, mask: BoolArray | None = None) -> FloatArray:
    """Kendall's tau-b between each row of ``x`` and ``y``, over the masked entries.

    Same parameters and conventions as :func:`spearman_per_row`.
    """
    x = np.asarray(x, dtype=np.float64)
    mask = np.ones(x.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    yy = np.broadcast_to(np.asarray(y, dtype=np.float64), x.shape)
    i, j = np.triu_indices(x.shape[1], k=1)
    out = np.full(x.shape[0], np.nan)
    chunk = max(1, _MAX_PAIR_CELLS // max(len(i), 1))
    for lo in range(0, x.shape[0], chunk):
        rows = slice(lo, lo + chunk)
        valid = mask[rows][:, i] & mask[rows][:, j]
        sx = np.sign(x[rows][:, i] - x[rows][:, j]) * valid
        sy = np.sign(yy[rows][:, i] - yy[rows][:, j]) * valid
        n0 = valid.sum(axis=1)
        tied_x = n0 - np.count_nonzero(sx, axis=1)
        tied_y = n0 - np.count_nonzero(sy, axis=1)
        denominator = np.sqrt((n0 - tied_x).astype(float) * (n0 - tied_y))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[rows] = np.where(denominator > 0, np.sum(sx * sy, axis=1) / denominator, np.nan)
    return out


def _round(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 4)


def _round_interval(interval: Interval) -> list[float | None] | None:
    if np.isnan(interval[0]) or np.isnan(interval[1]):
        return None
    return [_round(interval[0]), _round(interval[1])]


def bootstrap_users(
    values: npt.ArrayLike,
    statistics: Callable[[FloatArray], FloatArray],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = BOOTSTRAP_SEED,
) -> tuple[FloatArray, FloatArray]:
    """Percentile intervals of statistics over users, by resampling users with replacement.

    Parameters
    ----------
    values : array_like
        ``(U,)`` or ``(U, c)`` one row per user (several columns are resampled together,
        so that statistics comparing them are paired).
    statistics : callable
        From ``(B, U, c)`` resampled rows to ``(B, s)`` statistics, one row per resample.
    resamples : int
        Number of resamples ``B``.
    confidence : float
        Coverage of the intervals, in (0, 1).
    rng : numpy.random.Generator or int, optional
        Draws the resamples.

    Returns
    -------
    tuple of ndarray
        ``(lower, upper)``, each ``(s,)``; NaN where fewer than two users, or where the
        statistic is undefined in some resample.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"Argument 'confidence' must be in (0, 1), not {confidence!r}.")
    if resamples < 1:
        raise ValueError(f"Argument 'resamples' must be at least 1, not {resamples!r}.")
    rows = np.asarray(values, dtype=np.float64)
    rows = rows.reshape(rows.shape[0], -1)
    generator = np.random.default_rng(rng)
    n = rows.shape[0]
    width = statistics(rows[None]).shape[1]
    if n < 2:
        nan = np.full(width, np.nan)
        return nan, nan.copy()
    chunk = max(1, _MAX_RESAMPLE_CELLS // (n * rows.shape[1]))
    out = np.empty((resamples, width))
    for lo in range(0, resamples, chunk):
        hi = min(resamples, lo + chunk)
        out[lo:hi] = statistics(rows[generator.integers(0, n, size=(hi - lo, n))])
    tail = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(out, [tail, 1.0 - tail], axis=0)
    undefined = ~np.isfinite(out).all(axis=0)
    lower[undefined], upper[undefined] = np.nan, np.nan
    return lower, upper


def _spread(rho: FloatArray) -> FloatArray:
    """``(B, U, 1)`` resampled coefficients to their mean, median and share near zero."""
    x = rho[..., 0]
    return np.stack([x.mean(axis=1), np.median(x, axis=1), np.mean(x <= NEAR_ZERO, axis=1)], 1)


@dataclass(frozen=True)
class NoiseComparison:
    """Observed agreement beside what sampling noise alone gives the same users.

    The null re-draws every user's votes from the aggregate (:mod:`ranking.noise`): the
    users' rankings then differ from the aggregate by noise only. All figures are over
    the same ``users``, with intervals from one bootstrap over them (paired).

    Attributes
    ----------
    users : int
        Users compared (those of the summary, or a random sample of them).
    replicates : int
        Null re-draws of each user's votes; a user's null coefficient is their mean.
    observed_mean_spearman : float
        The users' own mean Spearman with the aggregate.
    mean_spearman, median_spearman, share_near_zero_or_negative : float
        The same figures under the null.
    excess : float
        ``mean_spearman - observed_mean_spearman``: disagreement beyond what noise
        gives, in Spearman units (0 when users differ from the aggregate by noise alone).
    noise_share : float
        ``(1 - mean_spearman) / (1 - observed_mean_spearman)``: the part of the observed
        gap from perfect agreement that noise alone produces (1 or more: all of it).
    confidence : float
    intervals : dict of str to (float, float)
        An interval for each figure above but ``users`` and ``replicates``, by name.
    """

    users: int
    replicates: int
    observed_mean_spearman: float
    mean_spearman: float
    median_spearman: float
    share_near_zero_or_negative: float
    excess: float
    noise_share: float
    confidence: float = 0.95
    intervals: dict[str, Interval] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: each figure, then ``<figure>_interval`` as ``[lower, upper]``."""
        out: dict[str, object] = {"users": self.users, "replicates": self.replicates}
        for name in _NOISE_FIGURES:
            out[name] = _round(getattr(self, name))
            out[f"{name}_interval"] = _round_interval(self.intervals.get(name, _NO_INTERVAL))
        out["confidence"] = self.confidence
        return out

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> NoiseComparison:
        """The comparison :meth:`to_dict` wrote (a None figure read back as NaN)."""

        def value(name: str) -> float:
            return _number_or_nan(document.get(name))

        intervals: dict[str, Interval] = {}
        for name in _NOISE_FIGURES:
            bounds = document.get(f"{name}_interval")
            if bounds is not None:
                intervals[name] = (_number_or_nan(bounds[0]), _number_or_nan(bounds[1]))
        figures = {name: value(name) for name in _NOISE_FIGURES}
        return cls(
            users=int(document.get("users", 0)),
            replicates=int(document.get("replicates", 0)),
            confidence=float(document.get("confidence", 0.95)),
            intervals=intervals,
            **figures,
        )

    def reading(self) -> str:
        """The comparison in plain words, one paragraph of text."""
        if self.users == 0 or np.isnan(self.noise_share):
            return "No user could be compared with the null."
        level = f"{self.confidence:.0%}"
        lo, hi = self.intervals.get("mean_spearman", _NO_INTERVAL)
        share_lo, share_hi = self.intervals.get("noise_share", _NO_INTERVAL)
        excess_lo, excess_hi = self.intervals.get("excess", _NO_INTERVAL)
        text = (
            f"Had each of these {self.users} users voted exactly as the aggregate predicts "
            f"(same pairs, {self.replicates} re-draws), sampling noise alone would give a mean "
            f"Spearman of {self.mean_spearman:.2f} ({level} interval {lo:.2f} to {hi:.2f}), "
            f"against {self.observed_mean_spearman:.2f} observed: noise alone produces "
            f"{_percent(self.noise_share)} of the gap from perfect agreement "
            f"({_percent(share_lo)} to {_percent(share_hi)}). "
        )
        if excess_lo > 0:
            return text + (
                f"The rest, {_percent(1.0 - self.noise_share)} of the gap, is disagreement "
                "beyond noise: taste of their own, or anything else that sets these voters "
                "apart from the crowd."
            )
        if excess_hi < 0:
            return text + (
                "These users agree with the aggregate more closely than noise alone would "
                "let them: the null's votes are less decisive than theirs."
            )
        return text + (
            "The users disagree with the aggregate no more than noise alone would make them: "
            "their votes show no taste of their own that noise could not explain."
        )


def _number_or_nan(number: object) -> float:
    """A JSON number, or NaN for None."""
    return float("nan") if number is None else float(number)  # type: ignore[arg-type]


def _percent(share: float) -> str:
    return "n/a" if np.isnan(share) else f"{share:.0%}"


_NOISE_FIGURES = (
    "observed_mean_spearman",
    "mean_spearman",
    "median_spearman",
    "share_near_zero_or_negative",
    "excess",
    "noise_share",
)


def _noise_figures(pairs: FloatArray) -> FloatArray:
    """``(B, U, 2)`` (observed, null) coefficients to the figures of :data:`_NOISE_FIGURES`."""
    observed, null = pairs[..., 0].mean(axis=1), pairs[..., 1]
    null_mean = null.mean(axis=1)
    gap = 1.0 - observed
    with np.errstate(invalid="ignore", divide="ignore"):
        # every user in perfect agreement leaves no gap to share out: undefined, not inf
        share = np.where(gap > 0.0, (1.0 - null_mean) / gap, np.nan)
    return np.stack(
        [observed, null_mean, np.median(null, axis=1), np.mean(null <= NEAR_ZERO, axis=1),
         null_mean - observed, share],
        axis=1,
    )  # fmt: skip


def compare_with_null(
    observed: npt.ArrayLike,
    null: npt.ArrayLike,
    replicates: int,
    *,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    rng: np.random.Generator | int | None = BOOTSTRAP_SEED,
) -> NoiseComparison:
    """Compare users' Spearman with the aggregate against their Spearman under the null.

    Parameters
    ----------
    observed, null : array_like
        ``(U,)`` each user's Spearman, and its mean over the null's re-draws
        (:func:`ranking.noise.null_spearman`); users undefined in either are left out.
    replicates : int
        Re-draws behind ``null``.
    confidence, resamples, rng
        Of the bootstrap over users (:func:`bootstrap_users`).

    Returns
    -------
    NoiseComparison
    """
    pairs = np.stack([np.asarray(observed, float), np.asarray(null, float)], axis=1)
    pairs = pairs[np.isfinite(pairs).all(axis=1)]
    if pairs.shape[0] == 0:
        nan = float("nan")
        return NoiseComparison(0, replicates, nan, nan, nan, nan, nan, nan, confidence)
    point = _noise_figures(pairs[None])[0]
    lower, upper = bootstrap_users(
        pairs, _noise_figures, resamples=resamples, confidence=confidence, rng=rng
    )
    intervals = {name: (float(lower[i]), float(upper[i])) for i, name in enumerate(_NOISE_FIGURES)}
    figures = dict(zip(_NOISE_FIGURES, (float(v) for v in point), strict=True))
    return NoiseComparison(
        users=int(pairs.shape[0]),
        replicates=replicates,
        confidence=confidence,
        intervals=intervals,
        **figures,
    )


@dataclass(frozen=True)
class AgreementSummary:
    """The ``summary`` object of the ``users`` JSON (docs/SPEC.md section 3).

    Beyond the contract's figures: ``confidence`` and an interval for the mean and median
    Spearman and the share near zero (:func:`bootstrap_users`), and ``noise``, the same
    users' agreement under the null, when it was measured.
    """

    users: int
    mean_spearman: float
    median_spearman: float
    share_near_zero_or_negative: float
    mean_kendall: float
    confidence: float = 0.95
    mean_spearman_interval: Interval = _NO_INTERVAL
    median_spearman_interval: Interval = _NO_INTERVAL
    share_near_zero_or_negative_interval: Interval = _NO_INTERVAL
    noise: NoiseComparison | None = None

    def to_dict(self) -> dict[str, object]:
        """The summary as JSON-ready numbers (an undefined figure becomes None).

        Each interval is ``[lower, upper]`` under ``<figure>_interval`` (None where
        undefined); ``bootstrap`` says how they were drawn; ``noise`` is
        :meth:`NoiseComparison.to_dict`, present only when the null was measured.
        """
        out: dict[str, object] = {"users": self.users}
        for name in ("mean_spearman", "median_spearman", "share_near_zero_or_negative"):
            out[name] = _round(getattr(self, name))
        out["mean_kendall"] = _round(self.mean_kendall)
        for name in ("mean_spearman", "median_spearman", "share_near_zero_or_negative"):
            out[f"{name}_interval"] = _round_interval(getattr(self, f"{name}_interval"))
        out["confidence"] = self.confidence
        out["bootstrap"] = {"over": "users", "resamples": BOOTSTRAP_RESAMPLES,
                            "seed": BOOTSTRAP_SEED}  # fmt: skip
        if self.noise is not None:
            out["noise"] = self.noise.to_dict()
        return out


def summarise(
    spearman: FloatArray,
    kendall: FloatArray,
    n_battles: npt.NDArray[np.integer],
    min_battles: int = 1,
    *,
    confidence: float = 0.95,
    noise: NoiseComparison | None = None,
) -> AgreementSummary:
    """Summarise per-user agreement over users with at least ``min_battles`` votes.

    Users whose coefficient is undefined (NaN) are left out of every figure. The
    intervals are :func:`bootstrap_users`'s (:data:`BOOTSTRAP_RESAMPLES` resamples, seed
    :data:`BOOTSTRAP_SEED`); ``noise`` is carried as it is.
    """
    keep = (np.asarray(n_battles) >= min_battles) & np.isfinite(spearman)
    rho, tau = spearman[keep], kendall[keep]
    if rho.size == 0:
        nan = float("nan")
        return AgreementSummary(0, nan, nan, nan, nan, confidence, noise=noise)
    point = _spread(rho[None, :, None])[0]
    lower, upper = bootstrap_users(rho, _spread, confidence=confidence)
    mean, median, share = ((float(lower[i]), float(upper[i])) for i in range(3))
    return AgreementSummary(
        users=int(rho.size),
        mean_spearman=float(point[0]),
        median_spearman=float(point[1]),
        share_near_zero_or_negative=float(point[2]),
        mean_kendall=float(np.nanmean(tau)) if np.isfinite(tau).any() else float("nan"),
        confidence=confidence,
        mean_spearman_interval=mean,
        median_spearman_interval=median,
        share_near_zero_or_negative_interval=share,
        noise=noise,
    )
