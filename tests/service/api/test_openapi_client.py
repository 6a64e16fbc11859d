"""A client generated from ``/openapi.json`` calls every route of the schema (issue 32).

``openapi-python-client`` (a test dependency; it runs offline) generates a Python client
from the schema of a live test service (uvicorn in a thread, on the shared fit), and the
test calls every operation the schema lists with it: each answer must be parsed by the
generated code into what the schema declares (a JSON document into its model, CSV into
text, Parquet and the SVG badge into bytes), errors into the one error shape
(``ErrorPublic``). A route added to the schema without a call here fails the test, and so
does a route answering a media type or a status its declaration does not list (the client
raises on an undeclared status; parsing JSON as CSV, or CSV as JSON, raises too).

The generator's own configuration maps the two media types it has no reader for
(``application/vnd.apache.parquet``, ``image/svg+xml``) to bytes: its documented
``content_type_overrides``, what any user of the generator would write.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from service.pipeline.artifacts import load_fit
from tests.service.conftest import (
    ADMIN_KEY,
    INGEST_KEY,
    service_settings,
    uvicorn_in_thread,
)

pytestmark = pytest.mark.slow

PACKAGE = "personal_leaderboard_client"
CONFIG = """\
post_hooks: []
content_type_overrides:
  application/vnd.apache.parquet: application/octet-stream
  image/svg+xml: application/octet-stream
"""


@pytest.fixture(scope="module")
def service(
    shared_fit: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A live service on the shared fit: its base URL and its ``/openapi.json``."""
    store = tmp_path_factory.mktemp("client-store") / "s.sqlite"
    with uvicorn_in_thread(service_settings(shared_fit, store_path=store)) as (
        server,
        thread,
        port,
    ):
        deadline = time.monotonic() + 120  # the lifespan loads the fit first
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.started, "the server did not start"
        base_url = f"http://127.0.0.1:{port}"
        schema = httpx.get(f"{base_url}/openapi.json", timeout=30).json()
        yield base_url, schema


@pytest.fixture(scope="module")
def generated(
    service: tuple[str, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModuleType]:
    """The client package ``openapi-python-client`` generates from the live schema."""
    _, schema = service
    root = tmp_path_factory.mktemp("client")
    (root / "openapi.json").write_text(json.dumps(schema), encoding="utf-8")
    (root / "config.yaml").write_text(CONFIG, encoding="utf-8")
    command = [sys.executable, "-m", "openapi_python_client", "generate"]
    command += ["--path", "openapi.json", "--config", "config.yaml", "--meta", "none"]
    run = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def _operations(schema: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Every operation of the schema: its module (``api.TAG.NAME``) by operation id."""
    found = {}
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            tag = operation["tags"][0].replace("-", "_").replace(" ", "_").lower()
            found[operation["operationId"]] = (f"{PACKAGE}.api.{tag}", method.upper() + " " + path)
    return found


class Calls:
    """Calls the generated operations by operation id, noting which were called."""

    def __init__(self, client_module: ModuleType, base_url: str, schema: dict[str, Any]):
        self.package = client_module
        self.base_url = base_url
        self.operations = _operations(schema)
        self.called: set[str] = set()

    def client(self, token: str | None = None) -> Any:
        if token is None:
            return self.package.Client(base_url=self.base_url, raise_on_unexpected_status=True)
        return self.package.AuthenticatedClient(
            base_url=self.base_url, token=token, raise_on_unexpected_status=True
        )

    def __call__(self, operation_id: str, token: str | None = None, **kwargs: Any) -> Any:
        """The generated ``sync_detailed`` of ``operation_id``: status, headers, parsed."""
        package, _ = self.operations[operation_id]
        name = _module_name(operation_id)
        module = importlib.import_module(f"{package}.{name}")
        self.called.add(operation_id)
        response = module.sync_detailed(client=self.client(token), **kwargs)
        return response

    def model(self, name: str) -> Any:
        return getattr(importlib.import_module(f"{PACKAGE}.models"), name)


def _module_name(operation_id: str) -> str:
    """The generator's module name of an operation id (its snake case, ``__`` as ``_``)."""
    name = operation_id
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _csv_models(text: str) -> list[str]:
    rows = list(csv.DictReader(io.StringIO(text)))
    return [row["model"] for row in rows if row.get("provisional", "false") == "false"]


def _file_bytes(parsed: Any) -> bytes:
    """The bytes of a body the generated client read as a file (its ``File``)."""
    assert type(parsed).__name__ == "File", parsed
    content: bytes = parsed.payload.read()
    return content


def _parquet_models(parsed: Any) -> list[str]:
    table = pq.read_table(io.BytesIO(_file_bytes(parsed)))
    models: list[str] = table.column("model").to_pylist()
    if "provisional" in table.column_names:
        flags = table.column("provisional").to_pylist()
        return [m for m, provisional in zip(models, flags, strict=True) if not provisional]
    return models


def test_a_generated_client_calls_every_route(
    generated: ModuleType, service: tuple[str, dict[str, Any]], shared_fit: Path
) -> None:
    base_url, schema = service
    call = Calls(generated, base_url, schema)
    battles = load_fit(shared_fit).read_battles()
    assert battles is not None
    user = str(battles["user_id"].value_counts().index[0])
    pair = battles.iloc[0]

    def ok(response: Any, status: int = 200) -> Any:
        assert response.status_code == status, (response.status_code, response.content[:300])
        assert response.parsed is not None, response.content[:300]
        return response.parsed

    # the aggregate board in its three forms: the same models, best first
    board = ok(call("read_leaderboard_v1_leaderboard_get"))
    ranked = [row.model for row in board.models]
    assert ranked and board.method == "bt"
    elo_method = call.model("ReadLeaderboardV1LeaderboardGetMethod")("elo")
    elo = ok(call("read_leaderboard_v1_leaderboard_get", method=elo_method))
    assert elo.method == "elo"
    as_csv = ok(call("read_leaderboard_csv_v1_leaderboard_csv_get"))
    assert isinstance(as_csv, str) and _csv_models(as_csv) == ranked
    as_parquet = ok(call("read_leaderboard_parquet_v1_leaderboard_parquet_get"))
    assert _parquet_models(as_parquet) == ranked
    # an error is parsed into the one error shape, its detail a sentence
    refused = call("read_leaderboard_csv_v1_leaderboard_csv_get", where=["user_id=x"])
    assert refused.status_code == 422
    assert isinstance(refused.parsed.detail, str) and "user_id" in refused.parsed.detail
    # the board of a time window, and the rating history by period
    window = ok(call("read_leaderboard_v1_leaderboard_get", since="2024-06-01"))
    assert window.window.since <= "2024-06-01" and window.n_battles < board.n_battles
    history = ok(call("read_history_v1_leaderboard_history_get"))
    assert history.periods and history.periods[0].board.models

    # a user's token, their board in three forms, their next battle; then a new token
    token = ok(call("read_token_v1_admin_users__user_id__token_get", ADMIN_KEY, user_id=user))
    token = token.token
    mine = ok(call("read_user_leaderboard_v1_users__user_id__leaderboard_get", token, user_id=user))
    my_models = [row.model for row in mine.models]
    mine_csv = ok(
        call(
            "read_user_leaderboard_csv_v1_users__user_id__leaderboard_csv_get", token, user_id=user
        )
    )
    assert _csv_models(mine_csv) == my_models
    mine_parquet = ok(
        call(
            "read_user_leaderboard_parquet_v1_users__user_id__leaderboard_parquet_get",
            token,
            user_id=user,
        )
    )
    assert _parquet_models(mine_parquet) == my_models
    nobody = call(
        "read_user_leaderboard_v1_users__user_id__leaderboard_get", ADMIN_KEY, user_id="nobody-x"
    )
    assert nobody.status_code == 404 and "nobody-x" in nobody.parsed.detail
    battle = ok(
        call("read_user_next_battle_v1_users__user_id__next_battle_get", token, user_id=user)
    )
    assert battle.model_a != battle.model_b

    share = ok(call("create_share_v1_users__user_id__share_post", token, user_id=user), 201)
    shared = ok(call("read_shared_v1_shared__share_id__get", share_id=share.share_id))
    assert [row.model for row in shared.models] == my_models
    badge = ok(call("badge_widget_badge_svg_get", share=share.share_id))
    assert isinstance(badge, bytes) and badge.startswith(b"<svg")  # a string, read as bytes
    revoked = ok(call("revoke_share_v1_users__user_id__share_delete", token, user_id=user))
    assert revoked.revoked is True
    rotated = ok(call("rotate_token_v1_users__user_id__token_post", token, user_id=user))
    assert rotated.token != token

    # anyone: recommend and its next battle, the catalogue, the analysis, health, metrics
    body = {"queries": ["How do I reverse a linked list in Rust?", "Explain p-values simply"]}
    recommended = ok(
        call("recommend_v1_recommend_post", body=call.model("RecommendIn").from_dict(body))
    )
    assert recommended.models
    suggested = ok(
        call("next_battle_v1_next_battle_post", body=call.model("RecommendIn").from_dict(body))
    )
    assert suggested.model_a != suggested.model_b
    models = ok(call("read_models_v1_models_get"))
    assert {m.model for m in models.models} >= set(ranked)
    assert ok(call("read_topics_v1_topics_get")).topics
    assert ok(call("read_correlations_v1_analysis_correlations_get")).summary.users > 0
    assert ok(call("read_about_v1_about_get")).version >= 1
    assert ok(call("health_healthz_get")).status == "ok"
    metrics = ok(call("prometheus_metrics_metrics_get"))
    assert isinstance(metrics, str) and "plb_requests_total" in metrics

    # the keys: ingest a vote, register a model, the integrity screen, a refit
    vote = {
        "battle_id": "client-vote-1",
        "model_a": str(pair["model_a"]),
        "model_b": str(pair["model_b"]),
        "winner": "model_a",
        "user_id": user,
    }
    ingest_body = call.model("BattlesIn").from_dict({"battles": [vote]})
    ingested = ok(call("ingest_battles_v1_battles_post", INGEST_KEY, body=ingest_body))
    assert ingested.accepted == 1
    models_body = call.model("ModelsIn").from_dict({"models": ["client-model-1"]})
    added = ok(call("register_models_v1_admin_models_post", ADMIN_KEY, body=models_body))
    assert added.added == ["client-model-1"]
    assert ok(call("integrity_v1_admin_integrity_get", ADMIN_KEY)).n_votes >= 1
    assert ok(call("refit_v1_admin_refit_post", ADMIN_KEY)).version >= 1

    missing = set(call.operations) - call.called
    assert not missing, f"operations of the schema not called: {sorted(missing)}"
