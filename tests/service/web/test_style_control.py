"""The web page's board with the answers' style held equal (service/web/app.js), in a real
headless Chromium: shown beside the raw board when the fit has one, absent otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.cli import main
from tests.service.web.test_browser import Errors, Server, chromium, rows, serve, tab
from tests.style_arena import write_length_log

__all__ = ["chromium", "tab"]  # the browser fixtures, shared with test_browser


@pytest.fixture(scope="module")
def style_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The real app on a fit of the arena where ``long`` wins by length alone."""
    folder = tmp_path_factory.mktemp("style-web")
    log = write_length_log(folder / "votes.jsonl", n=900)
    assert main(["-q", "fit", str(log), "--out", str(folder / "fit"), "--no-features"]) == 0
    with serve(folder / "fit", folder) as running:
        yield running


def test_the_page_shows_the_controlled_board_beside_the_raw_one(
    style_server: Server, tab: Any
) -> None:
    errors = Errors()
    errors.watch(tab)
    tab.goto(f"{style_server.base_url}/")
    tab.wait_for_selector("#style-control:not([hidden])")
    tab.wait_for_function("() => document.querySelectorAll('#style-table tbody tr').length === 3")
    raw = rows(tab, "#aggregate-table")
    assert raw[0][1] == "long"
    controlled = style_server.client.get("/v1/leaderboard?style=control").json()
    shown = [model.split(" · ")[0] for _, model in rows(tab, "#style-table")]
    assert shown == [m["model"] for m in controlled["models"]]
    assert shown[0] != "long"
    words = tab.inner_text("#style-coefficients")
    assert "length: +" in words and "points per doubling of the length" in words
    assert "raw rank" in tab.inner_text("#style-table")
    assert tab.inner_text("#style-moves").startswith("Moved most from the raw board: long ")
    assert errors.messages == []


def test_the_page_stays_as_it_was_without_answers(
    shared_fit_no_features: Path, tmp_path: Path, tab: Any
) -> None:
    with serve(shared_fit_no_features, tmp_path) as server:
        errors = Errors()
        errors.watch(tab)
        tab.goto(f"{server.base_url}/")
        tab.wait_for_function(
            "() => document.querySelectorAll('#aggregate-table tbody tr').length >= 3"
        )
        assert server.client.get("/v1/about").json()["style_control"] is False
        assert tab.is_hidden("#style-control")
        assert errors.messages == []
