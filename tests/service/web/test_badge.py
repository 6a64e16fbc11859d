"""``service.web.render_badge``: a well-formed, escaped, accessible SVG badge."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from service.web import CLEAR_BEST, WEB_DIR, badge_words, render_badge

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


# -- what a badge says: no more than the odds (issue 32) -------------------------------


def test_badge_says_best_only_at_even_odds_or_better() -> None:
    rows = [{"model": "quill", "p_best": 0.62}, {"model": "kestrel", "p_best": 0.30}]
    assert badge_words(rows, personal=False) == ("best model", "quill")
    assert badge_words(rows, personal=True) == ("best model for you", "quill")
    at_half = [{"model": "quill", "p_best": CLEAR_BEST}, {"model": "kestrel", "p_best": 0.5}]
    assert badge_words(at_half, personal=False) == ("best model", "quill")


def test_badge_names_the_likeliest_with_its_odds_when_nothing_is_clear() -> None:
    # the rating order and the odds order can differ: the badge names the likeliest best
    rows = [
        {"model": "nimbus-pro-1.5", "p_best": 0.10},
        {"model": "pico-3b", "p_best": 0.12},
        {"model": "quill", "p_best": 0.004},
    ]
    assert badge_words(rows, personal=True) == ("likeliest for you", "pico-3b (12%)")
    assert badge_words(rows, personal=False) == ("likeliest", "pico-3b (12%)")
    tiny = [{"model": "a", "p_best": 0.004}, {"model": "b", "p_best": 0.001}]
    assert badge_words(tiny, personal=False) == ("likeliest", "a (<1%)")


def test_badge_without_odds_says_top_rated_and_an_empty_board_none_yet() -> None:
    assert badge_words([{"model": "quill"}, {"model": "kestrel"}], personal=False) == (
        "top rated",
        "quill",
    )
    assert badge_words([], personal=True) == ("best model for you", "none yet")


def test_badge_theme_sets_the_label_grey_and_refuses_others() -> None:
    def label_fill(svg: str) -> str | None:
        return [r.get("fill") for r in parse(svg).iter(f"{SVG}rect")][1]  # after the clip

    assert label_fill(render_badge("a", "b")) == "#555"
    assert label_fill(render_badge("a", "b", theme="auto")) == "#555"
    assert label_fill(render_badge("a", "b", theme="dark")) == "#3b4252"
    with pytest.raises(ValueError, match="'theme'.*'purple'"):
        render_badge("a", "b", theme="purple")  # type: ignore[arg-type]
