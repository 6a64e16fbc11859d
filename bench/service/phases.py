"""Benchmark G's load phases: the workload, ``wrk`` or the Python load, the references."""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import ROOT
from bench.service.load import LoadResult, Request
from bench.service.processes import _answers, _env, _server

__all__ = ["CLIENTS", "OPEN_CONNECTIONS", "OPEN_GOAL_RATE", "OPEN_RATES"]

logger = logging.getLogger("bench")

#: Issue 18's open-loop goal: p99 at this rate, requests a second.
OPEN_GOAL_RATE = 2000.0
OPEN_RATES = (500.0, 1000.0, 2000.0, 5000.0)
OPEN_CONNECTIONS = 64
CLIENTS = 50
N_QUERIES = 20
N_USERS = 20  # whose leaderboards are read in turn
_ADMIN_KEY = "bench-admin-key-not-secret"
_PYTHON_LOAD = "an asyncio loop over raw HTTP/1.1 keep-alive connections (uvloop)"


def _workload(
    fit: Path, base: str, env: dict[str, str], n_users: int = N_USERS
) -> tuple[list[str], list[dict[str, Any]], str]:
    """User leaderboard paths of ``n_users`` users (with tokens, warmed), recommend bodies,
    and the data label."""
    import pandas as pd

    users = sorted(pd.read_parquet(fit / "users.parquet", columns=["user_id"])["user_id"].unique())
    chosen = [str(users[i * len(users) // n_users]) for i in range(min(n_users, len(users)))]
    admin = {"Authorization": f"Bearer {_ADMIN_KEY}"}
    paths = []
    for user in chosen:
        quoted = urllib.parse.quote(user, safe="")
        with urllib.request.urlopen(
            urllib.request.Request(f"{base}/v1/admin/users/{quoted}/token", headers=admin),
            timeout=30,
        ) as response:
            token = json.load(response)["token"]
        paths.append(f"/v1/users/{quoted}/leaderboard?token={token}")
        if not _answers(base + paths[-1], 60.0):  # fits and stores the leaderboard once
            raise RuntimeError(f"GET {paths[-1].split('?')[0]} failed while warming")
    battles = pd.read_parquet(fit / "battles.parquet", columns=["prompt"])
    prompts = battles["prompt"].dropna().drop_duplicates().astype(str).tolist()
    bodies = [
        {"queries": prompts[i : i + N_QUERIES]}
        for i in range(0, len(prompts) - N_QUERIES + 1, N_QUERIES)
    ]
    manifest = json.loads((fit / "manifest.json").read_text())
    store = "Redis" if "PLB_REDIS_URL" in env else "SQLite"
    label = (
        f"plb simulate: {manifest['n_users']} users, {manifest['n_battles']:,} votes, "
        f"{len(manifest['models'])} models; {store}; {os.cpu_count()} CPUs for all processes"
    )
    return paths, bodies, label


# -- load phases ------------------------------------------------------------------------------

_WRK_LUA = """
local paths = {PATHS}
local i = 0
function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n{"requests": %d, "duration_us": %d, "errors": %d, "p50_us": %.1f, "p99_us": %.1f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def _wrk(base: str, paths: list[str], duration: float, warmup: float, tmp: Path) -> LoadResult:
    script = tmp / "wrk.lua"
    script.write_text(_WRK_LUA.replace("PATHS", ", ".join(map(json.dumps, paths))))
    result: dict[str, Any] = {}
    for seconds in (warmup, duration):
        command = ["wrk", "-t1", f"-c{CLIENTS}", f"-d{max(1, round(seconds))}s", "--timeout", "5s"]
        done = subprocess.run(
            [*command, "-s", str(script), base + paths[0]],
            capture_output=True, text=True, timeout=seconds + 60, check=True,
        )  # fmt: skip
        result = json.loads([x for x in done.stdout.splitlines() if x.startswith("{")][-1])
    return LoadResult(
        result["requests"],
        result["errors"],
        result["duration_us"] / 1e6,
        result["p50_us"] / 1000.0,
        result["p99_us"] / 1000.0,
    )


class _LoadWorker:
    """One load process that runs every phase it is sent, in turn (``python -m
    bench.service.load serve``): the quick run's, instead of a process a phase."""

    def __init__(self, tmp: Path) -> None:
        self.log = tmp / "load-worker.log"
        command = [sys.executable, "-m", "bench.service.load", "serve"]
        with open(self.log, "wb") as sink:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=sink, text=True,
            )  # fmt: skip

    def run(self, spec_path: Path, out: Path, timeout: float) -> None:
        """Run the phase of ``spec_path``, its result written to ``out``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(f"{spec_path}\t{out}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # it has exited: told below
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready or self.process.stdout.readline() != "done\n":
            tail = " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-3:])
            raise RuntimeError(f"the load process failed or hung: {tail or '(no output)'}")

    def close(self) -> None:
        """Close its stdin, so that it ends; stop it if it does not."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextmanager
def _load_worker(tmp: Path) -> Iterator[_LoadWorker]:
    """A :class:`_LoadWorker` for the block, closed after it."""
    worker = _LoadWorker(tmp)
    try:
        yield worker
    finally:
        worker.close()


def _python_load(spec: dict[str, Any], tmp: Path, worker: _LoadWorker | None = None) -> LoadResult:
    spec_path, out = tmp / "load.json", tmp / "result.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    timeout = spec["warmup_s"] + spec["duration_s"] + 120
    if worker is not None:
        out.unlink(missing_ok=True)
        worker.run(spec_path, out, timeout)
        return LoadResult(**json.loads(out.read_text(encoding="utf-8")))
    command = [sys.executable, "-m", "bench.service.load", "load", str(spec_path), str(out)]
    done = subprocess.run(
        command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"the load process exited with {done.returncode}: {tail}")
    return LoadResult(**json.loads(out.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class _Load:
    """How the phases of one run load the server."""

    duration: float
    warmup: float
    tmp: Path
    wrk: bool
    goal_repeats: int = 1  # open-loop phases at the goal's rate
    rates: tuple[float, ...] = OPEN_RATES  # of the open-loop phases, in turn
    users: int = N_USERS  # whose leaderboards are read in turn
    #: The one process that runs every Python load phase (the quick run's); None: a
    #: process a phase (the full run's)
    worker: _LoadWorker | None = None

    @property
    def tool(self) -> str:
        client = "wrk (1 thread)" if self.wrk else _PYTHON_LOAD
        return f"{client}, {CLIENTS} connections back to back"

    @property
    def open_tool(self) -> str:
        return (
            f"open loop: {_PYTHON_LOAD}, a pool of {OPEN_CONNECTIONS}; request i due at "
            "start + i / rate, sent when a clock thread wakes the loop (it never spins), "
            "latency from the due time (not from the send); "
            f"{self.duration:.0f} s after {self.warmup:.0f} s of warm-up at the same rate"
        )

    def get(self, base: str, paths: list[str]) -> LoadResult:
        if self.wrk:
            return _wrk(base, paths, self.duration, self.warmup, self.tmp)
        requests = [("GET", p, None) for p in paths]
        return self.http(base, requests, CLIENTS, 200_000)

    def open(self, base: str, paths: list[str], rate: float) -> LoadResult:
        spec: dict[str, Any] = {"base": base, "requests": [("GET", p, None) for p in paths]}
        spec.update(rate=rate, connections=OPEN_CONNECTIONS)
        spec.update(duration_s=self.duration, warmup_s=self.warmup)
        return _python_load(spec, self.tmp, self.worker)

    def open_rates(self, base: str, paths: list[str]) -> dict[float, list[LoadResult]]:
        """Open loop at each of ``rates`` (:data:`OPEN_RATES` unless quick), in turn,
        ``goal_repeats`` phases at the goal's rate."""
        return {
            rate: [
                self.open(base, paths, rate)
                for _ in range(self.goal_repeats if rate == OPEN_GOAL_RATE else 1)
            ]
            for rate in self.rates
        }

    def http(
        self, base: str, requests: list[Request], clients: int, limit: int, fresh: bool = False
    ) -> LoadResult:
        """Closed loop over ``requests`` in turn, the measured ones after the warm-up's;
        ``fresh``: none sent twice (the phase ends early rather than repeat one)."""
        spec = {"base": base, "requests": requests, "clients": clients, "max_requests": limit}
        spec.update(duration_s=self.duration, warmup_s=self.warmup, fresh=fresh)
        return _python_load(spec, self.tmp, self.worker)


def _meets(result: LoadResult, p99_ms: float, rps: float, quick: bool) -> bool | None:
    """Whether ``result`` meets the goal, without errors; ``None`` in quick mode."""
    if quick:
        return None
    return result.p99_ms <= p99_ms and result.rps >= rps and result.errors == 0


@dataclass(frozen=True)
class _References:
    """The trivial apps under the same load: the ceilings of one way of serving."""

    workers: int
    closed: LoadResult
    fastapi: LoadResult | None
    open: dict[float, LoadResult]

    def closed_text(self) -> str:
        text = f"trivial Starlette app: {self.closed.text(errors=False)}"
        if self.fastapi is not None:
            text += f"; hello-world FastAPI app: {self.fastapi.rps:,.0f} req/s"
        return text

    def ratios(self, result: LoadResult) -> tuple[float | None, str]:
        """ours / Starlette req/s, and a note of ours / FastAPI's."""
        ratio = result.rps / self.closed.rps if self.closed.rps > 0 else None
        note = ""
        if self.fastapi is not None and self.fastapi.rps > 0:
            note = f"; {result.rps / self.fastapi.rps:.2f}× the hello-world FastAPI app's req/s"
        return ratio, note


def _references(load: _Load, workers: int, *, open_loop: bool) -> _References:
    """The trivial apps under ``workers`` uvicorn workers: closed loop, and the open rates."""
    logger.info("the trivial apps, %d worker(s)", workers)
    log = load.tmp / "trivial.log"
    with _server("bench.service.apps:trivial_app", workers, _env(), log) as base:
        closed = load.get(base, ["/"])
        rates = {r: load.open(base, ["/"], r) for r in load.rates} if open_loop else {}
    fastapi = None
    if open_loop:
        with _server("bench.service.apps:hello_fastapi_app", workers, _env(), log) as base:
            fastapi = load.get(base, ["/"])
    return _References(workers, closed, fastapi, rates)
