"""The HTML pieces of ``plb report``: the page's style sheet, tables, sections, figures
and the formatting of numbers and dates in them.

Every function returns HTML text; cells and captions handed in are already escaped HTML.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

__all__ = ["CSS", "count", "date", "figure", "num", "section", "table"]

#: The page's whole style sheet, inlined in its ``<head>``.
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
max-width:1040px;margin:2rem auto;padding:0 1.25rem;color:#222;line-height:1.5}
h1{margin-bottom:.2rem}h2{margin-top:2.6rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.lead{color:#555;margin-top:0}nav ol{columns:2;padding-left:1.2rem}a{color:#0060a0}
table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%;margin:.8rem 0;
font-variant-numeric:tabular-nums}
th,td{padding:.25rem .7rem;border-bottom:1px solid #e3e3e3;text-align:right}
th{background:#f6f6f6;font-weight:600;vertical-align:bottom}.text{text-align:left;white-space:nowrap}
figure{margin:1rem 0}figure svg{width:100%;height:auto}
figcaption,.note{color:#444;font-size:.95rem}.note{background:#fff8e5;padding:.6rem .9rem}
footer{margin:3rem 0 1rem;color:#777;font-size:.85rem}
"""


def num(value: Any, digits: int = 3, percent: bool = False) -> str:
    """``value`` with ``digits`` decimals, or as a whole percentage; "n/a" for None or NaN."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{float(value):.0%}" if percent else f"{float(value):.{digits}f}"


def count(value: Any) -> str:
    """An integer with thousands separators; "n/a" for None."""
    return "n/a" if value is None else f"{int(value):,}"


def date(stamp: Any) -> str:
    """An ISO timestamp as ``YYYY-MM-DD HH:MM UTC``; anything else escaped as it is."""
    try:
        moment = datetime.fromisoformat(str(stamp)).astimezone(UTC)
    except ValueError:
        return escape(str(stamp or "at an unknown date"))
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], text_columns: int = 1, **attrs: str
) -> str:
    """An HTML table; cells are already escaped HTML; the first columns are left aligned."""

    def cls(i: int) -> str:
        return ' class="text"' if i < text_columns else ""

    extra = "".join(f' {k}="{escape(v)}"' for k, v in attrs.items())
    head = "".join(f"<th{cls(i)}>{escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table{extra}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def section(section_id: str, title: str, body: str) -> str:
    """A ``<section>`` with its id and an escaped ``<h2>`` title above ``body``."""
    return f'<section id="{section_id}"><h2>{escape(title)}</h2>{body}</section>'


def figure(svg: str, caption: str) -> str:
    """An inline SVG with its caption."""
    return f"<figure>{svg}<figcaption>{caption}</figcaption></figure>"
