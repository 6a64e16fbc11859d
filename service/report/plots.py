"""The figures of ``plb report``, each rendered to an inline SVG string.

Figures are built on :class:`matplotlib.figure.Figure` directly (no ``pyplot``, so no
global figure state and no GUI backend), inside an ``rc_context`` so the caller's
matplotlib settings are left alone. matplotlib is imported inside the functions: the
command line stays fast to start when no report is made.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ranking.users import Shrinkage
from service.pipeline.config import METHODS, SHRINKAGES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "COLOURS",
    "MAX_PANEL_MODELS",
    "METHOD_TITLES",
    "PLAIN_FIRST",
    "UserPanel",
    "history_lines",
    "noise_scatter",
    "pick_users",
    "running_median",
    "spearman_histograms",
    "user_panels",
    "votes_scatter",
]

#: Okabe-Ito colours, safe for the common colour-vision deficiencies.
COLOURS = {"none": "#E69F00", "cv": "#0072B2", "aggregate": "#555555"}
SHRINKAGE_LABELS = {"none": "plain (the study)", "cv": "shrunk (cv)"}
METHOD_TITLES = {"bt": "Bradley-Terry", "elo": "Elo"}
#: The pipeline's shrinkages, plain before shrunk: the order of the report's tables
#: and of the curves in its figures.
PLAIN_FIRST: tuple[Shrinkage, ...] = tuple(sorted(SHRINKAGES, key=lambda s: s != "none"))
NEAR_ZERO = 0.1
#: Scatter plots with more points than this are rasterised inside the SVG.
RASTER_POINTS = 3000
#: A user panel shows at most this many models (the most-voted ones).
MAX_PANEL_MODELS = 30

_RC = {
    "svg.fonttype": "none",
    "text.parse_math": False,  # model names and user ids are text, never mathtext
    "svg.hashsalt": "plb-report",
    "font.size": 9.0,
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "Liberation Sans"],
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10.0,
    "axes.titleweight": "bold",
    "legend.frameon": False,
    "legend.fontsize": 8.0,
}


@dataclass(frozen=True)
class UserPanel:
    """One user's panel of the personal-against-aggregate figure.

    Attributes
    ----------
    title : str
        Panel title (already says who the user is and why they were picked).
    ratings : DataFrame
        The user's rows of ``users.parquet`` for one method and shrinkage: ``model``,
        ``rating``, ``lower``, ``upper``, ``battles``.
    """

    title: str
    ratings: pd.DataFrame


@contextmanager
def _figure(width: float, height: float, **subplots: Any) -> Iterator[tuple[Figure, Any]]:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(cast("dict[Any, Any]", _RC)):
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(**subplots, squeeze=False)
        yield fig, axes


def _to_svg(fig: Figure, label: str) -> str:
    """The figure as an ``<svg>`` element that scales with its container."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.DOTALL)
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r"<svg\1", svg, count=1)
    return svg.replace("<svg", f'<svg role="img" aria-label="{label}"', 1)


def running_median(x: np.ndarray, y: np.ndarray, window: int | None = None) -> pd.DataFrame:
    """Median of ``y`` over a sliding window of neighbours in ``x`` order.

    Parameters
    ----------
    x, y : ndarray
        ``(n,)`` paired values; NaN in ``y`` is ignored.
    window : int, optional
        Points per window; by default about a sixth of the points (at least 9).

    Returns
    -------
    DataFrame
        Columns ``x`` and ``median``, one row per distinct ``x`` (the windows centred
        on tied points averaged), sorted; empty with fewer than 5 points.
    """
    keep = np.isfinite(x) & np.isfinite(y)
    frame = pd.DataFrame({"x": x[keep], "y": y[keep]}).sort_values("x", kind="stable")
    if len(frame) < 5:
        return pd.DataFrame({"x": [], "median": []})
    size = window or max(9, len(frame) // 6)
    rolled = frame["y"].rolling(size, center=True, min_periods=max(3, size // 2)).median()
    line = pd.DataFrame({"x": frame["x"].to_numpy(), "median": rolled.to_numpy()}).dropna()
    return line.groupby("x")["median"].mean().reset_index()


def _agreement_of(
    agreement: pd.DataFrame, method: str, shrinkage: str, min_battles: int
) -> pd.DataFrame:
    rows = agreement[
        (agreement["method"] == method)
        & (agreement["shrinkage"] == shrinkage)
        & (agreement["n_battles"] >= min_battles)
    ]
    return rows[np.isfinite(rows["spearman"].to_numpy(dtype=float))]


def _panel_methods(agreement: pd.DataFrame) -> list[str]:
    present = set(agreement["method"])
    return [m for m in METHODS if m in present] or sorted(present)


def pick_users(
    agreement: pd.DataFrame, method: str, shrinkage: str, min_battles: int
) -> list[tuple[str, str]]:
    """Up to four users worth a closer look, each with why it was picked.

    The most active user, the user with the median number of votes, and, among the
    active users (at least the median number of votes), the ones with the lowest and
    the highest Spearman with the aggregate. Ties are broken by user id.

    Parameters
    ----------
    agreement : DataFrame
        ``agreement.parquet`` of a fit.
    method, shrinkage : str
        Whose agreement decides.
    min_battles : int
        Users with fewer votes are not picked (unless no user has that many).

    Returns
    -------
    list of (str, str)
        ``(user_id, reason)`` pairs, distinct users.
    """
    rows = agreement[(agreement["method"] == method) & (agreement["shrinkage"] == shrinkage)]
    if (rows["n_battles"] >= min_battles).any():
        rows = rows[rows["n_battles"] >= min_battles]
    rows = rows.sort_values(["n_battles", "user_id"], ascending=[False, True])
    picked: list[tuple[str, str]] = []

    def take(candidates: pd.DataFrame, reason: str) -> None:
        chosen = {u for u, _ in picked}
        left = candidates[~candidates["user_id"].isin(chosen)]
        if not left.empty:
            picked.append((str(left["user_id"].iloc[0]), reason))

    if rows.empty:
        return picked
    take(rows, "most active")
    median = float(rows["n_battles"].median())
    distance = (rows["n_battles"] - median).abs()
    take(rows.assign(d=distance).sort_values(["d", "user_id"]), "median activity")
    rated = rows[(rows["n_battles"] >= median) & np.isfinite(rows["spearman"].astype(float))]
    take(rated.sort_values(["spearman", "user_id"]), "lowest agreement among active users")
    highest = rated.sort_values(["spearman", "user_id"], ascending=[False, True])
    take(highest, "highest agreement among active users")
    return picked


def spearman_histograms(agreement: pd.DataFrame, min_battles: int) -> str:
    """Histograms of per-user Spearman with the aggregate, plain against shrunk.

    One panel a method; in each, the plain and the shrunk distributions overlaid, their
    means dashed, and the "near zero or negative" zone (at most 0.1) shaded.

    Parameters
    ----------
    agreement : DataFrame
        ``agreement.parquet`` of a fit.
    min_battles : int
        Users with fewer votes are left out, as in ``summary.json``.

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    methods = _panel_methods(agreement)
    bins = np.linspace(-1.0, 1.0, 41)
    with _figure(4.6 * len(methods), 3.2, nrows=1, ncols=len(methods)) as (fig, ax):
        for axis, method in zip(ax[0], methods, strict=True):
            axis.axvspan(-1.0, NEAR_ZERO, color="#ececec", zorder=0, label="≤ 0.1 (near zero)")
            for shrinkage in PLAIN_FIRST:
                rho = _agreement_of(agreement, method, shrinkage, min_battles)["spearman"]
                if rho.empty:
                    continue
                colour = COLOURS[shrinkage]
                values = rho.to_numpy(dtype=float)
                axis.hist(values, bins=bins, color=colour, alpha=0.3, histtype="stepfilled")
                axis.hist(values, bins=bins, color=colour, histtype="step", linewidth=1.2)
                mean = float(values.mean())
                axis.axvline(
                    mean,
                    color=colour,
                    linestyle="--",
                    linewidth=1.4,
                    label=f"{SHRINKAGE_LABELS[shrinkage]}: mean {mean:.2f}, n = {values.size}",
                )
            axis.set_title(METHOD_TITLES.get(method, method))
            axis.set_xlim(-1.03, 1.03)
            axis.set_xlabel("Spearman correlation with the aggregate ranking")
            axis.legend(loc="upper left")
        ax[0][0].set_ylabel("users")
        return _to_svg(fig, "Histograms of per-user Spearman correlation with the aggregate")


def user_panels(
    panels: Sequence[UserPanel], aggregate: Sequence[dict[str, Any]], x_label: str
) -> str:
    """Aggregate rating against each user's personal rating, one panel a user.

    Models run down the y axis in aggregate order (best at the top); grey diamonds are
    the aggregate ratings and blue dots with bars the user's ratings and intervals.
    Models the user never voted on are drawn hollow with a dotted bar.

    Parameters
    ----------
    panels : sequence of UserPanel
        The users to show (one to four).
    aggregate : sequence of dict
        The ``models`` of the aggregate leaderboard JSON, best first.
    x_label : str
        Label of the shared x axis.

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    models = [m for m in aggregate]
    if len(models) > MAX_PANEL_MODELS:
        top = sorted(models, key=lambda m: -int(m.get("battles", 0)))[:MAX_PANEL_MODELS]
        models = [m for m in models if m in top]
    names = [str(m["model"]) for m in models]
    y = np.arange(len(names))[::-1].astype(float)
    ncols = 2 if len(panels) > 1 else 1
    nrows = -(-len(panels) // ncols)
    height = nrows * (0.25 * len(names) + 1.0) + 0.5
    shape = {"nrows": nrows, "ncols": ncols, "sharex": True, "sharey": True}
    with _figure(4.8 * ncols + 1.2, height, **shape) as (fig, ax):
        flat = list(ax.ravel())
        for axis, panel in zip(flat, panels, strict=False):
            user = panel.ratings.set_index("model").reindex(names)
            agg = np.array([float(m["rating"]) for m in models])
            agg_lo = np.array([float(m.get("lower") or m["rating"]) for m in models])
            agg_hi = np.array([float(m.get("upper") or m["rating"]) for m in models])
            axis.hlines(y - 0.14, agg_lo, agg_hi, color=COLOURS["aggregate"], linewidth=1.0)
            axis.scatter(agg, y - 0.14, marker="D", s=16, color=COLOURS["aggregate"], zorder=3)
            seen = user["battles"].fillna(0).to_numpy() > 0
            rating = user["rating"].to_numpy(dtype=float)
            lo, hi = user["lower"].to_numpy(dtype=float), user["upper"].to_numpy(dtype=float)
            blue = COLOURS["cv"]
            for mask, style in ((seen, "solid"), (~seen, "dotted")):
                axis.hlines(y[mask] + 0.14, lo[mask], hi[mask], color=blue, linestyles=style)
            axis.scatter(rating[seen], y[seen] + 0.14, s=22, color=blue, zorder=4)
            axis.scatter(
                rating[~seen], y[~seen] + 0.14, s=22, facecolor="white", edgecolor=blue, zorder=4
            )
            axis.set_title(panel.title, loc="left", fontsize=9)
            axis.grid(axis="x", color="#e6e6e6", linewidth=0.6)
            axis.set_axisbelow(True)
        for axis in flat[len(panels) :]:
            axis.set_visible(False)
        flat[0].set_yticks(y, names)
        flat[0].set_ylim(-0.7, len(names) - 0.3)
        for axis in ax[-1]:
            axis.set_xlabel(x_label)
        _user_legend(fig)
        return _to_svg(fig, "Aggregate against personal ratings for selected users")


def _user_legend(fig: Figure) -> None:
    from matplotlib.lines import Line2D

    grey, blue = COLOURS["aggregate"], COLOURS["cv"]
    handles = [
        Line2D(
            [], [], color=grey, marker="D", markersize=4, label="aggregate rating, 95% interval"
        ),
        Line2D([], [], color=blue, marker="o", markersize=5, label="this user's rating, interval"),
        Line2D(
            [],
            [],
            color=blue,
            marker="o",
            markersize=5,
            markerfacecolor="white",
            linestyle="dotted",
            label="model this user never voted on (the prior)",
        ),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3)


def votes_scatter(agreement: pd.DataFrame, min_battles: int) -> str:
    """Votes per user (log scale) against Spearman with the aggregate, with running medians.

    The parameters and the ``<svg>`` returned are those of :func:`spearman_histograms`.
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    methods = _panel_methods(agreement)
    with _figure(4.6 * len(methods), 3.4, nrows=1, ncols=len(methods), sharey=True) as (fig, ax):
        for axis, method in zip(ax[0], methods, strict=True):
            axis.axhline(0.0, color="#999999", linewidth=0.8)
            axis.axhline(NEAR_ZERO, color="#999999", linewidth=0.8, linestyle=":")
            for shrinkage in PLAIN_FIRST:
                rows = _agreement_of(agreement, method, shrinkage, min_battles)
                if rows.empty:
                    continue
                n = rows["n_battles"].to_numpy(dtype=float)
                rho = rows["spearman"].to_numpy(dtype=float)
                colour = COLOURS[shrinkage]
                axis.scatter(
                    n,
                    rho,
                    s=7,
                    alpha=0.35,
                    color=colour,
                    linewidths=0,
                    rasterized=len(rows) > RASTER_POINTS,
                )
                line = running_median(n, rho)
                axis.plot(
                    line["x"],
                    line["median"],
                    color=colour,
                    linewidth=2.2,
                    label=f"{SHRINKAGE_LABELS[shrinkage]}: running median",
                )
            axis.set_xscale("log")
            axis.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.xaxis.set_minor_formatter(NullFormatter())
            axis.set_ylim(-1.05, 1.05)
            axis.set_title(METHOD_TITLES.get(method, method))
            axis.set_xlabel("votes by the user (log scale)")
            axis.legend(loc="lower right")
        ax[0][0].set_ylabel("Spearman with the aggregate")
        return _to_svg(fig, "Votes per user against Spearman correlation with the aggregate")


def noise_scatter(agreement: pd.DataFrame, min_battles: int) -> str:
    """Each user's Spearman with the aggregate against what noise alone gives them.

    One panel a method, plain and shrunk users in their colours: a user on the diagonal
    disagrees with the aggregate as much as their votes, re-drawn from the aggregate,
    would (``null_spearman`` of ``agreement.parquet``); below it, more. The parameters
    and the ``<svg>`` returned are those of :func:`spearman_histograms`.
    """
    methods = _panel_methods(agreement)
    with _figure(4.6 * len(methods), 3.6, nrows=1, ncols=len(methods), sharey=True) as (fig, ax):
        for axis, method in zip(ax[0], methods, strict=True):
            axis.plot([-1.0, 1.0], [-1.0, 1.0], color="#999999", linewidth=0.8, label="no taste")
            for shrinkage in PLAIN_FIRST:
                rows = _agreement_of(agreement, method, shrinkage, min_battles)
                if "null_spearman" not in rows:
                    continue
                rows = rows[np.isfinite(rows["null_spearman"].to_numpy(dtype=float))]
                if rows.empty:
                    continue
                axis.scatter(
                    rows["null_spearman"].to_numpy(dtype=float),
                    rows["spearman"].to_numpy(dtype=float),
                    s=9,
                    alpha=0.5,
                    color=COLOURS[shrinkage],
                    linewidths=0,
                    rasterized=len(rows) > RASTER_POINTS,
                    label=f"{SHRINKAGE_LABELS[shrinkage]}, n = {len(rows)}",
                )
            axis.set_xlim(-1.05, 1.05)
            axis.set_ylim(-1.05, 1.05)
            axis.set_title(METHOD_TITLES.get(method, method))
            axis.set_xlabel("Spearman noise alone gives the user (null)")
            axis.legend(loc="upper left")
        ax[0][0].set_ylabel("the user's Spearman with the aggregate")
        return _to_svg(fig, "Each user's agreement against what noise alone gives them")


#: Drifting models, and the leaders when none drifts, are drawn in these (Okabe-Ito).
LINE_COLOURS = ("#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")


def history_lines(history: dict[str, Any], highlight: Sequence[str]) -> str:
    """Each model's rating per period with its interval; ``highlight`` (the drifting
    models) coloured with bars and named, the others thin grey lines.

    Parameters
    ----------
    history : dict
        The fit directory's ``history.json`` (:meth:`ranking.history.RatingHistory.to_dict`).
    highlight : sequence of str
        The models to draw in colour, at most six.

    Returns
    -------
    str
        An ``<svg>`` element.
    """
    periods = history["periods"]
    labels = [str(p["label"]) for p in periods]
    x = np.arange(len(periods), dtype=float)
    rows: dict[str, dict[int, dict[str, Any]]] = {}
    for i, period in enumerate(periods):
        for row in period["board"]["models"]:
            rows.setdefault(str(row["model"]), {})[i] = row
    width = min(11.0, 3.0 + 0.7 * len(periods))
    with _figure(width, 3.8) as (fig, ax):
        axis = ax[0][0]
        for model, by_period in rows.items():
            if model in highlight:
                continue
            at = sorted(by_period)
            axis.plot(x[at], [by_period[i]["rating"] for i in at], color="#c8c8c8", linewidth=0.8)
        for j, model in enumerate(highlight[: len(LINE_COLOURS)]):
            by_period = rows.get(model, {})
            at = sorted(by_period)
            rating = np.array([by_period[i]["rating"] for i in at], dtype=float)
            lo = rating - np.array([by_period[i]["lower"] for i in at], dtype=float)
            hi = np.array([by_period[i]["upper"] for i in at], dtype=float) - rating
            shift = (j - (len(highlight) - 1) / 2) * 0.06  # bars side by side, not on top
            axis.errorbar(
                x[at] + shift,
                rating,
                yerr=np.vstack([lo, hi]),
                color=LINE_COLOURS[j],
                marker="o",
                markersize=4,
                linewidth=1.6,
                capsize=2,
                label=model,
            )
        axis.set_xticks(x, labels, rotation=30 if len(periods) > 6 else 0, ha="right")
        axis.set_ylabel("rating (Elo scale, each period averaging 1000)")
        axis.grid(axis="y", color="#e6e6e6", linewidth=0.6)
        axis.set_axisbelow(True)
        if highlight:
            axis.legend(loc="best")
        return _to_svg(fig, "Each model's rating per period, with intervals")
