"""Fixtures of the service tests: one small simulated arena, fitted once a run.

``plb fit`` with topics and the rating predictor takes tens of seconds, so every module
that serves a fit (the API, the replicas, the engine, the browser tests) shares
:func:`shared_fit`, built once for every xdist worker (:func:`tests.conftest.built_once`);
:func:`shared_fit_no_features` is the same log fitted without topics or predictor, for
the "not available" answers, and :func:`shared_fit_with_truth` the same fitted with the
simulation's truth, as ``plb serve --demo`` fits (a fit the service shows as simulated;
the other two are of simulated data too, but nothing in them says so). The helpers below
open a test service on them and check the SPEC shapes; the test modules import them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from service.api.app import create_app
from service.live.settings import Settings
from tests.conftest import built_once

#: Secrets of the test services (at least 16 characters, as the settings require).
INGEST_KEY = "ingest-key-0123456789abcdef"
ADMIN_KEY = "admin-key-0123456789abcdef"


@pytest.fixture(scope="session")
def shared_sim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``plb simulate``: 60 users, about 30 votes each (seed 1); the folder."""
    from service.cli import main

    def build(folder: Path) -> None:
        argv = ["simulate", "--out", str(folder), "--users", "60", "--battles-per-user", "30"]
        assert main([*argv, "--seed", "1"]) == 0

    return built_once(tmp_path_factory, "sim", build)


def _fitted(tmp_path_factory: pytest.TempPathFactory, name: str, argv: list[str]) -> Path:
    """``plb fit ARGV --out DIR``, run once for every worker (:func:`built_once`); DIR."""
    from service.cli import main

    def build(folder: Path) -> None:
        assert main([*argv, "--out", str(folder / "fit")]) == 0

    return built_once(tmp_path_factory, name, build) / "fit"


@pytest.fixture(scope="session")
def shared_fit(shared_sim: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``plb fit`` of :func:`shared_sim` with 4 topics and the rating predictor."""
    argv = ["fit", str(shared_sim / "battles.jsonl.gz"), "--n-topics", "4"]
    return _fitted(tmp_path_factory, "fit", argv)


@pytest.fixture(scope="session")
def shared_fit_no_features(shared_sim: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``plb fit --no-features`` of :func:`shared_sim`: no topics, no predictor."""
    argv = ["fit", str(shared_sim / "battles.jsonl.gz"), "--no-features"]
    return _fitted(tmp_path_factory, "fit-no-features", argv)


@pytest.fixture(scope="session")
def shared_fit_with_truth(shared_sim: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``plb fit --truth --no-features`` of :func:`shared_sim`: fitted as the demo fits
    (with the simulation's truth), so served as a simulated arena; no topics, no predictor."""
    argv = ["fit", str(shared_sim / "battles.jsonl.gz"), "--truth", str(shared_sim / "truth.json")]
    return _fitted(tmp_path_factory, "fit-with-truth", [*argv, "--no-features"])


def service_settings(fit_dir: Path, **overrides: Any) -> Settings:
    """Settings of a test service on ``fit_dir``: both keys, no periodic refit.

    ``overrides`` name the store (``store_path=`` or ``redis_url=``) and anything else;
    every field is given, so no ``PLB_*`` variable of the environment leaks in.
    """
    fields: dict[str, Any] = {
        "fit_dir": fit_dir,
        "redis_url": None,
        "ingest_key": SecretStr(INGEST_KEY),
        "admin_key": SecretStr(ADMIN_KEY),
        "token_secret": None,
        "refit_interval_s": 0,
        "refit_predictor": False,
        "cors_origins": [],
        "rate_limit_per_address": "off",  # tests/service/api/test_guards.py turns them on
        "rate_limit_per_key": "off",
        "established_days": 0,  # tests/service/pipeline/test_integrity.py turns the standing on
        **overrides,
    }
    return Settings(**fields)


#: A response of the TestClient (Starlette's client is ``httpx2``, not ``httpx``).
Response = Any


def _no_server_error(response: Response) -> None:
    """A 5xx is always a bug (docs/SPEC.md section 4): fail the request that got one."""
    if response.status_code >= 500:
        response.read()
        request = response.request
        raise AssertionError(
            f"{request.method} {request.url} answered {response.status_code}: {response.text}"
        )


@contextmanager
def open_client(settings: Settings, *, allow_5xx: bool = False) -> Iterator[TestClient]:
    """A TestClient of ``create_app(settings)``, lifespan run; any 5xx fails the test."""
    with TestClient(create_app(settings)) as client:
        if not allow_5xx:
            client.event_hooks = {"request": [], "response": [_no_server_error]}
        yield client


@pytest.fixture(params=["embedded", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """The settings naming one store: an embedded SQLite file, or the test Redis."""
    if request.param == "embedded":
        return {"store_path": tmp_path / "s.sqlite"}
    return {"redis_url": request.getfixturevalue("redis_url")}


@pytest.fixture
def client(shared_fit: Path, tmp_path: Path) -> Iterator[TestClient]:
    """The service on the shared fit (topics and predictor), an embedded store.

    A module that runs its tests on both stores defines its own ``client`` on
    :func:`store`.
    """
    with open_client(service_settings(shared_fit, store_path=tmp_path / "s.sqlite")) as c:
        yield c


@pytest.fixture
def client_no_features(shared_fit_no_features: Path, tmp_path: Path) -> Iterator[TestClient]:
    """The service on :func:`shared_fit_no_features` (no topics, no predictor), an embedded
    store."""
    settings = service_settings(shared_fit_no_features, store_path=tmp_path / "s.sqlite")
    with open_client(settings) as c:
        yield c


def bearer(key: str) -> dict[str, str]:
    """The Authorization header presenting ``key``."""
    return {"Authorization": f"Bearer {key}"}


#: The headers presenting the test services' ingest and admin keys.
INGEST = bearer(INGEST_KEY)
ADMIN = bearer(ADMIN_KEY)


def assert_error(response: Response, status: int, *words: str) -> str:
    """``response`` is the one error shape, ``{"detail": "..."}`` JSON (plus ``errors`` on a
    framework's 422), with ``status``, its detail naming every one of ``words``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) <= {"detail", "errors"} and isinstance(body["detail"], str), body
    detail = str(body["detail"])
    for word in words:
        assert word in detail, f"{word!r} is not in the detail {detail!r}"
    return detail


def read_as_owner(client: TestClient, path: str, token: str, other: str) -> dict[str, Any]:
    """The document of a user's route ``path``, the same to ``token`` (as ``?token=`` and
    as a bearer) and to the admin key; ``other`` (another user's token, either way) and
    the ingest key are refused with a 403, and so is the admin key as ``?token=`` (a key
    is taken from the Authorization header only)."""
    assert_error(client.get(path, params={"token": other}), 403, "does not belong")
    assert_error(client.get(path, params={"token": ADMIN_KEY}), 403, "does not belong")
    assert_error(client.get(path, headers=bearer(other)), 403)
    assert_error(client.get(path, headers=INGEST), 403)
    answers = [
        client.get(path, params={"token": token}),
        client.get(path, headers=bearer(token)),
        client.get(path, headers=ADMIN),
    ]
    for response in answers:
        assert response.status_code == 200, response.text
    document: dict[str, Any] = answers[0].json()
    assert answers[1].json() == document == answers[2].json()  # deterministic
    return document


LEADERBOARD_ROW = {"model", "rating", "lower", "upper", "rank", "battles", "wins", "losses", "ties"}


def check_leaderboard(document: dict[str, Any], method: str) -> None:
    """The SPEC leaderboard shape: best first (by rank, then rating), intervals around the
    point, SPEC ranks, each inside its row's rank range where the row has one."""
    assert document["method"] == method
    assert isinstance(document["n_battles"], int) and document["n_battles"] >= 0
    assert isinstance(document["version"], int) and document["version"] >= 1
    rows = document["models"]
    assert rows, "a leaderboard without models"
    order = [(m["rank"], -m["rating"]) for m in rows]
    assert order == sorted(order), "not sorted best first (by rank, then rating)"
    for row in rows:
        assert LEADERBOARD_ROW <= set(row), row
        assert row["lower"] <= row["rating"] <= row["upper"], row
        assert row["wins"] + row["losses"] + row["ties"] == row["battles"], row
        above = sum(other["lower"] > row["upper"] for other in rows)
        assert row["rank"] == 1 + above, (row, above)
        if "rank_lower" in row:
            assert row["rank_lower"] <= row["rank"] <= row["rank_upper"], row


# -- the app under uvicorn in a thread ---------------------------------------------------


@contextmanager
def uvicorn_in_thread(settings: Settings) -> Iterator[tuple[Any, threading.Thread, int]]:
    """The app of ``settings`` under uvicorn in a daemon thread, on a free port of 127.0.0.1.

    Yields the ``uvicorn.Server``, its thread and the port, bound before the server starts
    (no race with other tests); on leaving, the server is told to stop and the socket closed.
    """
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield server, thread, port
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


# -- plb serve as a real process -------------------------------------------------------

SERVE_TIMEOUT_S = 240.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """``plb serve ARGS --port FREE`` in a child process, its stderr in a file.

    The child sees no ``PLB_*`` variable of ours, only those in ``env``.
    """

    def __init__(
        self, args: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        environment = {k: v for k, v in os.environ.items() if not k.startswith("PLB_")}
        environment.update(env or {})
        command = [sys.executable, "-m", "service.cli", "serve", *args, "--port", str(self.port)]
        with open(log, "wb") as stderr:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + SERVE_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                pytest.fail(f"plb serve exited with {code}:\n{self.stderr()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        waited = f"did not answer /healthz in {SERVE_TIMEOUT_S} s"
        pytest.fail(f"plb serve {waited}:\n{self.stderr()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
