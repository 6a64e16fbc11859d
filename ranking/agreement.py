"""How far per-user rankings agree with a reference ranking: Spearman and Kendall, per user.

Both coefficients are computed for all users at once over the models each user actually
voted on (a mask), with average ranks for ties (Spearman) and tau-b (Kendall). A user with
fewer than two such models, or whose ratings over them are all equal, has no defined
coefficient (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

from ranking.types import BoolArray, FloatArray

__all__ = ["AgreementSummary", "NEAR_ZERO", "kendall_per_row", "spearman_per_row", "summarise"]


#: A per-user Spearman at or below this counts as "near zero or negative" (docs/SPEC.md section 3).
NEAR_ZERO = 0.1
#: Most (user, model pair) cells held at once by :func:`kendall_per_row`.
_MAX_PAIR_CELLS = 5_000_000


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


@dataclass(frozen=True)
class AgreementSummary:
    """The ``summary`` object of the ``users`` JSON (docs/SPEC.md section 3)."""

    users: int
    mean_spearman: float
    median_spearman: float
    share_near_zero_or_negative: float
    mean_kendall: float

    def to_dict(self) -> dict[str, float | int | None]:
        """The summary as JSON-ready numbers (an undefined figure becomes None)."""
        out: dict[str, float | int | None] = {"users": self.users}
        for name in ("mean_spearman", "median_spearman", "share_near_zero_or_negative"):
            value = getattr(self, name)
            out[name] = None if np.isnan(value) else round(value, 4)
        out["mean_kendall"] = None if np.isnan(self.mean_kendall) else round(self.mean_kendall, 4)
        return out


def summarise(
    spearman: FloatArray,
    kendall: FloatArray,
    n_battles: npt.NDArray[np.integer],
    min_battles: int = 1,
) -> AgreementSummary:
    """Summarise per-user agreement over users with at least ``min_battles`` votes.

    Users whose coefficient is undefined (NaN) are left out of every figure.
    """
    keep = (np.asarray(n_battles) >= min_battles) & np.isfinite(spearman)
    rho, tau = spearman[keep], kendall[keep]
    if rho.size == 0:
        nan = float("nan")
        return AgreementSummary(0, nan, nan, nan, nan)
    return AgreementSummary(
        users=int(rho.size),
        mean_spearman=float(rho.mean()),
        median_spearman=float(np.median(rho)),
        share_near_zero_or_negative=float(np.mean(rho <= NEAR_ZERO)),
        mean_kendall=float(np.nanmean(tau)) if np.isfinite(tau).any() else float("nan"),
    )
