"""What the service gives away, as an outside attacker found it on ``plb serve --demo``
(issue 31): the package's Python source under ``/static``, the Redis address in a 503, and
the page's address (with its ``?token=``) in the ``Referer`` header of outgoing requests.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from service.api.exposure import WEB_ASSET_SUFFIXES
from service.web import DOCS_ASSETS_DIR, WEB_DIR
from tests.redis_server import RedisServer
from tests.service.conftest import ADMIN, assert_error, open_client, service_settings

#: Every page and widget address, and every file of theirs the app serves.
PAGES = ["/", "/docs", "/redoc", "/widget/leaderboard", "/widget/user/someone"]
WEB_FILES = sorted(p.name for p in WEB_DIR.iterdir() if p.suffix in WEB_ASSET_SUFFIXES)


def test_static_serves_web_assets_only(client: TestClient) -> None:
    assert {"app.js", "style.css", "widget.js", "favicon.svg", "index.html"} <= set(WEB_FILES)
    for name in WEB_FILES:
        assert client.get(f"/static/{name}").status_code == 200, name
    for path in PAGES + ["/widget/embed.js"]:
        assert client.get(path).status_code == 200, path
    for asset in DOCS_ASSETS_DIR.iterdir():
        assert client.get(f"/docs/assets/{asset.name}").status_code == 200, asset.name

    source = client.get("/static/__init__.py")
    assert_error(source, 404, "Not Found")
    assert "import" not in source.text
    (compiled,) = {p.name for p in (WEB_DIR / "__pycache__").glob("__init__.*.pyc")} or {""}
    refused = [
        "/static/__init__.PY",
        "/static/__pycache__/",
        "/static/__pycache__",
        "/static/no-such.js",
        "/docs/assets/__init__.py",
        "/docs/assets/../__init__.py",
    ]
    if compiled:
        refused.append(f"/static/__pycache__/{compiled}")
    for path in refused:
        assert client.get(path).status_code == 404, path


def test_every_response_sends_no_referrer(client: TestClient) -> None:
    answers = {path: client.get(path) for path in PAGES}
    answers |= {
        "/static/app.js": client.get("/static/app.js"),
        "/widget/embed.js": client.get("/widget/embed.js"),
        "/widget/badge.svg": client.get("/widget/badge.svg"),
        "/v1/leaderboard": client.get("/v1/leaderboard"),
        "404": client.get("/static/__init__.py"),
        "401": client.get("/v1/users/someone/leaderboard"),
        "admin": client.get("/v1/users/nobody-at-all/leaderboard", headers=ADMIN),
    }
    for path, response in answers.items():
        assert response.headers.get("referrer-policy") == "no-referrer", path
        assert len(response.headers.get_list("referrer-policy")) == 1, path


def test_a_503_names_no_store_and_the_log_keeps_why(
    shared_fit_no_features: Path,
    redis_server: RedisServer,
    redis_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    address = urlsplit(redis_url).netloc  # 127.0.0.1:PORT
    settings = service_settings(shared_fit_no_features, redis_url=redis_url, version_poll_s=0)
    with open_client(settings, allow_5xx=True) as client:
        assert client.get("/healthz").status_code == 200
        redis_server.stop()
        try:
            with caplog.at_level(logging.WARNING, logger="service.api.app"):
                for response in (
                    client.get("/healthz"),
                    client.get("/v1/leaderboard", params={"method": "elo"}),
                ):
                    detail = assert_error(response, 503)
                    assert detail == "the store is unavailable"
                    assert address not in response.text and "Redis" not in response.text
        finally:
            redis_server.start()
        logged = [r.getMessage() for r in caplog.records if r.name == "service.api.app"]
        assert logged and all("store unavailable" in line for line in logged), logged
        assert any("Redis" in line for line in logged), logged  # the detail stays in the log
