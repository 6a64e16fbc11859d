"""The web page, the embeddable widget and the SVG badge.

The page (``index.html``, ``app.js``, ``style.css``) and the widget (``widget.html``,
``widget.js``) are static files in this folder, served from the service's own origin with
no build step and nothing loaded from elsewhere; they call the ``/v1`` JSON API. The badge
is rendered here, as a string, by :func:`render_badge`. The API documentation pages
(``docs.html`` with its initialiser ``docs.js``, and ``redoc.html``) load Swagger UI and
ReDoc from :data:`DOCS_ASSETS_DIR`, the copies the package ``fastapi-offline`` ships, so
that they too work with no network.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal
from xml.sax.saxutils import escape

import fastapi_offline

__all__ = ["CLEAR_BEST", "DOCS_ASSETS_DIR", "WEB_DIR", "badge_words", "render_badge"]

#: The folder holding the static files of the page and the widget.
WEB_DIR: Path = Path(__file__).resolve().parent

#: Swagger UI and ReDoc (``swagger-ui-bundle.js``, ``swagger-ui.css``,
#: ``redoc.standalone.js``, ``favicon.png``), as installed with ``fastapi-offline``.
DOCS_ASSETS_DIR: Path = Path(fastapi_offline.__file__).resolve().parent / "static"

#: Messages longer than this many characters are cut and end with an ellipsis.
MAX_MESSAGE_CHARS = 40
#: Labels are cut at this many characters too (they are normally fixed text).
MAX_LABEL_CHARS = 40

_HEIGHT = 20
_PADDING = 6  # horizontal padding each side of a text, in px
_FONT_SIZE = 11
#: The grey of the label, by theme: shields.io's on light pages, a darker one on dark.
_LABEL_COLORS = {"light": "#555", "dark": "#3b4252"}

#: A badge says "best model" only when its model is at least this likely the best: more
#: likely than all the others together. Below it, "likeliest: X (12%)".
CLEAR_BEST = 0.5

# Approximate advance widths, in px, of Verdana/DejaVu Sans at 11px (the shields.io font).
_NARROW = frozenset("fijlrtI!.,:;'|()[]{} ")
_WIDE = frozenset("mwMW@%")


def _char_width(char: str) -> float:
    """Estimated width of one character in px: narrow, wide, upper case or ordinary."""
    if unicodedata.combining(char) or char in "\u200d\ufe0f":
        return 0.0  # combining marks, zero-width joiners and emoji variation selectors
    if unicodedata.east_asian_width(char) in "WF":
        return 13.0  # CJK and most emoji take about two columns
    if char in _NARROW:
        return 3.8
    if char in _WIDE:
        return 10.5
    if char.isupper() or char.isdigit():
        return 7.5
    return 6.8


def _text_width(text: str) -> int:
    """Estimated width of ``text`` in px, rounded up."""
    return int(sum(_char_width(c) for c in text) + 0.999)


def _xml_char(char: str) -> bool:
    """Whether ``char`` may appear in XML 1.0 text (control characters may not)."""
    return unicodedata.category(char) not in ("Cc", "Cs") and char not in "\ufffe\uffff"


def _truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last being an ellipsis if cut."""
    # XML 1.0 forbids control characters, lone surrogates and U+FFFE/U+FFFF: drop them
    # (tabs and newlines become blanks below, as a one-line badge has no line breaks).
    text = "".join(c if c in "\t\n\r" or _xml_char(c) else "" for c in text)
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "\u2026"


def _check_color(color: str) -> str:
    """The colour, if it is a safe CSS colour token (``#hex`` or a plain name)."""
    body = color[1:] if color.startswith("#") else color
    hex_ok = color.startswith("#") and len(body) in (3, 4, 6, 8)
    if (hex_ok and all(c in "0123456789abcdefABCDEF" for c in body)) or (
        not color.startswith("#") and body.isascii() and body.isalpha() and len(body) <= 30
    ):
        return color
    raise ValueError(
        f"Argument 'color' must be a hex colour such as '#4c1' or a colour name, not {color!r}."
    )


def badge_words(models: Sequence[Mapping[str, Any]], *, personal: bool) -> tuple[str, str]:
    """The label and message of a badge for a board's rows: no more than its odds say.

    Parameters
    ----------
    models : sequence of mapping
        The board's ranked rows (``model``, and ``p_best`` where the board has odds).
    personal : bool
        Whether the board is one person's ("for you").

    Returns
    -------
    tuple of str
        ``("best model", X)`` when the likeliest best model ``X`` is at least
        :data:`CLEAR_BEST` (50%) likely the best; else ``("likeliest", "X (12%)")``;
        ``("top rated", X)`` (the first row) for a board without odds; ``("best model",
        "none yet")`` for an empty one. Each label gains " for you" when ``personal``.
    """
    suffix = " for you" if personal else ""
    if not models:
        return f"best model{suffix}", "none yet"
    odds = [m for m in models if isinstance(m.get("p_best"), int | float)]
    if not odds:
        return f"top rated{suffix}", str(models[0]["model"])
    top = max(odds, key=lambda m: float(m["p_best"]))  # the first of equals: the board's
    chance = float(top["p_best"])
    if chance >= CLEAR_BEST:
        return f"best model{suffix}", str(top["model"])
    shown = "<1%" if 0 < chance < 0.005 else f"{chance:.0%}"
    return f"likeliest{suffix}", f"{top['model']} ({shown})"


def render_badge(
    label: str,
    message: str,
    *,
    color: str = "#4c1",
    theme: Literal["light", "dark", "auto"] = "light",
) -> str:
    """Render a shields.io-style flat SVG badge.

    Parameters
    ----------
    label : str
        The text on the left, on grey (e.g. ``"best model for you"``).
    message : str
        The text on the right, on ``color`` (e.g. a model name); cut with an ellipsis
        after about 40 characters. Any characters are allowed: they are XML-escaped.
    color : str, default "#4c1"
        Background of the message: a hex colour (``#rgb``, ``#rrggbb``, with or without
        alpha) or a CSS colour name.
    theme : {"light", "dark", "auto"}, default "light"
        The label's grey: shields.io's on light pages, a darker one for dark pages. Both
        are opaque with white text, readable on any page; ``auto`` draws the light one
        (an image cannot read the reader's colour scheme without a style sheet, which
        the badge's policy forbids).

    Returns
    -------
    str
        A standalone SVG document (``image/svg+xml``) with a ``<title>`` and
        ``role="img"``/``aria-label`` for screen readers.

    Raises
    ------
    ValueError
        If ``color`` is neither a hex colour nor a plain colour name, or ``theme`` is
        not one of the three.
    """
    color = _check_color(color)
    if theme not in ("light", "dark", "auto"):
        raise ValueError(f"Argument 'theme' must be 'light', 'dark' or 'auto', not {theme!r}.")
    label_color = _LABEL_COLORS["dark" if theme == "dark" else "light"]
    label = _truncate(label, MAX_LABEL_CHARS)
    message = _truncate(message, MAX_MESSAGE_CHARS)
    label_w = _text_width(label) + 2 * _PADDING
    message_w = _text_width(message) + 2 * _PADDING
    total_w = label_w + message_w
    title = f"{label}: {message}"
    # escape() handles &, < and >; the entities dict adds the quotes for attribute values.
    attr = {'"': "&quot;", "'": "&apos;"}
    title_attr, title_text = escape(title, attr), escape(title)
    label_text, message_text = escape(label), escape(message)
    label_x, message_x = label_w / 2, label_w + message_w / 2
    text_y, shadow_y = 14, 15
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{_HEIGHT}" '
        f'viewBox="0 0 {total_w} {_HEIGHT}" role="img" aria-label="{title_attr}">'
        f"<title>{title_text}</title>"
        '<linearGradient id="s" x2="0" y2="100%">'
        '<stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total_w}" height="{_HEIGHT}" rx="3" fill="#fff"/>'
        "</clipPath>"
        '<g clip-path="url(#r)">'
        f'<rect width="{label_w}" height="{_HEIGHT}" fill="{label_color}"/>'
        f'<rect x="{label_w}" width="{message_w}" height="{_HEIGHT}" fill="{color}"/>'
        f'<rect width="{total_w}" height="{_HEIGHT}" fill="url(#s)"/>'
        "</g>"
        '<g fill="#fff" text-anchor="middle" '
        'font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        f'font-size="{_FONT_SIZE}" text-rendering="geometricPrecision">'
        f'<text aria-hidden="true" x="{label_x:g}" y="{shadow_y}" fill="#010101" '
        f'fill-opacity=".3">{label_text}</text>'
        f'<text x="{label_x:g}" y="{text_y}">{label_text}</text>'
        f'<text aria-hidden="true" x="{message_x:g}" y="{shadow_y}" fill="#010101" '
        f'fill-opacity=".3">{message_text}</text>'
        f'<text x="{message_x:g}" y="{text_y}">{message_text}</text>'
        "</g></svg>"
    )
