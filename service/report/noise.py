"""The report's section on noise: how much of the users' disagreement sampling noise makes.

Each fitted cell (method and shrinkage) with its summary's intervals over users beside the
null's figures (:mod:`ranking.noise`: every user's votes re-drawn from the aggregate and
refitted the same way), a per-user scatter of the two, and the comparison in plain words.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ranking.agreement import NoiseComparison
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.config import METHODS
from service.report.markup import count, figure, num, section, table
from service.report.plots import METHOD_TITLES, PLAIN_FIRST, noise_scatter

__all__ = ["noise_section"]

_SHRINKAGE = {"none": "none (plain)", "cv": "cv (shrunk)"}
TITLE = "How much of the disagreement is noise?"


def _with_interval(summary: dict[str, Any], name: str, percent: bool = False) -> str:
    bounds = summary.get(f"{name}_interval")
    value = num(summary.get(name), percent=percent)
    if not bounds or bounds[0] is None or bounds[1] is None:
        return value
    lower, upper = (num(b, percent=percent) for b in bounds)
    return f"{value} <small>({lower} – {upper})</small>"


def noise_section(fit: FitArtifacts, min_battles: int) -> str | None:
    """The ``noise`` section; None when no summary of the fit carries the null."""
    keys = [(m, s) for m in METHODS for s in PLAIN_FIRST if s in fit.summaries.get(m, {})]
    rows, readings = [], []
    for method, shrinkage in keys:
        summary = dict(fit.summaries[method][shrinkage])
        noise = summary.get("noise")
        if not noise:
            continue
        name = METHOD_TITLES.get(method, escape(method))
        kind = _SHRINKAGE.get(shrinkage, escape(shrinkage))
        rows.append(
            [
                name,
                kind,
                count(summary.get("users")),
                _with_interval(summary, "mean_spearman"),
                _with_interval(summary, "median_spearman"),
                _with_interval(summary, "share_near_zero_or_negative", percent=True),
                _with_interval(noise, "mean_spearman"),
                num(noise.get("share_near_zero_or_negative"), percent=True),
                _with_interval(noise, "noise_share", percent=True),
            ]
        )
        reading = escape(NoiseComparison.from_dict(noise).reading())
        readings.append(f"<li><b>{name}, {kind}.</b> {reading}</li>")
    if not rows:
        return None
    headers = ["method", "shrinkage", "users", "mean Spearman", "median Spearman", "share ≤ 0.1"]
    headers += ["null: mean Spearman", "null: share ≤ 0.1", "noise's part of the gap"]
    html_table = table(headers, rows, text_columns=2, id="noise-table")
    explain = (
        "<p>A user with a few dozen votes cannot have a precise ranking, so even a user whose "
        "taste is the crowd's disagrees with the aggregate. The <i>null</i> measures how much: "
        "every summarised user's votes are re-drawn from the aggregate Bradley-Terry model, "
        "on the very pairs they voted on, with ties at the user's own tie rate (a tie is half "
        "a win, so each vote's expected score stays the aggregate's), and refitted exactly as "
        "their real votes were (same method, same shrinkage at the strength learnt from the "
        "real votes). <i>Noise's part of the gap</i> is (1 − null mean) / (1 − observed "
        "mean): the share of the observed distance from perfect agreement that noise alone "
        "produces; 100% or more means no taste beyond noise is detectable. Intervals are 95%, "
        "from a bootstrap over users (1,000 resamples, seed 0), the same resamples for the "
        f"observed and the null figures. Users with at least {escape(str(min_battles))} "
        "votes.</p>"
    )
    svg = noise_scatter(fit.agreement, min_battles)
    caption = (
        "Each dot is a user: the Spearman their re-drawn votes give on average (x) against "
        "their own (y). On the grey diagonal a user disagrees with the aggregate exactly as "
        "much as noise would make them; below it, more (a taste of their own, or careless "
        "votes); above it, less (votes more decisive than the crowd's average)."
    )
    body = html_table + explain + f"<ul>{''.join(readings)}</ul>" + figure(svg, caption)
    return section("noise", TITLE, body)
