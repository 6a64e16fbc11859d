"""``plb serve`` and ``plb refit``: usage errors, a live server, and the README's demo.

The demo test runs the README's main command, ``plb serve --demo``, as a real process
(simulate, fit, serve), then starts it again on the same folder.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.cli import main, progress
from service.cli import serve as serve_module
from tests.service.conftest import (
    ADMIN_KEY,
    INGEST_KEY,
    ServeProcess,
    service_settings,
    uvicorn_in_thread,
)


@pytest.fixture(autouse=True)
def no_plb_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No ``PLB_*`` variable of the caller's environment; a store file of the test's own."""
    for name in list(os.environ):
        if name.startswith("PLB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PLB_STORE_PATH", str(tmp_path / "store.sqlite"))


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err


def test_serve_needs_a_fit_dir_or_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"]) == 2
    assert "either a fit directory DIR or --demo" in one_line_error(capsys)
    assert main(["serve", "some-dir", "--demo"]) == 2
    assert "either" in one_line_error(capsys)


def test_serve_a_missing_fit_dir(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "/nonexistent/fit"]) == 2
    assert "/nonexistent/fit" in one_line_error(capsys)


def test_serve_a_short_ingest_key(
    shared_fit_no_features: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PLB_INGEST_KEY", "too-short")
    assert main(["serve", str(shared_fit_no_features)]) == 2
    error = one_line_error(capsys)
    assert "PLB_INGEST_KEY" in error and "16" in error
    assert "too-short" not in error


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["some-fit", "--port", "70000"], ["--port", "65535", "not 70000"]),
        (["some-fit", "--port", "-1"], ["--port", "not -1"]),
        (["--demo", "--users", "0"], ["--users", "not 0"]),
    ],
)
def test_serve_checks_its_options_before_anything_else(
    argv: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 2
    error = one_line_error(capsys)
    assert all(word in error for word in words), error


def test_a_demo_folder_that_is_a_file_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "demo").write_text("")
    assert main(["serve", "--demo", "--demo-dir", str(tmp_path / "demo")]) == 2
    assert "--demo-dir" in one_line_error(capsys)


@contextmanager
def port_in_use(listening: bool) -> Iterator[int]:
    """A port of 127.0.0.1 held by a socket of the test: listening, or only bound."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        if listening:
            holder.listen()
        yield int(holder.getsockname()[1])


@pytest.mark.parametrize("listening", [True, False], ids=["listening", "bound"])
def test_a_port_in_use_is_one_line_naming_host_and_port(
    listening: bool, shared_fit_no_features: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with port_in_use(listening) as port:
        assert main(["serve", str(shared_fit_no_features), "--port", str(port)]) == 2
    error = one_line_error(capsys)
    assert error.startswith(f"plb serve: error: port {port} on 127.0.0.1 is already in use")
    assert f"--port {port + 1}" in error and "http://" not in error


def test_the_demo_checks_its_port_before_it_simulates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo_dir = tmp_path / "demo"
    with port_in_use(True) as port:
        assert main(["serve", "--demo", "--demo-dir", str(demo_dir), "--port", str(port)]) == 2
    assert f"port {port} on 127.0.0.1 is already in use" in one_line_error(capsys)
    assert not demo_dir.exists()  # nothing simulated, fitted or written


def test_the_url_comes_once_the_port_listens(shared_fit_no_features: Path, tmp_path: Path) -> None:
    server = ServeProcess(
        [str(shared_fit_no_features)],
        tmp_path,
        tmp_path / "serve.log",
        env={"PLB_STORE_PATH": str(tmp_path / "store.sqlite")},
    )
    try:
        server.wait_healthy()
        announced = [
            line for line in server.stderr().splitlines() if line.startswith("plb serve: http")
        ]
        assert announced == [f"plb serve: {server.url}/  (API docs at /docs)"]
    finally:
        server.stop()


def test_the_demo_says_its_arena_is_simulated_and_how_to_serve_real_logs(
    shared_fit: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PLB_INGEST_KEY", INGEST_KEY)  # set here, so none leaks from the demo
    monkeypatch.setenv("PLB_ADMIN_KEY", ADMIN_KEY)
    monkeypatch.setattr(serve_module, "_demo_fit", lambda args: shared_fit)
    served: list[tuple[int, int]] = []

    def serve(app: object, sock: socket.socket) -> None:  # instead of uvicorn
        listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        served.append((int(sock.getsockname()[1]), listening))

    monkeypatch.setattr(serve_module, "serve", serve)
    monkeypatch.setattr(serve_module, "_configure_logging", lambda: None)  # keep the loggers
    (tmp_path / "demo").mkdir()
    assert main(["serve", "--demo", "--demo-dir", str(tmp_path / "demo"), "--port", "0"]) == 0
    [(port, listening)] = served
    assert listening == 1 and port > 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == f"plb serve: http://127.0.0.1:{port}/  (API docs at /docs)"
    notice = "\n".join(lines[-3:-1])
    assert "this arena is SIMULATED: 15 made-up models (" in notice
    assert "and 60 simulated users" in notice
    assert "to serve real battle logs instead: plb fit YOUR_LOG --out DIR, then plb serve DIR" in (
        notice
    )


def record_demo_steps(monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, bool]]) -> None:
    """Record the demo's steps (name, and whether the run is quiet) instead of running them."""
    for name, function in (
        ("simulate", "_demo_simulate"),
        ("fit", "_demo_pipeline"),
        ("report", "_demo_report"),
    ):

        def step(*args: Any, _name: str = name) -> None:
            steps.append((_name, progress.quiet()))

        monkeypatch.setattr(serve_module, function, step)


@pytest.mark.parametrize("quiet", [False, True])
def test_the_demo_steps_are_counted_and_quiet_is_passed_on(
    quiet: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    steps: list[tuple[str, bool]] = []
    record_demo_steps(monkeypatch, steps)
    progress.configure(quiet=quiet)
    try:
        serve_module._demo_fit(argparse.Namespace(demo_dir=str(tmp_path / "demo"), users=20))
    finally:
        progress.configure(quiet=False)
    commands = [name for name, _ in steps]
    assert commands == ["simulate", "fit", "report"]
    assert all(step_quiet == quiet for _, step_quiet in steps)
    err = capsys.readouterr().err
    if quiet:
        assert err == ""
    else:
        assert "[1/3] plb simulate" in err and "[3/3] plb report" in err
        assert "made-up users and models" in err


# -- plb refit against a live server -------------------------------------------------------


@pytest.fixture
def live_server(shared_fit_no_features: Path, tmp_path: Path) -> Iterator[str]:
    """The app under uvicorn in a thread, on a free port of 127.0.0.1; its URL."""
    settings = service_settings(shared_fit_no_features, store_path=tmp_path / "live.sqlite")
    with uvicorn_in_thread(settings) as (server, thread, port):
        deadline = time.monotonic() + 60
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.started, "the server did not start"
        yield f"http://127.0.0.1:{port}"


def test_refit_publishes_a_version(
    live_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["refit", "--url", live_server]) == 2
    assert "PLB_ADMIN_KEY" in one_line_error(capsys)

    monkeypatch.setenv("PLB_ADMIN_KEY", "not-the-admin-key-0123")
    assert main(["refit", "--url", live_server]) == 2
    assert "answered 403" in one_line_error(capsys)

    monkeypatch.setenv("PLB_ADMIN_KEY", ADMIN_KEY)
    assert main(["refit", "--url", live_server, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": 2}
    assert main(["refit", "--url", live_server]) == 0
    assert "published model version 3" in capsys.readouterr().out
    assert httpx.get(f"{live_server}/healthz").json() == {"status": "ok", "version": 3}


def test_models_add_registers_models_for_votes(
    live_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vote = {"model_a": "helios-9", "model_b": "pico-3b", "winner": "model_a"}
    ingest = {"Authorization": f"Bearer {INGEST_KEY}"}
    refused = httpx.post(f"{live_server}/v1/battles", json={"battles": [vote]}, headers=ingest)
    assert refused.json()["accepted"] == 0
    assert "'helios-9'" in refused.json()["rejected"][0]["error"]

    assert main(["models", "add", "helios-9", "--url", live_server]) == 2
    assert "PLB_ADMIN_KEY" in one_line_error(capsys)
    monkeypatch.setenv("PLB_ADMIN_KEY", "not-the-admin-key-0123")
    assert main(["models", "add", "helios-9", "--url", live_server]) == 2
    assert "answered 403" in one_line_error(capsys)

    monkeypatch.setenv("PLB_ADMIN_KEY", ADMIN_KEY)
    argv = ["models", "add", "helios-9", "pico-3b", "--url", live_server, "--format", "json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == {
        "added": ["helios-9"],
        "known": ["pico-3b"],
        "version": 1,
    }
    assert main(["models", "add", "helios-9", "nova-2", "--url", live_server]) == 0
    assert capsys.readouterr().out == "added: nova-2\nalready known: helios-9\n"
    taken = httpx.post(f"{live_server}/v1/battles", json={"battles": [vote]}, headers=ingest)
    assert (taken.json()["accepted"], taken.json()["rejected"]) == (1, [])


@pytest.mark.parametrize(
    "argv", [["models"], ["models", "add"], ["models", "add", " "], ["models", "remove", "x"]]
)
def test_models_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code = int(exit_.code or 0)
    assert code == 2
    error = one_line_error(capsys)
    assert "PLB_ADMIN_KEY" not in error  # refused before anything is asked


@pytest.mark.parametrize(
    ("argv", "words"),
    [(["--timeout", "0"], ["--timeout", "not 0.0"]), (["--url", "localhost:8000"], ["--url"])],
)
def test_refit_checks_its_options_before_asking(
    argv: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["refit", *argv]) == 2  # before PLB_ADMIN_KEY (unset here) is even looked at
    error = one_line_error(capsys)
    assert all(word in error for word in words) and "PLB_ADMIN_KEY" not in error


def test_refit_of_an_unreachable_service(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PLB_ADMIN_KEY", ADMIN_KEY)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: the connection is refused
        assert main(["refit", "--url", f"http://127.0.0.1:{port}", "--timeout", "5"]) == 2
    assert "cannot reach" in one_line_error(capsys)


# -- the README's demo, as a real process --------------------------------------------------


def demo(demo_dir: Path, log: Path) -> ServeProcess:
    """``plb serve --demo`` of 60 users in ``demo_dir``."""
    return ServeProcess(
        ["--demo", "--users", "60", "--demo-dir", str(demo_dir)], demo_dir.parent, log
    )


def test_demo_fits_again_over_a_fit_of_an_older_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli.serve import _demo_fit

    stale = tmp_path / "demo" / "fit"
    stale.mkdir(parents=True)
    (stale / "manifest.json").write_text('{"format": "personal-leaderboard/fit-1"}')
    recorded: list[tuple[str, bool]] = []
    record_demo_steps(monkeypatch, recorded)
    assert _demo_fit(argparse.Namespace(demo_dir=str(tmp_path / "demo"), users=60)) == stale
    steps = [name for name, _ in recorded]
    assert steps == ["simulate", "fit", "report"]
    err = capsys.readouterr().err
    assert "not reusing the demo fit" in err and "personal-leaderboard/fit-2" in err


@pytest.mark.slow
def test_demo_serves_and_keeps_votes_across_restarts(tmp_path: Path) -> None:
    demo_dir = tmp_path / "demo"
    battle = {
        "battle_id": "demo-vote-1",
        "user_id": "demo-user",
        "model_a": "pico-3b",
        "model_b": "helios-2-ultra",
        "winner": "model_a",
    }

    first = demo(demo_dir, tmp_path / "first.log")
    try:
        first.wait_healthy()
        page = httpx.get(f"{first.url}/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        board = httpx.get(f"{first.url}/v1/leaderboard").json()
        assert len(board["models"]) == 15
        assert (demo_dir / "fit" / "report.html").is_file()
        report = httpx.get(f"{first.url}/report")  # the page's report, served
        assert report.status_code == 200 and "<h1>" in report.text
        keys = json.loads((demo_dir / "keys.json").read_text(encoding="utf-8"))
        headers = {"Authorization": f"Bearer {keys['PLB_INGEST_KEY']}"}
        result = httpx.post(f"{first.url}/v1/battles", json={"battles": [battle]}, headers=headers)
        assert result.status_code == 200, result.text
        assert result.json()["accepted"] == 1
        token = result.json()["tokens"]["demo-user"]
        elo = httpx.get(f"{first.url}/v1/leaderboard", params={"method": "elo"}).json()
    finally:
        first.stop()
    log = first.stderr()
    assert "reusing" not in log
    assert "this arena is SIMULATED" in log and "plb fit YOUR_LOG --out DIR" in log
    assert log.count("plb serve: http://") == 1
    for secret in (*keys.values(), token):
        assert secret not in log

    second = demo(demo_dir, tmp_path / "second.log")
    try:
        second.wait_healthy()
        assert "reusing" in second.stderr()
        again = httpx.post(f"{second.url}/v1/battles", json={"battles": [battle]}, headers=headers)
        assert (again.json()["accepted"], again.json()["duplicates"]) == (0, 1)
        assert httpx.get(f"{second.url}/v1/leaderboard", params={"method": "elo"}).json() == elo
        mine = httpx.get(f"{second.url}/v1/users/demo-user/leaderboard", params={"token": token})
        assert mine.status_code == 200, mine.text
        assert mine.json()["n_battles"] == 1
    finally:
        second.stop()
