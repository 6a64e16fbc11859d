"""The page's whole journey in headless Chromium, from both entries (issue 32).

A person types queries, reads the answer in words, votes the suggested battle, sees what
changed, ranks again for one prompt keeping the votes, reloads, clears the votes, and
switches between Bradley-Terry and Elo; another shows their own board with a user id and
token and votes from there. Each step is checked against the API's own answer to the same
request. Then the widget on light and dark host pages, with and without ``embed.js``,
readable in each (screenshots in ``tests/artifacts/``).

The server, the browser and the helpers are those of :mod:`tests.service.web.test_browser`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.service.web.test_browser import (  # noqa: F401 (fixtures: server, chromium)
    _FITS,
    QUERIES,
    TOKEN_SECRET,
    Errors,
    Server,
    artifacts_dir,
    chromium,
    expected,
    host_page,
    rows,
    rows_with_ratings,
    server,
)

pytestmark = pytest.mark.slow

PROMPT = "Write a Python function that merges two sorted lists"
#: The page's threshold for "the battle below would tell them apart" (app.js).
INFORMATIVE_BITS = 0.1
#: Words of the model's internals that a person should never read in the "why".
JARGON = ("starting point", " sd)", " sd,", "baseline", "prior")


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:  # noqa: F811 (the imported fixture)
    """A fresh page of its own context (own storage), console errors collected."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    tab = context.new_page()
    errors = Errors()
    errors.watch(tab)
    tab.plb_errors = errors
    try:
        yield tab
    finally:
        context.close()


def ranks(tab: Any, table: str) -> list[str]:
    return [rank for rank, _ in rows(tab, table)]


def assert_ranks_read_right(tab: Any, table: str, models: list[dict[str, Any]]) -> None:
    """Ranks as ranges where uncertain, as the API's rows say, never a column of "1"s."""
    assert rows(tab, table) == expected(models)
    shown = ranks(tab, table)
    if len(shown) > 1:
        assert set(shown) != {"1"}, shown
    for model, text in zip(models, shown, strict=True):
        lower, upper = model.get("rank_lower"), model.get("rank_upper")
        if lower is not None and upper is not None and lower != upper:
            assert text == f"{lower}\u2013{upper}"


def kept_votes(tab: Any) -> list[dict[str, str]]:
    """The votes the page keeps in sessionStorage."""
    kept = tab.evaluate("() => JSON.parse(sessionStorage.getItem('plb.session') || 'null')")
    return [] if kept is None else list(kept["votes"])


def wait_status(tab: Any, start: str) -> None:
    tab.wait_for_function(
        "text => document.getElementById('status').textContent.startsWith(text)", arg=start
    )


def check_verdict(tab: Any, pair: dict[str, Any]) -> None:
    """ "Would tell them apart" only for a battle worth INFORMATIVE_BITS or more."""
    verdict = tab.inner_text("#answer-battle")
    if not tab.inner_text("#your-answer").startswith("Nothing separates"):
        assert verdict == ""
    elif pair["information"] >= INFORMATIVE_BITS:
        assert verdict == "The battle below would tell them apart."
    else:
        assert verdict.startswith("No single battle will settle it yet")


def check_why(tab: Any, explanation: dict[str, Any] | None, *, for_prompt: bool) -> None:
    """The page shows the explanation when the API gives one, in plain words: topics by
    the names a person would use (only those that fit), the style traits' sentences, and
    each top model's moves in points from everyone's rating as the board shows it."""
    if explanation is None:
        assert tab.is_hidden("#your-why")
        return
    tab.wait_for_selector("#your-why", state="visible")
    why = tab.inner_text("#your-why")
    topics_line = tab.inner_text("#why-topics")
    assert topics_line.startswith("Why, for this prompt: " if for_prompt else "Why: ")
    fitting = [t for t in explanation["topics"] if t.get("fits", True)]
    names = [t.get("name") or t["label"] for t in fitting]
    if for_prompt:
        assert (names[0] if names else "none of our topics fits it closely") in topics_line
    else:
        assert all(name in topics_line for name in names[:3]), (names, topics_line)
    for trait in explanation["style"]:
        if trait.get("sentence"):
            assert trait["sentence"].lower() in why.lower()
    board = dict(rows_with_ratings(tab, "#aggregate-table"))
    lines = tab.inner_text("#why-models").splitlines()
    assert len(lines) == len(explanation["models"])
    for line, model in zip(lines, explanation["models"], strict=True):
        assert line.startswith(f"{model['model']}, rated ")
        if model["model"] in board:
            assert f"everyone's votes put it at {board[model['model']]}" in line
    assert not any(word in why for word in JARGON), why
    assert re.search(r"[+\u2212]\d+ ", why) is None  # no signed numbers: "moved it up 9"


def test_journey_from_queries(server: Server, page: Any) -> None:  # noqa: F811
    client = server.client
    page.goto(f"{server.base_url}/")
    page.wait_for_selector("#aggregate-table tbody tr")
    board = client.get("/v1/leaderboard", params={"method": "bt"}).json()
    assert_ranks_read_right(page, "#aggregate-table", board["models"])

    # 1. queries in: the answer in words, ranges for ranks, the why, the next battle
    page.fill("#queries", "\n".join(QUERIES))
    page.click("#recommend-button")
    wait_status(page, "Ranked ")
    first = client.post("/v1/recommend", json={"queries": QUERIES}).json()
    assert_ranks_read_right(page, "#your-table", first["models"])
    check_why(page, first["explanation"], for_prompt=False)
    page.wait_for_selector("#next-battle", state="visible")
    pair = client.post("/v1/next-battle", json={"queries": QUERIES}).json()
    assert page.inner_text("#vote-a") == pair["model_a"]
    check_verdict(page, pair)
    assert page.is_hidden("#kept-votes")

    # 2. a vote: counted, kept in this tab's session, what changed said
    page.click("#vote-b")
    page.wait_for_selector("#your-change", state="visible")
    vote = {"model_a": pair["model_a"], "model_b": pair["model_b"], "winner": "model_b"}
    assert kept_votes(page) == [vote]
    voted = client.post("/v1/recommend", json={"queries": QUERIES, "votes": [vote]}).json()
    assert voted["source"] == "blended"
    assert_ranks_read_right(page, "#your-table", voted["models"])
    assert "1 vote given here" in page.inner_text("#your-source")
    assert page.inner_text("#kept-votes-text").startswith("1 vote of yours kept")
    page.wait_for_selector("#next-battle", state="visible")
    # the next battle counts the vote: not the pair just voted on (issue 32, item 6)
    shown = {page.inner_text("#vote-a"), page.inner_text("#vote-b")}
    assert shown != {pair["model_a"], pair["model_b"]}

    # 3. ranked again for one prompt: the vote is sent again, never dropped silently
    page.fill("#prompt", PROMPT)
    with page.expect_request(lambda r: r.url.endswith("/v1/recommend")) as sent:
        page.click("#recommend-button")
    assert sent.value.post_data_json["votes"] == [vote]
    wait_status(page, "Ranked ")
    body = {"queries": QUERIES, "prompt": PROMPT, "votes": [vote]}
    per_prompt = client.post("/v1/recommend", json=body).json()
    assert per_prompt["scope"] == "prompt" and per_prompt["source"] == "blended"
    assert_ranks_read_right(page, "#your-table", per_prompt["models"])
    source = page.inner_text("#your-source")
    assert "blended" in source and "1 vote given here" in source and "for your prompt" in source
    check_why(page, per_prompt["explanation"], for_prompt=True)

    # 4. a reload keeps the votes (and ranks again with them)
    page.reload()
    page.wait_for_selector("#kept-votes", state="visible")
    page.wait_for_function(
        "() => document.getElementById('your-source').textContent.includes('1 vote given here')"
    )
    assert page.input_value("#prompt") == PROMPT
    assert_ranks_read_right(page, "#your-table", per_prompt["models"])

    # 5. the BT/Elo toggle re-ranks everything it can, and says what it cannot
    page.click("label[for=method-elo]")
    page.wait_for_function(
        "() => document.getElementById('aggregate-meta').textContent.startsWith('Elo')"
    )
    elo = client.get("/v1/leaderboard", params={"method": "elo"}).json()
    assert_ranks_read_right(page, "#aggregate-table", elo["models"])
    page.wait_for_function(
        "() => document.getElementById('your-source').textContent.includes('rated with Bradley')"
    )
    assert page.is_visible("#agreement-elo")
    page.click("label[for=method-bt]")
    page.wait_for_function(
        "() => document.getElementById('aggregate-meta').textContent.startsWith('Bradley')"
    )
    assert page.is_hidden("#agreement-elo")

    # 6. "Clear my votes": gone from the session and from the ranking
    page.click("#clear-votes")
    page.wait_for_selector("#kept-votes", state="hidden")
    assert kept_votes(page) == []
    page.wait_for_function(
        "() => !document.getElementById('your-source').textContent.includes('vote')"
    )
    plain = client.post("/v1/recommend", json={"queries": QUERIES, "prompt": PROMPT}).json()
    assert_ranks_read_right(page, "#your-table", plain["models"])
    page.locator("#yours").screenshot(path=str(artifacts_dir() / "journey-queries.png"))
    assert page.plb_errors.messages == []


def test_journey_from_a_token(server: Server, page: Any) -> None:  # noqa: F811
    from service.live.tokens import user_token

    client = server.client
    user = server.user_id
    token = user_token(TOKEN_SECRET.encode(), user)
    bearer = {"Authorization": f"Bearer {token}"}

    page.goto(f"{server.base_url}/")
    page.click("#token-box summary")
    page.fill("#user-id", user)
    page.fill("#token", token)
    page.click("#token-button")
    wait_status(page, "Your leaderboard: ")
    own = client.get(f"/v1/users/{user}/leaderboard", headers=bearer).json()
    assert_ranks_read_right(page, "#your-table", own["models"])

    # the Elo board of the same user, then back
    page.wait_for_selector("#next-battle", state="visible")
    page.click("label[for=method-elo]")
    own_elo = client.get(f"/v1/users/{user}/leaderboard?method=elo", headers=bearer).json()
    page.wait_for_function(
        "names => [...document.querySelectorAll('#your-table tbody .model')]"
        ".map(c => c.textContent).join() === names",
        arg=",".join(m["model"] for m in own_elo["models"]),
    )
    page.click("label[for=method-bt]")
    page.wait_for_function(
        "names => [...document.querySelectorAll('#your-table tbody .model')]"
        ".map(c => c.textContent).join() === names"
        " && !document.getElementById('your-table').hasAttribute('aria-busy')",
        arg=",".join(m["model"] for m in own["models"]),
    )

    # 1. the vote buttons are shown and work from this entry (they were dead, issue 32)
    page.wait_for_selector("#vote-a", state="visible")
    pair = client.get(f"/v1/users/{user}/next-battle", headers=bearer).json()
    assert page.inner_text("#vote-a") == pair["model_a"]
    check_verdict(page, pair)
    page.click("#vote-a")
    page.wait_for_selector("#your-change", state="visible")
    wait_status(page, "Vote counted: 1 vote")
    vote = {"model_a": pair["model_a"], "model_b": pair["model_b"], "winner": "model_a"}
    assert kept_votes(page) == [vote]
    body = {"queries": [], "votes": [vote], "user_id": user}
    with_vote = client.post("/v1/recommend", json=body, headers=bearer)
    assert with_vote.status_code == 200, with_vote.text
    assert with_vote.json()["source"] == "blended"
    assert_ranks_read_right(page, "#your-table", with_vote.json()["models"])
    assert f"the stored votes of {user}" in page.inner_text("#your-source")
    assert page.inner_text("#your-change").startswith(f"Your vote for {pair['model_a']} over ")

    # 2. a reload keeps the vote: the token again (not remembered), the vote still counts
    page.reload()
    page.wait_for_selector("#kept-votes", state="visible")
    page.click("#token-box summary")
    page.fill("#user-id", user)
    page.fill("#token", token)
    page.click("#token-button")
    wait_status(page, "Your leaderboard: ")
    assert "1 vote given here" in page.inner_text("#your-source")
    assert_ranks_read_right(page, "#your-table", with_vote.json()["models"])
    # and the next battle, read off the ranking with the vote, can be voted on again
    page.wait_for_selector("#vote-b", state="visible")
    again = client.post("/v1/next-battle", json=body, headers=bearer).json()
    assert page.inner_text("#vote-b") == again["model_b"]
    page.locator("#yours").screenshot(path=str(artifacts_dir() / "journey-token.png"))
    assert page.plb_errors.messages == []


def test_empty_queries_need_a_user(server: Server) -> None:  # noqa: F811
    """Queries may be left out only with a user id and token (their prompts stand in)."""
    refused = server.client.post("/v1/recommend", json={"queries": []})
    assert refused.status_code == 422
    assert "queries" in refused.text


# -- the widget on other sites ------------------------------------------------------------

#: The card's text and background colours, and whether the background is opaque.
_CARD_COLOURS = """() => {
  const card = document.querySelector('.widget-card');
  const cell = document.querySelector('#widget-table td.model');
  return [getComputedStyle(card).backgroundColor, getComputedStyle(cell).color,
          getComputedStyle(document.body).colorScheme];
}"""


def _rgba(colour: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in re.findall(r"[\d.]+", colour)]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def _luminance(colour: tuple[float, float, float, float]) -> float:
    def linear(c: float) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b, _ = colour
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of two opaque colours."""
    high, low = sorted((_luminance(_rgba(fg)), _luminance(_rgba(bg))), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("host", ["light", "dark"])
@pytest.mark.parametrize("embed", [True, False], ids=["embed-js", "no-script"])
def test_widget_reads_on_any_host(server: Server, page: Any, host: str, embed: bool) -> None:  # noqa: F811
    """An opaque card whose text contrasts with it (WCAG AA, 4.5), on light and dark
    pages, with embed.js (the host's theme) and without (the card's own, light)."""
    background = "#fdfdfd" if host == "light" else "#101418"
    frame = (
        f'<iframe src="{server.base_url}/widget/leaderboard?top=5" title="LLM leaderboard" '
        'width="360" height="300" style="border:0" data-plb-widget></iframe>'
    )
    script = f'<script src="{server.base_url}/widget/embed.js" async></script>' if embed else ""
    html = (
        f'<html><body style="background:{background};color:#888;font:16px sans-serif">'
        f"<p>A {host} site</p>{frame}{script}</body></html>"
    )
    with host_page(html) as url:
        page.set_viewport_size({"width": 420, "height": 400})
        page.goto(url)
        card = page.frame_locator("iframe")
        card.locator("#widget-table tbody tr").nth(4).wait_for()
        theme = "dark" if embed and host == "dark" else "light"
        card.locator(f"body.widget.{theme}").wait_for(state="attached")
        widget = next(f for f in page.frames if "/widget/" in f.url)
        if embed:
            page.wait_for_function("() => document.querySelector('iframe').style.height !== ''")
            widget.wait_for_function(_FITS)
        bg, fg, scheme = widget.evaluate(_CARD_COLOURS)
        assert _rgba(bg)[3] == 1.0, bg  # opaque: the host never shows through
        assert contrast(fg, bg) >= 4.5, (fg, bg)
        assert scheme == theme
        name = f"widget-{host}-host-{'embed-js' if embed else 'no-script'}.png"
        page.screenshot(path=str(artifacts_dir() / name))
    assert page.plb_errors.messages == []


@pytest.mark.parametrize("host", ["light", "dark"])
def test_embed_js_after_the_cards_size_messages_still_sizes_and_themes_it(
    server: Server,  # noqa: F811
    page: Any,
    host: str,
) -> None:
    """An async embed.js may run after the card posted its last size to no one: it asks
    the card for its height, sizes the iframe and tells it the host's theme."""
    background = "#fdfdfd" if host == "light" else "#101418"
    html = (
        f'<html><body style="background:{background}"><iframe src="{server.base_url}'
        '/widget/leaderboard?top=5" width="360" height="300" style="border:0" '
        "data-plb-widget></iframe></body></html>"
    )
    with host_page(html) as url:
        page.goto(url)
        card = page.frame_locator("iframe")
        card.locator("#widget-table tbody tr").nth(4).wait_for()
        page.wait_for_timeout(500)  # the card's size messages, heard by no one
        assert page.evaluate("() => document.querySelector('iframe').style.height") == ""
        page.add_script_tag(url=f"{server.base_url}/widget/embed.js")
        page.wait_for_function(
            "() => document.querySelector('iframe').style.height !== ''", timeout=15_000
        )
        card.locator(f"body.widget.{host}").wait_for(state="attached", timeout=15_000)
    assert page.plb_errors.messages == []


def test_widget_theme_from_its_address(server: Server, page: Any) -> None:  # noqa: F811
    """theme=dark without embed.js; theme=auto follows the reader; another theme is a 422."""
    page.emulate_media(color_scheme="dark")
    for theme, expected_scheme in (("dark", "dark"), ("auto", "light dark")):
        page.goto(f"{server.base_url}/widget/leaderboard?top=3&theme={theme}")
        page.wait_for_selector("#widget-table tbody tr")
        bg, fg, scheme = page.evaluate(_CARD_COLOURS)
        assert scheme == expected_scheme
        assert _luminance(_rgba(bg)) < 0.18  # dark, the reader's scheme being dark
        assert contrast(fg, bg) >= 4.5
    refused = server.client.get("/widget/leaderboard", params={"theme": "purple"})
    assert refused.status_code == 422
    assert "theme" in refused.text and "purple" in refused.text
    badge = server.client.get("/widget/badge.svg", params={"theme": "purple"})
    assert badge.status_code == 422 and "theme" in badge.text
