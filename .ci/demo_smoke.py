"""CI's run of the README's first command, as a user runs it.

Starts ``make demo`` (install, the real Arena leaderboard, then ``plb serve --demo``) as a
real process on a free loopback port, waits for ``/healthz``, fetches the page, the
aggregate leaderboard and a recommendation, and stops it. Every step is bounded in time.

    python .ci/demo_smoke.py [--users N] [--timeout SECONDS] [--log FILE]

Exit code 0 when every check passed, 1 otherwise; the demo's terminal output is echoed
on failure, and the time from the command to the first page is printed either way.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A loopback port that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str, body: object | None = None, timeout: float = 30.0) -> tuple[int, bytes]:
    """``GET url`` (or ``POST`` the JSON ``body``): the status and the body."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float) -> float:
    """Seconds until ``/healthz`` answers 200; raises when the demo exits or times out."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"make demo exited with {process.returncode} before serving")
        try:
            if fetch(f"{url}/healthz", timeout=2)[0] == 200:
                return time.monotonic() - start
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"make demo did not answer /healthz within {timeout:.0f} s")


def check(url: str) -> list[str]:
    """What the user would see first: the page, the leaderboard, a recommendation."""
    failures = []
    status, page = fetch(f"{url}/")
    if status != 200 or b"<html" not in page.lower():
        failures.append(f"GET / answered {status}")
    status, body = fetch(f"{url}/v1/leaderboard")
    models = json.loads(body).get("models", []) if status == 200 else []
    if status != 200 or not models:
        failures.append(f"GET /v1/leaderboard answered {status} with {len(models)} models")
    queries = ["How do I reverse a linked list in Rust?", "Write a haiku about autumn rain"]
    status, body = fetch(f"{url}/v1/recommend", {"queries": queries}, timeout=60)
    ranked = json.loads(body).get("models", []) if status == 200 else []
    if status != 200 or len(ranked) != len(models):
        failures.append(f"POST /v1/recommend answered {status} with {len(ranked)} models")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=60, help="simulated users (60)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to serve (900)")
    parser.add_argument("--log", type=Path, help="also keep the demo's terminal output here")
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as demo_dir, tempfile.TemporaryFile() as log:
        command = ["make", "--no-print-directory", "demo", f"PORT={port}"]
        command += [f"DEMO_USERS={args.users}", f"DEMO_DIR={demo_dir}"]
        print(f"demo smoke: {' '.join(command)}", file=sys.stderr, flush=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLB_")}
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # its own process group: make, plb and uvicorn stop together
        )
        failures: list[str] = []
        try:
            wait_healthy(url, process, args.timeout)
            first_page = time.monotonic() - started
            failures = check(url)
            print(f"demo smoke: first page {first_page:.0f} s after the command", file=sys.stderr)
        except RuntimeError as error:
            failures = [str(error)]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
        if args.log is not None:
            args.log.write_text(output, encoding="utf-8")
        if failures:
            sys.stderr.write(output[-20000:])
            for failure in failures:
                print(f"demo smoke: FAILED: {failure}", file=sys.stderr)
            return 1
    print("demo smoke: the page, the leaderboard and a recommendation answered", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
