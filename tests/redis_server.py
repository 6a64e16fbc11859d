"""A real ``redis-server`` for tests: loopback only, AOF on, fsync on every write.

:class:`RedisServer` runs the server in a directory of its own on a free port of
127.0.0.1; :meth:`RedisServer.stop` and :meth:`RedisServer.start` (or
:meth:`RedisServer.restart`) reuse the same port and directory, so the append-only file
carries the data across a restart.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Self

import pytest

__all__ = ["RedisServer", "find_redis_server", "free_port", "require_redis_server"]

logger = logging.getLogger(__name__)


def find_redis_server() -> str | None:
    """The path of ``redis-server`` on ``PATH``, or ``None``."""
    return shutil.which("redis-server")


def require_redis_server() -> str:
    """The path of ``redis-server``; skip the test where it is absent, fail under ``CI=true``.

    CI must never silently skip the Redis tests, so there the absence is a failure.
    """
    executable = find_redis_server()
    if executable is None:
        reason = "redis-server is not on PATH (Debian/Ubuntu: apt-get install redis-server)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true, so the Redis tests must not be skipped")
        pytest.skip(reason)
    return executable


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers_ping(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process with ``appendonly yes``, ``appendfsync always``, no RDB.

    Parameters
    ----------
    directory : path
        The server's working directory (its AOF lives there); created when absent.
    executable : str, default "redis-server"
    port : int, optional
        A free loopback port is picked when omitted.

    Attributes
    ----------
    port : int
    url : str
        ``redis://127.0.0.1:{port}/0``.
    """

    def __init__(
        self, directory: str | Path, executable: str = "redis-server", port: int | None = None
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.executable = executable
        self.port = free_port() if port is None else port
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        """The server's log file."""
        return self.directory / "redis.log"

    @property
    def running(self) -> bool:
        """Whether the process was started and has not exited."""
        return self._process is not None and self._process.poll() is None

    def start(self, timeout: float = 10.0) -> None:
        """Start the server (a no-op when running) and wait until it answers ``PING``.

        Raises
        ------
        RuntimeError
            When the process exits or does not answer within ``timeout`` seconds; the
            message carries the end of its log.
        """
        if self.running:
            return
        command = [
            self.executable,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.directory),
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--save", "",
            "--daemonize", "no",
            "--logfile", str(self.log_path),
        ]  # fmt: skip
        with open(self.directory / "redis.stderr", "ab") as stderr:
            self._process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"redis-server exited with {self._process.returncode}: {self._tail()}"
                )
            if _answers_ping(self.port):
                logger.info("redis-server answers on %s", self.url)
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer PING within {timeout} s: {self._tail()}")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server with SIGTERM (Redis flushes its AOF first) and wait for it."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def pause(self) -> None:
        """Freeze the server with SIGSTOP: it accepts connections but never answers."""
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server run again (SIGCONT)."""
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)

    def crash(self) -> None:
        """Kill the server with SIGKILL, as a crash would: no shutdown, no final flush."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def restart(self) -> None:
        """Stop and start again on the same port and directory; AOF data survives."""
        self.stop()
        self.start()

    def _tail(self, n: int = 2000) -> str:
        text = ""
        for path in (self.directory / "redis.stderr", self.log_path):
            if path.exists():
                text += path.read_text(errors="replace")
        return text[-n:] or "(no log)"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
