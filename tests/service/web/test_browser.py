"""The web page, the widget and the API docs in a real headless Chromium, against the
real service.

A small simulated arena, fitted once a session (``shared_fit`` of the conftest), is
served by uvicorn on a free local port, and driven with Playwright through the Debian
``chromium`` binary (never a downloaded browser). Every request to another origin is
aborted and recorded, and so is every Content-Security-Policy violation (:class:`Offline`):
the pages must work with no network. Screenshots go to ``tests/artifacts/`` (or
``$PLB_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

pytestmark = pytest.mark.slow

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

QUERIES = [
    "How do I reverse a linked list in C?",
    "Write a short poem about autumn rain",
    "Explain the difference between a virus and a bacterium",
]
TOKEN_SECRET = "browser-test-secret-0123456789"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Server:
    base_url: str
    client: httpx.Client
    user_id: str


@dataclass
class Errors:
    """Console errors and uncaught exceptions of one page."""

    messages: list[str] = field(default_factory=list)

    def watch(self, page: Any) -> None:
        def on_console(message: Any) -> None:
            if message.type == "error":
                self.messages.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda error: self.messages.append(f"uncaught: {error}"))


#: Reports each CSP violation of a document to the test (through an exposed binding).
_CSP_LISTENER = """
document.addEventListener('securitypolicyviolation', (event) => {
  window.plbCspViolation([event.effectiveDirective, event.blockedURI, event.sourceFile || '']);
});
"""


@dataclass
class Offline:
    """What the pages of one browser context tried beyond the test server.

    Requests to any other origin are aborted and listed in ``blocked``; the
    Content-Security-Policy violations the pages report are listed in ``violations``, as
    ``(directive, blocked URI, source file)``.
    """

    origin: str
    blocked: list[str] = field(default_factory=list)
    violations: list[tuple[str, str, str]] = field(default_factory=list)

    def watch(self, context: Any) -> None:
        context.route("**/*", self._route)
        context.expose_function("plbCspViolation", lambda v: self.violations.append(tuple(v)))
        context.add_init_script(_CSP_LISTENER)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url == self.origin or url.startswith(self.origin + "/"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("internetdisconnected")


def chromium_path() -> str:
    """The system's Chromium; a skip where there is none (a failure on CI)."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        reason = "no chromium binary (looked on PATH and at /usr/bin/chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def artifacts_dir() -> Path:
    """Where the screenshots go: ``$PLB_TEST_ARTIFACTS`` or ``tests/artifacts``."""
    path = Path(os.environ.get("PLB_TEST_ARTIFACTS") or ARTIFACTS)
    path.mkdir(parents=True, exist_ok=True)
    return path


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def server(shared_fit: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The real app on the shared fit (not shown as simulated: fitted without the truth)."""
    with serve(shared_fit, tmp_path_factory.mktemp("state")) as running:
        yield running


@pytest.fixture(scope="module")
def demo_server(
    shared_fit_with_truth: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The real app on a fit made as the demo makes it (with the truth): a simulated arena."""
    with serve(shared_fit_with_truth, tmp_path_factory.mktemp("demo-state")) as running:
        yield running


@contextmanager
def serve(fit_dir: Path, state: Path, **overrides: Any) -> Iterator[Server]:
    """The real app under uvicorn, in a thread, on a free port of 127.0.0.1."""
    from service.live.settings import Settings
    from tests.service.conftest import uvicorn_in_thread

    settings = Settings(
        fit_dir=fit_dir,
        store_path=state / "store.sqlite",
        state_dir=state,
        redis_url=None,
        token_secret=SecretStr(TOKEN_SECRET),
        refit_interval_s=0,
        **overrides,
    )
    with uvicorn_in_thread(settings) as (uv, thread, port):
        wait_until(lambda: uv.started or not thread.is_alive(), 120, "the server start")
        assert thread.is_alive(), "the server stopped while starting (see the log above)"
        base_url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base_url, timeout=60) as client:
            users = client.get("/v1/analysis/correlations")
            assert users.status_code == 200, users.text
            yield Server(base_url, client, user_id=first_user(fit_dir))


def first_user(fit_dir: Path) -> str:
    """A user id of the fit (for the token form): the one with the most votes."""
    from service.pipeline.artifacts import load_fit

    users = load_fit(fit_dir).agreement
    return str(users.sort_values("n_battles", ascending=False)["user_id"].iloc[0])


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Chromium (named so as not to shadow pytest-playwright's ``browser``)."""
    executable = chromium_path()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def tab(chromium: Any) -> Iterator[Any]:
    """A fresh page (own context: no shared storage), the service's CSP in force."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


@contextmanager
def offline_tab(chromium: Any, server: Server) -> Iterator[tuple[Any, Offline]]:
    """A fresh page that can reach ``server`` only, and what it tried beyond it."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    offline = Offline(server.base_url)
    offline.watch(context)
    try:
        yield context.new_page(), offline
    finally:
        context.close()


def rows(page: Any, table: str) -> list[tuple[str, str]]:
    """(rank, model) of each body row of a table, as shown."""
    return [
        tuple(r)
        for r in page.eval_on_selector_all(
            f"{table} tbody tr",
            "rows => rows.map(r => [r.querySelector('.rank').textContent,"
            " r.querySelector('.model').textContent])",
        )
    ]


def shown_rank(model: dict[str, Any]) -> str:
    """The rank as the page shows it: the rank range ("1–4") where the row has one."""
    lower, upper = model.get("rank_lower"), model.get("rank_upper")
    if lower is None or upper is None:
        return str(model["rank"])
    return str(lower) if lower == upper else f"{lower}\u2013{upper}"


def rows_with_ratings(page: Any, table: str) -> list[tuple[str, str]]:
    """(model, rating) of each body row of a table, as shown."""
    return [
        tuple(r)
        for r in page.eval_on_selector_all(
            f"{table} tbody tr",
            "rows => rows.map(r => [r.querySelector('.model').textContent,"
            " r.querySelector('.rating').textContent])",
        )
    ]


def expected(models: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(shown_rank(m), m["model"]) for m in models]


def test_page_ranks_models_as_the_api_does(server: Server, tab: Any) -> None:
    errors = Errors()
    errors.watch(tab)
    tab.goto(f"{server.base_url}/")

    # everyone's leaderboard, as GET /v1/leaderboard has it
    tab.wait_for_function(
        "() => document.querySelectorAll('#aggregate-table tbody tr').length >= 5"
    )
    aggregate = server.client.get("/v1/leaderboard", params={"method": "bt"}).json()
    assert rows(tab, "#aggregate-table") == expected(aggregate["models"])

    # your leaderboard from three queries, as POST /v1/recommend has it
    tab.fill("#queries", "\n".join(QUERIES))
    tab.click("#recommend-button")
    tab.wait_for_selector("#your-table tbody tr")
    direct = server.client.post("/v1/recommend", json={"queries": QUERIES})
    assert direct.status_code == 200, direct.text
    answer = direct.json()
    assert rows(tab, "#your-table") == expected(answer["models"])
    assert answer["source"] in tab.inner_text("#your-source")
    spearman = NUMBER.search(tab.inner_text("#your-spearman"))
    assert spearman is not None, tab.inner_text("#your-spearman")
    assert float(spearman.group()) == pytest.approx(answer["spearman"], abs=0.006)
    assert tab.inner_text("#status").startswith("Ranked ")

    # the embed snippet names this origin; the histogram and the badge have loaded
    snippet = tab.inner_text("#embed-snippet")
    assert f'src="{server.base_url}/widget/leaderboard?top=5"' in snippet
    assert f'src="{server.base_url}/widget/badge.svg"' in snippet
    tab.wait_for_selector("#spearman-histogram rect.bar", state="attached")
    tab.wait_for_function("() => document.getElementById('badge-preview').naturalWidth > 0")

    tab.screenshot(path=str(artifacts_dir() / "web-page.png"), full_page=True)
    assert errors.messages == []


def test_page_answers_in_words_and_votes_the_suggested_battle(server: Server, tab: Any) -> None:
    """Queries in, the answer in words, the next battle voted on, and what it changed."""
    errors = Errors()
    errors.watch(tab)
    tab.goto(f"{server.base_url}/")
    tab.fill("#queries", "\n".join(QUERIES))
    tab.click("#recommend-button")
    tab.wait_for_selector("#your-answer:not([hidden])")
    before = server.client.post("/v1/recommend", json={"queries": QUERIES}).json()
    odds = sorted(before["models"], key=lambda m: -m["p_best"])
    answer = tab.inner_text("#your-answer")
    if odds[0]["p_best"] >= 1.5 * odds[1]["p_best"]:
        assert answer.startswith(f"For you: {odds[0]['model']} (")
        assert f"likely the best; {odds[1]['model']} " in answer
    else:
        assert answer.startswith("Nothing separates your top models yet (likely the best: ")
        assert all(m["model"] in answer for m in odds[:3])

    # why: the topics of the queries, and what moved the top models, as the API says
    why = before["explanation"]
    assert tab.is_visible("#your-why")
    assert tab.inner_text("#why-topics").startswith("Why: ")
    fitting = [t for t in why["topics"] if t.get("fits", True)]
    if fitting:
        name = fitting[0].get("name") or fitting[0]["label"]
        assert f"your queries are about {name}" in tab.inner_text("#why-topics")
    lines = tab.inner_text("#why-models").splitlines()
    assert [line.split(", rated ")[0] for line in lines] == [m["model"] for m in why["models"]]
    # everyone's rating, as the board beside shows it (same row, same rounding)
    shown = re.search(r"everyone's votes put it at (\d+)", lines[0])
    top = why["models"][0]["model"]
    board = dict(rows_with_ratings(tab, "#aggregate-table"))
    assert shown is not None and shown.group(1) == board[top]

    # the suggested battle is the one POST /v1/next-battle names
    tab.wait_for_selector("#next-battle:not([hidden])")
    pair = server.client.post("/v1/next-battle", json={"queries": QUERIES}).json()
    question = tab.inner_text("#next-battle-question")
    assert f"{pair['model_a']} or {pair['model_b']}?" in question
    assert tab.inner_text("#vote-b") == pair["model_b"]

    # a vote for model_b: the ranking with that vote, and what it changed, in words
    tab.click("#vote-b")
    tab.wait_for_selector("#your-change:not([hidden])")
    vote = {"model_a": pair["model_a"], "model_b": pair["model_b"], "winner": "model_b"}
    after = server.client.post("/v1/recommend", json={"queries": QUERIES, "votes": [vote]})
    assert after.status_code == 200, after.text
    assert after.json()["source"] == "blended"
    assert rows(tab, "#your-table") == expected(after.json()["models"])
    change = tab.inner_text("#your-change")
    assert change.startswith(f"Your vote for {pair['model_b']} over {pair['model_a']}: ")
    order = [m["model"] for m in before["models"]]
    now = [m["model"] for m in after.json()["models"]]
    b_from, b_to = order.index(pair["model_b"]) + 1, now.index(pair["model_b"]) + 1
    said = "stays" if b_from == b_to else "moves from"
    assert f"{pair['model_b']} {said} " in change
    assert "1 vote" in tab.inner_text("#your-source")
    # and the next suggestion, read off the ranking with the vote
    tab.wait_for_selector("#next-battle:not([hidden])")
    tab.locator("#yours").screenshot(path=str(artifacts_dir() / "web-page-vote.png"))
    assert errors.messages == []


def test_page_ranks_the_models_for_one_prompt(server: Server, tab: Any) -> None:
    """Queries and one prompt: the ranking of POST /v1/recommend for that prompt."""
    prompt = "Write a Python function that merges two sorted lists"
    tab.goto(f"{server.base_url}/")
    tab.fill("#queries", "\n".join(QUERIES))
    tab.fill("#prompt", prompt)
    tab.click("#recommend-button")
    tab.wait_for_function(
        "() => document.getElementById('your-source').textContent.includes('for your prompt')"
    )
    answer = server.client.post("/v1/recommend", json={"queries": QUERIES, "prompt": prompt})
    assert answer.status_code == 200, answer.text
    assert answer.json()["scope"] == "prompt"
    assert rows(tab, "#your-table") == expected(answer.json()["models"])
    label = answer.json()["prompt_topic"]["label"]
    assert f"for your prompt (read as: {label})" in tab.inner_text("#your-source")
    n = len(answer.json()["models"])
    assert tab.inner_text("#status") == f"Ranked {n} models for your prompt."


def test_agreement_is_measured_with_bt_and_shows_the_plain_figure(server: Server, tab: Any) -> None:
    """The agreement is Bradley-Terry's whatever the toggle (Elo's is near 1 by
    construction, issue 32), said so under Elo; shrunk figures have the plain beside."""
    tab.goto(f"{server.base_url}/")
    for method in ("bt", "elo"):
        if method == "elo":
            tab.click("label[for=method-elo]")
            tab.wait_for_selector("#agreement-elo", state="visible")
            assert "by construction" in tab.inner_text("#agreement-elo")
        else:
            assert tab.is_hidden("#agreement-elo")
        assert tab.inner_text("#agreement-method") == "Bradley-Terry"
        shrunk, plain = (
            server.client.get(
                "/v1/analysis/correlations", params={"method": "bt", "shrinkage": shrinkage}
            ).json()["summary"]
            for shrinkage in ("cv", "none")
        )
        mean = f"{shrunk['mean_spearman']:.2f} (plain {plain['mean_spearman']:.2f})"
        tab.wait_for_function(
            "text => document.getElementById('agreement-summary').textContent.includes(text)",
            arg=mean,
        )
        assert tab.is_visible("#agreement-why")
        assert "as the study did" in tab.inner_text("#agreement-why")


def test_page_lists_provisional_models_apart(shared_fit: Path, tmp_path: Path, tab: Any) -> None:
    """Models below the minimum of votes are named under the table, not ranked in it."""
    with serve(shared_fit, tmp_path, min_model_votes=200) as server:
        board = server.client.get("/v1/leaderboard").json()
        assert board["models"] and board["provisional"]  # the minimum splits the shared fit
        errors = Errors()
        errors.watch(tab)
        tab.goto(f"{server.base_url}/")
        tab.wait_for_selector("#aggregate-provisional", state="visible")
        assert rows(tab, "#aggregate-table") == expected(board["models"])
        note = tab.inner_text("#aggregate-provisional")
        assert note.startswith("Provisional, not ranked until they have 200 votes: ")
        for model in board["provisional"]:
            assert f"{model['model']} ({model['battles']})" in note
        assert errors.messages == []


def test_page_shows_api_errors_and_a_users_board(server: Server, tab: Any) -> None:
    tab.goto(f"{server.base_url}/")
    tab.wait_for_selector("#aggregate-table tbody tr")

    # nothing typed: said in the page, nothing sent
    tab.click("#recommend-button")
    assert "at least one query" in tab.inner_text("#status")
    assert tab.get_attribute("#status", "class") == "status error"

    # a wrong token: the API's 403 detail is shown
    tab.click("#token-box summary")
    tab.fill("#user-id", server.user_id)
    tab.fill("#token", "not-the-token")
    tab.click("#token-button")
    tab.wait_for_function("() => document.getElementById('status').textContent.includes('token')")
    refused = server.client.get(
        f"/v1/users/{server.user_id}/leaderboard", params={"token": "not-the-token"}
    )
    assert refused.status_code in (401, 403)
    assert refused.json()["detail"] in tab.inner_text("#status")

    # the right token: the user's own board, and the per-user embed snippet
    from service.live.tokens import user_token

    token = user_token(TOKEN_SECRET.encode(), server.user_id)
    tab.fill("#token", token)
    tab.click("#token-button")
    tab.wait_for_selector("#embed-user:not([hidden])")
    own = server.client.get(f"/v1/users/{server.user_id}/leaderboard", params={"token": token})
    assert own.status_code == 200, own.text
    assert rows(tab, "#your-table") == expected(own.json()["models"])
    assert own.json()["source"] in tab.inner_text("#your-source")
    # not remembered: the box was not ticked
    assert tab.evaluate("() => window.localStorage.getItem('plb.token')") is None

    # the user's own card and badge: a share link, never the token (issue 31)
    assert tab.is_hidden("#embed-user-snippet")
    tab.click("#share-button")
    tab.wait_for_selector("#embed-user-snippet:not([hidden])")
    snippet = tab.inner_text("#embed-snippet-user")
    assert token not in snippet and "token" not in snippet
    share_id = snippet.split("/widget/shared/")[1].split("?")[0]
    assert f"/widget/badge.svg?share={share_id}" in snippet
    shared = server.client.get(f"/v1/shared/{share_id}")
    assert shared.status_code == 200 and "n_battles" not in shared.json()
    tab.click("#revoke-share-button")
    tab.wait_for_selector("#embed-user-snippet[hidden]", state="attached")
    assert server.client.get(f"/v1/shared/{share_id}").status_code == 404

    # a new token: the old one refused, the page goes on with the new one
    tab.click("#rotate-token-button")
    tab.wait_for_function(
        "() => document.getElementById('status').textContent.includes('new token')"
    )
    new = tab.input_value("#token")
    assert new != token and new in tab.inner_text("#status")
    path = f"/v1/users/{server.user_id}/leaderboard"
    assert server.client.get(path, params={"token": token}).status_code == 403
    assert server.client.get(path, params={"token": new}).status_code == 200


def test_widget_shows_the_top_three(server: Server, tab: Any) -> None:
    errors = Errors()
    errors.watch(tab)
    tab.set_viewport_size({"width": 420, "height": 260})
    tab.goto(f"{server.base_url}/widget/leaderboard?top=3")
    tab.wait_for_selector("#widget-table tbody tr")
    aggregate = server.client.get("/v1/leaderboard", params={"method": "bt"}).json()
    assert rows(tab, "#widget-table") == expected(aggregate["models"][:3])
    assert tab.get_attribute("#widget-home", "href") == f"{server.base_url}/"
    tab.screenshot(path=str(artifacts_dir() / "widget.png"))
    assert errors.messages == []


@contextmanager
def host_page(html: str) -> Iterator[str]:
    """Serve ``html`` at ``/`` of another local origin (another site embedding ours)."""
    body = html.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=host.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{host.server_address[1]}/"
    finally:
        host.shutdown()
        host.server_close()


#: Whether a framed widget's content fits its frame: no scrollbar either way.
_FITS = (
    "() => { const e = document.documentElement;"
    " return e.scrollHeight <= e.clientHeight && e.scrollWidth <= e.clientWidth; }"
)


@pytest.mark.parametrize(("background", "theme"), [("#101418", "dark"), ("#fdfdfd", "light")])
def test_embedded_widget_fits_and_takes_the_hosts_colours(
    server: Server, tab: Any, background: str, theme: str
) -> None:
    """The page's snippet on another site: the card sized to its content, in its colours."""
    tab.goto(f"{server.base_url}/")
    snippet = tab.inner_text("#embed-snippet")
    assert "/widget/embed.js" in snippet and "data-plb-widget" in snippet
    host = f'<html><body style="background:{background}"><div>{snippet}</div></body></html>'
    with host_page(host) as url:
        tab.goto(url)
        tab.wait_for_function("() => document.querySelector('iframe').style.height !== ''")
        frame = tab.frame_locator("iframe")
        frame.locator(f"body.widget.{theme}").wait_for(state="attached")  # told by embed.js
        frame.locator("#widget-table tbody tr").nth(4).wait_for()
        widget = next(f for f in tab.frames if "/widget/" in f.url)
        widget.wait_for_function(_FITS)  # once embed.js has the card's height
        assert frame.locator("#widget-table tbody tr").count() == 5


def test_snippet_size_fits_a_top_five_card_without_embed_js(server: Server, tab: Any) -> None:
    """A host that runs no script of ours still gets a card with no scrollbar."""
    tab.goto(f"{server.base_url}/")
    iframe = tab.inner_text("#embed-snippet").splitlines()[0]
    assert 'width="360" height="300"' in iframe
    with host_page(f"<html><body>{iframe}</body></html>") as url:
        tab.goto(url)
        tab.frame_locator("iframe").locator("#widget-table tbody tr").nth(4).wait_for()
        widget = next(f for f in tab.frames if "/widget/" in f.url)
        assert widget.evaluate(_FITS)


def test_widget_shows_the_detail_of_an_error(server: Server, tab: Any) -> None:
    tab.goto(f"{server.base_url}/widget/shared/not-a-share-id")
    tab.wait_for_selector("#widget-error:not([hidden])")
    refused = server.client.get("/v1/shared/not-a-share-id")
    assert refused.status_code == 404
    assert refused.json()["detail"] in tab.inner_text("#widget-error")


def test_widget_of_a_share_id_shows_the_users_top_and_takes_no_token(
    server: Server, tab: Any, shared_fit: Path
) -> None:
    """A user's card is read with their share id; the old address with a token says so."""
    from service.live.tokens import user_token
    from service.pipeline.artifacts import load_fit

    users = load_fit(shared_fit).agreement
    user = next(str(u) for u in users["user_id"] if str(u) != server.user_id)  # not rotated
    token = user_token(TOKEN_SECRET.encode(), user)
    made = server.client.post(
        f"/v1/users/{user}/share", headers={"Authorization": f"Bearer {token}"}
    )
    assert made.status_code == 201, made.text
    tab.goto(f"{server.base_url}{made.json()['widget_url']}?top=3")
    tab.wait_for_selector("#widget-table tbody tr")
    shared = server.client.get(made.json()["board_url"]).json()
    assert rows(tab, "#widget-table") == expected(shared["models"][:3])
    assert tab.inner_text("#widget-title") == "Top models for you"
    tab.goto(f"{server.base_url}/widget/user/{server.user_id}?token=anything")
    tab.wait_for_selector("#widget-error:not([hidden])")
    assert "/widget/shared/{share_id}" in tab.inner_text("#widget-error")


# -- the notice of a simulated arena ---------------------------------------------------

NOTICE = (
    "This is a simulated arena: the models and users are made up. To rank real models, "
    "fit your own battle log: plb fit LOG --out DIR, then plb serve DIR."
)


def test_page_says_plainly_that_the_demo_arena_is_simulated(
    demo_server: Server, chromium: Any
) -> None:
    assert demo_server.client.get("/v1/about").json()["simulated"] is True
    with offline_tab(chromium, demo_server) as (tab, offline):
        errors = Errors()
        errors.watch(tab)
        tab.goto(f"{demo_server.base_url}/")
        notice = tab.wait_for_selector("#simulated-notice", state="visible")
        assert " ".join(notice.inner_text().split()) == NOTICE
        # at the top: above the page's title, as wide as the window
        box, title = notice.bounding_box(), tab.locator("h1").bounding_box()
        assert box is not None and title is not None
        assert box["y"] + box["height"] <= title["y"] and box["width"] >= 1200
        tab.wait_for_selector("#aggregate-table tbody tr")
        tab.screenshot(path=str(artifacts_dir() / "web-page-demo.png"))
        assert errors.messages == []
        assert offline.blocked == [] and offline.violations == []


def test_page_of_a_fit_without_truth_shows_no_notice(server: Server, chromium: Any) -> None:
    assert server.client.get("/v1/about").json()["simulated"] is False
    with offline_tab(chromium, server) as (tab, offline):
        with tab.expect_response(lambda response: response.url.endswith("/v1/about")):
            tab.goto(f"{server.base_url}/")
        tab.wait_for_selector("#aggregate-table tbody tr")
        assert tab.locator("#simulated-notice").is_hidden()
        assert "simulated arena" not in tab.inner_text("body")
        assert offline.blocked == [] and offline.violations == []


# -- the API docs, with no network -----------------------------------------------------


def test_offline_guard_stops_other_origins(server: Server, chromium: Any) -> None:
    with offline_tab(chromium, server) as (tab, offline):
        tab.goto(f"{server.base_url}/openapi.json")  # JSON: no CSP of ours in the way
        sent = tab.evaluate("fetch('https://cdn.example.org/x.js').then(() => 1, () => 0)")
        assert sent == 0 and offline.blocked == ["https://cdn.example.org/x.js"]


def test_swagger_ui_renders_offline(server: Server, chromium: Any) -> None:
    schema = server.client.get("/openapi.json").json()
    operations = sum(len(methods) for methods in schema["paths"].values())
    with offline_tab(chromium, server) as (tab, offline):
        errors = Errors()
        errors.watch(tab)
        tab.goto(f"{server.base_url}/docs")
        leaderboard = tab.locator('.opblock-summary-path[data-path="/v1/leaderboard"]')
        leaderboard.wait_for()
        assert tab.locator(".opblock").count() == operations
        assert tab.locator(".info .title").inner_text().startswith(schema["info"]["title"])

        # "Try it out" calls the API of this origin, under the page's CSP
        leaderboard.click()
        block = tab.locator("#operations-leaderboard-read_leaderboard_v1_leaderboard_get")
        block.locator("button.try-out__btn").click()
        block.locator("button.execute").click()
        status = block.locator(".live-responses-table tr.response .response-col_status")
        status.wait_for()
        assert status.inner_text().strip() == "200"

        tab.screenshot(path=str(artifacts_dir() / "docs.png"), full_page=True)
        assert offline.blocked == []
        assert offline.violations == []
        assert errors.messages == []


def test_redoc_renders_offline(server: Server, chromium: Any) -> None:
    with offline_tab(chromium, server) as (tab, offline):
        errors = Errors()
        errors.watch(tab)
        tab.goto(f"{server.base_url}/redoc")
        # the first of the leaderboard operations (JSON, then CSV and Parquet)
        tab.get_by_role("heading", name="Read Leaderboard").first.wait_for()
        # the search runs in ReDoc's worker (worker-src blob: of its policy)
        tab.get_by_label("Search").fill("correlations")
        found = tab.locator('[data-role="search:results"]')
        found.wait_for()
        assert "Read Correlations" in found.inner_text()
        tab.screenshot(path=str(artifacts_dir() / "redoc.png"))
        assert offline.blocked == []
        # ReDoc's only try beyond this origin: the Redocly logo, stopped by the CSP
        assert {v[1] for v in offline.violations} <= {"https://cdn.redoc.ly/redoc/logo-mini.svg"}
        assert {v[0] for v in offline.violations} <= {"img-src"}
        assert [m for m in errors.messages if "cdn.redoc.ly" not in m] == []
