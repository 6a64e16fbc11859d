"""``service.web.render_badge``: a well-formed, escaped, accessible SVG badge."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from service.web import WEB_DIR, render_badge

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = [
    '<img src=x onerror="alert(1)">',
    "a & b < c > d",
    'it\'s "quoted"',
    "]]><script>alert(1)</script>",
    '=HYPERLINK("http://evil","x")',
    "model 🤖 with emoji 👩‍💻",
    "控制\x00\x01\x1b chars\ttab\nnewline",
]


def parse(svg: str) -> ET.Element:
    """The badge parsed as XML (raises on malformed output)."""
    return ET.fromstring(svg)


def texts(root: ET.Element) -> list[str]:
    """The visible texts, in document order (each is drawn twice: shadow, then text)."""
    return [t.text or "" for t in root.iter(f"{SVG}text") if t.get("aria-hidden") != "true"]


def test_web_dir_holds_the_static_files() -> None:
    for name in ("index.html", "app.js", "style.css", "widget.html", "widget.js", "favicon.svg"):
        assert (WEB_DIR / name).is_file(), name


def test_badge_is_svg_with_title_and_aria_label() -> None:
    root = parse(render_badge("best model", "gpt-4o"))
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("aria-label") == "best model: gpt-4o"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == "best model: gpt-4o"
    assert texts(root) == ["best model", "gpt-4o"]
    assert int(root.get("height", "0")) == 20


def test_badge_has_two_rectangles_with_the_colours() -> None:
    root = parse(render_badge("best model for you", "claude-3", color="#e05d44"))
    rects = [r for r in root.iter(f"{SVG}rect") if r.get("fill", "").startswith("#")]
    fills = [r.get("fill") for r in rects]
    assert "#555" in fills and "#e05d44" in fills
    left = next(r for r in rects if r.get("fill") == "#555")
    right = next(r for r in rects if r.get("fill") == "#e05d44")
    width = int(root.get("width", "0"))
    assert int(left.get("width", "0")) + int(right.get("width", "0")) == width
    assert int(right.get("x", "0")) == int(left.get("width", "0"))


@pytest.mark.parametrize("message", HOSTILE)
def test_badge_escapes_any_text(message: str) -> None:
    svg = render_badge(f"label {message}", message)
    root = parse(svg)  # well-formed whatever the input
    assert "<script" not in svg and "<img" not in svg
    assert all(t.tag.startswith(SVG) for t in root.iter())  # no injected elements
    # control characters dropped, blanks collapsed; none of these is over 40 characters
    expected = " ".join("".join(c for c in message if c >= " " or c in "\t\n").split())
    assert texts(root)[1] == expected


def test_badge_keeps_quotes_in_the_aria_label() -> None:
    root = parse(render_badge("best", "say \"hi\" & 'bye'"))
    assert root.get("aria-label") == "best: say \"hi\" & 'bye'"


def test_long_message_is_truncated_with_an_ellipsis() -> None:
    long = "a-very-long-model-name-" * 5
    root = parse(render_badge("best model", long))
    shown = texts(root)[1]
    assert len(shown) == 40
    assert shown.endswith("\u2026")
    assert long.startswith(shown[:-1])
    assert shown in (root.get("aria-label") or "")


def test_width_grows_with_the_text() -> None:
    short = parse(render_badge("best model", "abc"))
    longer = parse(render_badge("best model", "abcdefghijkl"))
    emoji = parse(render_badge("best model", "🤖🤖🤖"))
    assert int(longer.get("width", "0")) > int(short.get("width", "0"))
    assert int(emoji.get("width", "0")) > int(short.get("width", "0"))


@pytest.mark.parametrize("color", ["#4c1", "#007ec6", "#007ec6cc", "orange"])
def test_colour_accepts_hex_and_names(color: str) -> None:
    assert f'fill="{color}"' in render_badge("a", "b", color=color)


@pytest.mark.parametrize("color", ['red" onload="x', "#12", "#ggg", "url(#x)", ""])
def test_colour_rejects_anything_else(color: str) -> None:
    with pytest.raises(ValueError, match="'color'"):
        render_badge("a", "b", color=color)
