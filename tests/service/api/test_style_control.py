"""``GET /v1/leaderboard?style=control``: the fit's board with the answers' style held equal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.api.schemas import PublicBoardPublic
from service.cli import main
from tests.service.conftest import assert_error, open_client, service_settings
from tests.style_arena import write_length_log


@pytest.fixture(scope="module")
def style_fit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``plb fit --no-features`` of the arena where ``long`` wins by length alone."""
    folder = tmp_path_factory.mktemp("style-fit")
    log = write_length_log(folder / "votes.jsonl", n=900)
    assert main(["-q", "fit", str(log), "--out", str(folder / "fit"), "--no-features"]) == 0
    return folder / "fit"


@pytest.fixture
def style_client(style_fit: Path, tmp_path: Path) -> Iterator[TestClient]:
    with open_client(service_settings(style_fit, store_path=tmp_path / "s.sqlite")) as c:
        yield c


def test_the_controlled_board_beside_the_raw_one(style_client: TestClient) -> None:
    raw = style_client.get("/v1/leaderboard?style=raw").json()
    assert raw["models"][0]["model"] == "long"
    assert "style_control" not in raw
    response = style_client.get("/v1/leaderboard", params={"style": "control"})
    assert response.status_code == 200
    document = response.json()
    PublicBoardPublic.model_validate(document)
    rows = {r["model"]: r for r in document["models"]}
    assert document["models"][0]["model"] != "long"
    # the three are equally strong: every interval holds the truth, 1000
    assert all(r["lower"] <= 1000.0 <= r["upper"] for r in rows.values())
    assert sum(r["p_best"] for r in rows.values()) == pytest.approx(1.0, abs=1e-3)
    style = document["style_control"]
    assert [c["feature"] for c in style["coefficients"]][0] == "length"
    assert style["coefficients"][0]["lower"] > 0
    assert style["raw"][0]["model"] == "long"
    assert document["version"] == raw["version"]
    assert document["min_votes"] >= 0 and document["provisional"] == []


def test_the_controlled_board_as_a_file(style_client: TestClient) -> None:
    response = style_client.get("/v1/leaderboard?style=control&format=csv")
    assert response.status_code == 200
    assert response.text.splitlines()[0].startswith("model,")
    assert len(response.text.splitlines()) == 4


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("style=bogus", ("style", "bogus")),
        ("style=control&method=elo", ("style", "elo")),
        ("style=control&where=lang%3Den", ("style", "where")),
        ("style=control&since=2024-01-01", ("style", "since")),
    ],
)
def test_what_cannot_be_answered_is_a_422(
    style_client: TestClient, query: str, words: tuple[str, ...]
) -> None:
    assert_error(style_client.get(f"/v1/leaderboard?{query}"), 422, *words)


def test_a_fit_without_answers_says_so(client_no_features: TestClient) -> None:
    response = client_no_features.get("/v1/leaderboard?style=control")
    assert_error(response, 422, "style", "no style-controlled board", "answer_a")
    assert client_no_features.get("/v1/leaderboard?style=raw").status_code == 200


def test_openapi_lists_the_parameter(style_client: TestClient) -> None:
    spec = style_client.get("/openapi.json").json()
    parameters = spec["paths"]["/v1/leaderboard"]["get"]["parameters"]
    style = next(p for p in parameters if p["name"] == "style")
    assert style["schema"]["enum"] == ["raw", "control"]


def test_about_says_whether_there_is_one(
    style_client: TestClient, client_no_features: TestClient
) -> None:
    assert style_client.get("/v1/about").json()["style_control"] is True
    assert client_no_features.get("/v1/about").json()["style_control"] is False


def test_the_file_routes_take_it_too(style_client: TestClient) -> None:
    response = style_client.get("/v1/leaderboard.csv?style=control")
    assert response.status_code == 200
    controlled = style_client.get("/v1/leaderboard?style=control").json()
    first = response.text.splitlines()[1].split(",")[0]
    assert first == controlled["models"][0]["model"]
    assert_error(style_client.get("/v1/leaderboard.parquet?style=other"), 422, "style")
