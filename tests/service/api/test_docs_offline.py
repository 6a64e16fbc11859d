"""``/redoc`` and ``/report`` in headless Chromium: nothing asked of another site (issue 32).

ReDoc drew the Redocly logo from ``cdn.redoc.ly``; the page's policy blocked it, and
Chromium logged a policy error on every visit. The service now answers ReDoc's bundle
with that address replaced (:mod:`service.api.routes.docs_assets`). Each page here is
opened in a browser context that can reach the test server only: every request to
another origin is aborted and listed, every Content-Security-Policy violation the page
reports is listed, and so is every console error; all three must stay empty.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.pipeline.artifacts import load_fit
from service.report.document import build_report
from tests.service.conftest import service_settings, uvicorn_in_thread

pytestmark = pytest.mark.slow

sync_api = pytest.importorskip("playwright.sync_api")

#: Reports each CSP violation of a document to the test (through an exposed binding).
_CSP_LISTENER = """
document.addEventListener('securitypolicyviolation', (event) => {
  window.plbViolation([event.effectiveDirective, event.blockedURI]);
});
"""


@dataclass
class Watched:
    """What the pages of one browser context did beyond the test server."""

    origin: str
    blocked: list[str] = field(default_factory=list)
    violations: list[tuple[str, str]] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def route(self, route: Any) -> None:
        url = route.request.url
        if url == self.origin or url.startswith(self.origin + "/"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("internetdisconnected")

    def on_console(self, message: Any) -> None:
        if message.type == "error":
            self.console.append(message.text)


@pytest.fixture(scope="module")
def base_url(shared_fit: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A live service on a copy of the shared fit holding its report."""
    root = tmp_path_factory.mktemp("docs-offline")
    fit_dir = root / "fit"
    shutil.copytree(shared_fit, fit_dir)
    (fit_dir / "report.html").write_text(build_report(load_fit(fit_dir)).html, encoding="utf-8")
    settings = service_settings(fit_dir, store_path=root / "s.sqlite")
    with uvicorn_in_thread(settings) as (server, thread, port):
        deadline = time.monotonic() + 120
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.started, "the server did not start"
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Chromium: the system's (a skip where there is none, a failure on CI)."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("no chromium binary")
        pytest.skip("no chromium binary")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def _open(chromium: Any, base_url: str, path: str) -> tuple[Any, Any, Watched]:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    watched = Watched(base_url)
    context.route("**/*", watched.route)
    context.expose_function("plbViolation", lambda v: watched.violations.append(tuple(v)))
    context.add_init_script(_CSP_LISTENER)
    page = context.new_page()
    page.on("console", watched.on_console)
    page.on("pageerror", lambda error: watched.console.append(f"uncaught: {error}"))
    page.goto(f"{base_url}{path}")
    return context, page, watched


def test_redoc_asks_nothing_of_another_site(chromium: Any, base_url: str) -> None:
    context, page, watched = _open(chromium, base_url, "/redoc")
    try:
        page.get_by_role("heading", name="Read Leaderboard").wait_for()
        # the menu's footer, where the logo was drawn from the CDN
        page.get_by_text("API docs by Redocly").wait_for()
        page.wait_for_load_state("networkidle")
        assert watched.blocked == []
        assert watched.violations == []
        assert watched.console == []
    finally:
        context.close()


def test_the_report_renders_under_its_policy(chromium: Any, base_url: str) -> None:
    context, page, watched = _open(chromium, base_url, "/report")
    try:
        page.locator("h1").first.wait_for()
        assert page.locator("svg").count() > 0  # the inline figures are drawn
        page.wait_for_load_state("networkidle")
        assert watched.blocked == []
        assert watched.violations == []
        assert watched.console == []
    finally:
        context.close()
