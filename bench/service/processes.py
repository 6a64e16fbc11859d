"""The processes benchmarks G and I run: ``redis-server``, the service, and its fit."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.common import ROOT

__all__ = ["NO_REDIS_SERVER", "OUT"]

logger = logging.getLogger("bench")

OUT = ROOT / "bench" / "out"
_HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLB_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return {**env, **extra}


def _tail(path: Path, n: int = 600) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return " | ".join(text[-n:].split("\n")) or "(no output)"


@contextmanager
def _process(
    command: list[str], env: dict[str, str], log: Path, ready: Callable[[], bool], timeout: float
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` in a session of its own, wait for ``ready``; stop its group after."""
    with open(log, "ab") as sink:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
            start_new_session=True,
        )  # fmt: skip
    name = Path(command[0]).name if command[0] != sys.executable else command[2]
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode}: {_tail(log)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not ready within {timeout:.0f} s: {_tail(log)}")
            time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()  # uvicorn's supervisor stops its workers on SIGTERM
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        try:
            os.killpg(process.pid, signal.SIGKILL)  # any worker left behind, of this group only
        except ProcessLookupError:
            pass


def _answers(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except OSError:
        return False


def _pings(port: int) -> bool:
    try:
        with socket.create_connection((_HOST, port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def _redis(executable: str, directory: Path) -> Iterator[str]:
    """A ``redis-server`` on a free loopback port (AOF, fsync every second); its URL."""
    port = _free_port()
    command = [
        executable, "--port", str(port), "--bind", _HOST, "--dir", str(directory),
        "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
    ]  # fmt: skip
    with _process(command, _env(), directory / "redis.log", lambda: _pings(port), 10.0):
        yield f"redis://{_HOST}:{port}/0"


@contextmanager
def _server(app: str, workers: int, env: dict[str, str], log: Path) -> Iterator[str]:
    """Serve ``app`` (``plb`` for ``plb serve``, else a factory) on a free port; its URL."""
    port = _free_port()
    base = f"http://{_HOST}:{port}"
    if app == "plb":
        command = [sys.executable, "-m", "service.cli", "serve", env["PLB_FIT_DIR"]]
        if "PLB_REDIS_URL" in env:
            command += ["--redis-url", env["PLB_REDIS_URL"]]
        else:
            command += ["--store", env["PLB_STORE_PATH"]]
        command += ["--port", str(port)]
        probe = base + "/healthz"
    else:
        command = [sys.executable, "-m", "uvicorn", "--factory", app, "--host", _HOST]
        command += ["--port", str(port), "--workers", str(workers), "--no-access-log"]
        probe = base + ("/healthz" if app.endswith("serving_app") else "/")

    def ready() -> bool:  # every worker has started, and one answers
        text = log.read_text(errors="replace") if log.exists() else ""
        return text.count("Application startup complete") >= workers and _answers(probe)

    log.write_bytes(b"")
    with _process(command, env, log, ready, 300.0):
        yield base


# -- setup ------------------------------------------------------------------------------------


#: Why the benchmarks that need Redis are skipped.
NO_REDIS_SERVER = "redis-server is not on PATH (Debian/Ubuntu: apt-get install redis-server)"


def _fit_dir(quick: bool) -> Path:
    """A fit of the simulator, cached under ``bench/out`` (the full one takes minutes)."""
    from service.pipeline.artifacts import FORMAT

    n_users = 60 if quick else 400
    root = OUT / f"service-fit-{n_users}-users"
    fit = root / "fit"
    manifest = fit / "manifest.json"
    if manifest.exists() and json.loads(manifest.read_text()).get("format") == FORMAT:
        return fit
    shutil.rmtree(root, ignore_errors=True)
    logger.info("simulating and fitting %d users into %s (kept for later runs)", n_users, root)
    simulate = ["simulate", "--out", str(root / "sim"), "--users", str(n_users), "--seed", "0"]
    step = ["fit", str(root / "sim" / "battles.jsonl.gz"), "--out", str(fit)]
    if quick:
        simulate += ["--battles-per-user", "30"]
        step += ["--n-topics", "4"]
    for args in (simulate, step):
        command = [sys.executable, "-m", "service.cli", *args]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"plb {args[0]} exited with {done.returncode}: {tail}")
    return fit
