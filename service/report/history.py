"""The report's section on ratings over time: a board a period, and the models that drifted.

From the fit directory's ``history.json`` (:mod:`service.pipeline.history`): each model's
rating per period with its interval, the drifting models in colour, and the flagged
changes in a table.
"""

from __future__ import annotations

from html import escape
from typing import Any

from service.report.markup import count, figure, num, section, table
from service.report.plots import LINE_COLOURS, history_lines

__all__ = ["TITLE", "history_section"]

TITLE = "Ratings over time"


def _leaders(history: dict[str, Any]) -> list[str]:
    """The models ranked first in the last period (and before, while fewer than shown)."""
    leaders: list[str] = []
    for period in reversed(history["periods"]):
        for row in period["board"]["models"]:
            if row["model"] not in leaders and len(leaders) < 4:
                leaders.append(str(row["model"]))
    return leaders


def history_section(history: dict[str, Any] | None) -> str | None:
    """The ``history`` section; None without a history or with fewer than two periods."""
    if not history or len(history["periods"]) < 2:
        return None
    flagged = [t for t in history["drift"] if t["flagged"]]
    drifting = list(history["drifting"])
    shown = drifting[: len(LINE_COLOURS)] or _leaders(history)
    periods = history["periods"]
    unit = {"equal": "equal periods"}.get(history["unit"], f"{history['unit']}s")
    level = num(history["level"], percent=True)
    text = (
        f"<p>{count(history['n_battles'])} dated votes in {len(periods)} periods (calendar "
        f"{escape(unit)} in UTC, merged until each holds the segments' minimums of votes and "
        "voters), one Bradley-Terry board a period. Between consecutive periods each model "
        "ranked in both is tested for a change of rating beyond its two intervals (the "
        "median change of all the models taken as the shift of scale), Holm-corrected over "
        f"every model and period: a stable arena raises a false alarm with probability at "
        f"most {level}.</p>"
    )
    if drifting:
        text += (
            f"<p><strong>{len(drifting)} model{'s' if len(drifting) > 1 else ''} drifted</strong>"
            f": {escape(', '.join(drifting))} (in colour below).</p>"
        )
    else:
        text += "<p>No model drifted beyond its intervals; the leaders are drawn in colour.</p>"
    rows = [
        [escape(str(t["model"])), escape(f"{t['before']} → {t['after']}"),
         f"{t['change']:+.1f}", f"{t['sd']:.1f}", num(t["p_adjusted"], 4)]
        for t in sorted(flagged, key=lambda t: -abs(t["change"]))
    ]  # fmt: skip
    svg = history_lines(history, shown)
    caption = (
        "Each model's rating per period; the coloured ones with their intervals, the others "
        "as grey lines. Each period's ratings average 1000 over the models it ranks."
    )
    body = text + figure(svg, caption)
    if rows:
        headers = ("model", "periods", "change", "sd", "p (Holm)")
        body += table(headers, rows, text_columns=2, id="drift-table")
    return section("history", TITLE, body)
