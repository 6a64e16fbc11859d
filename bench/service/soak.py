"""Benchmark I (issue 7): ten minutes of mixed load on one ``plb serve`` over Redis.

A real ``redis-server`` and ``plb serve`` (one uvicorn worker, the 400-user fit of
benchmark G; the 60-user one with ``--quick``) run as processes of their own on loopback,
with a background refit every minute (``PLB_REFIT_INTERVAL_S``), so model versions change
under load. Another process sends a steady mix at a fixed rate, an *open* loop: request
``i`` is due at ``i / rate`` seconds whether or not earlier ones were answered, and its
latency counts from that due time, so a stall shows as latency rather than as a lower
rate (no coordinated omission). The mix:

* 80% reads: the aggregate leaderboard (Bradley-Terry and live Elo) and users'
  leaderboards with their read tokens (both methods; users of the fit, and new users
  once a vote returned their token);
* 15% ``POST /v1/battles``: one to three new votes, or (one post in five) a batch sent
  before again, which must come back as duplicates;
* 5% ``POST /v1/recommend`` with 20 prompts of the log.

This process reads the server's resident memory (``VmRSS`` of ``/proc/PID/status``) once
a second. Every figure is kept per minute (per 5 s with ``--quick``): requests, errors
(any status outside 2xx, or no answer), p50/p99 latency, RSS and the versions served.

``python -m bench.service.soak load SPEC OUT`` is the load process; :func:`drive` is its loop,
which ``tests/service/system/test_soak.py`` runs for a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import ROOT, Row, error_text, event_loop_runner, load_task_main, make_row
from bench.service.processes import NO_REDIS_SERVER, _env, _fit_dir, _free_port, _process, _redis

__all__ = ["drive", "main", "run", "soak_spec"]

logger = logging.getLogger("bench")

RATE = 10.0  # requests a second, all kinds together: a moderate load here (see run)
DURATION_S = 600.0
QUICK_DURATION_S = 15.0
BUCKET_S = 60.0
QUICK_BUCKET_S = 5.0
REQUEST_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 256
IDLE_S = 2.0  # keep-alive connections idle for longer are not reused
N_QUERIES = 20
N_USERS = 20  # users of the fit whose leaderboards are read
N_NEW_USERS = 200  # new users who vote during the soak
RSS_GROWTH_GOAL_MB = 50.0
RSS_GROWTH_GOAL_SHARE = 0.10
P99_DRIFT_GOAL = 2.0
#: Request kind and its share of the load.
MIX: tuple[tuple[str, float], ...] = (
    ("GET /v1/leaderboard", 0.30),
    ("GET /v1/leaderboard?method=elo", 0.20),
    ("GET /v1/users/{id}/leaderboard", 0.30),
    ("POST /v1/battles", 0.15),
    ("POST /v1/recommend", 0.05),
)
_ADMIN_KEY = "soak-admin-key-not-secret"
_INGEST_KEY = "soak-ingest-key-not-secret"
_TOKEN_SECRET = "soak-token-secret-not-secret"
_HOST = "127.0.0.1"


# -- the load process --------------------------------------------------------------------------


def soak_spec(
    base: str,
    fit: Path,
    *,
    admin_key: str,
    ingest_key: str,
    duration_s: float,
    rate: float = RATE,
    bucket_s: float = BUCKET_S,
    seed: int = 0,
) -> dict[str, Any]:
    """Everything the load process needs, as JSON: paths with tokens, bodies, models.

    Reads the fit's users and prompts, and asks the running service (``base``) for the
    read tokens of :data:`N_USERS` of them with ``admin_key``.
    """
    import pandas as pd

    users = sorted(pd.read_parquet(fit / "users.parquet", columns=["user_id"])["user_id"].unique())
    chosen = [str(users[i * len(users) // N_USERS]) for i in range(min(N_USERS, len(users)))]
    tokens = {}
    for user in chosen:
        request = urllib.request.Request(
            f"{base}/v1/admin/users/{urllib.parse.quote(user, safe='')}/token",
            headers={"Authorization": f"Bearer {admin_key}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            tokens[user] = json.load(response)["token"]
    battles = pd.read_parquet(fit / "battles.parquet", columns=["prompt"])
    prompts = battles["prompt"].dropna().drop_duplicates().astype(str).tolist()
    bodies = [
        {"queries": prompts[i : i + N_QUERIES]}
        for i in range(0, min(len(prompts), 50 * N_QUERIES) - N_QUERIES + 1, N_QUERIES)
    ]
    manifest = json.loads((fit / "manifest.json").read_text(encoding="utf-8"))
    return {
        "base": base,
        "duration_s": duration_s,
        "rate": rate,
        "bucket_s": bucket_s,
        "seed": seed,
        "ingest_key": ingest_key,
        "tokens": tokens,
        "recommend": bodies,
        "models": list(manifest["models"]),
    }


def _encode(host: str, method: str, path: str, body: Any, headers: dict[str, str]) -> bytes:
    """One HTTP/1.1 keep-alive request, ready to send."""
    data = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return (head + "\r\n").encode() + data


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes
) -> tuple[int, bytes]:
    """Send ``raw``, read the whole response (length or chunked): status and body."""
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    fields = dict(
        (name.strip().lower(), value.strip().lower())
        for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    )
    body = b""
    if b"chunked" in fields.get(b"transfer-encoding", b""):
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            body += (await reader.readexactly(size + 2))[:-2]
        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
            pass
    else:
        body = await reader.readexactly(int(fields.get(b"content-length", b"0")))
    return int(head[9:12]), body


@dataclass
class _Bucket:
    """What the requests due in one time bucket met."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    statuses: Counter[str] = field(default_factory=Counter)
    versions: set[int] = field(default_factory=set)

    def add(self, kind: str, status: int | None, seconds: float) -> None:
        self.latencies.setdefault(kind, []).append(seconds)
        if status is None or not 200 <= status < 300:
            self.statuses[f"{kind}: {status if status is not None else 'no answer'}"] += 1

    def summary(self) -> dict[str, Any]:
        every = [x for values in self.latencies.values() for x in values]
        p50, p99 = np.percentile(every, [50, 99]) * 1000.0 if every else (0.0, 0.0)
        return {
            "requests": len(every),
            "errors": sum(self.statuses.values()),
            "server_errors": sum(
                n for key, n in self.statuses.items() if key.rsplit(": ", 1)[1].startswith("5")
            ),
            "p50_ms": float(p50),
            "p99_ms": float(p99),
            "max_ms": float(max(every, default=0.0) * 1000.0),
            "statuses": dict(self.statuses),
            "versions": sorted(self.versions),
            "by_kind": {
                kind: {
                    "requests": len(values),
                    "p50_ms": float(np.percentile(values, 50) * 1000.0),
                    "p99_ms": float(np.percentile(values, 99) * 1000.0),
                }
                for kind, values in sorted(self.latencies.items())
            },
        }


class _Mix:
    """The next request of the mix: its kind, bytes and how to check its answer."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.rng = random.Random(spec["seed"])
        self.host = urllib.parse.urlsplit(spec["base"]).netloc
        self.models: list[str] = spec["models"]
        self.recommend: list[dict[str, Any]] = spec["recommend"]
        self.ingest = {"Authorization": f"Bearer {spec['ingest_key']}"}
        self.users = list(spec["tokens"].items())  # (user, token); new voters join
        self.fit_users = [user for user, _ in self.users]
        self.new_users = [f"soak-user-{i}" for i in range(N_NEW_USERS)]
        self.sent: list[list[dict[str, Any]]] = []  # batches acknowledged, to send again
        self.n_battles = 0
        self.inconsistent = 0  # ingest answers that do not add up
        self.kinds = [kind for kind, _ in MIX]
        self.weights = [share for _, share in MIX]

    def _battles(self) -> tuple[list[dict[str, Any]], bool]:
        if self.sent and self.rng.random() < 0.2:
            return self.rng.choice(self.sent), True
        battles = []
        for _ in range(self.rng.randint(1, 3)):
            a, b = self.rng.sample(self.models, 2)
            # one in ten from a user of the fit, whose votes carry prompts: refitting their
            # leaderboard embeds all their prompts for the predicted prior, the costly path
            pool = self.fit_users if self.rng.random() < 0.1 else self.new_users
            self.n_battles += 1
            battles.append(
                {
                    "battle_id": f"soak-{self.n_battles}",
                    "model_a": a,
                    "model_b": b,
                    "winner": self.rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"]),
                    "user_id": self.rng.choice(pool),
                }
            )
        return battles, False

    def next(self) -> tuple[str, bytes, Callable[[bytes], int | None]]:
        """Kind, request bytes, and a check of a 200 body that returns its version."""
        kind = self.rng.choices(self.kinds, self.weights)[0]
        if kind == "POST /v1/battles":
            battles, again = self._battles()
            raw = _encode(self.host, "POST", "/v1/battles", {"battles": battles}, self.ingest)
            return kind, raw, lambda body: self._ingested(battles, again, body)
        if kind == "POST /v1/recommend":
            body = self.rng.choice(self.recommend)
            return kind, _encode(self.host, "POST", "/v1/recommend", body, {}), _version
        if kind == "GET /v1/users/{id}/leaderboard":
            user, token = self.rng.choice(self.users)
            method = self.rng.choice(["bt", "elo"])
            quoted = urllib.parse.quote(user, safe="")
            path = f"/v1/users/{quoted}/leaderboard?token={token}&method={method}"
            return kind, _encode(self.host, "GET", path, None, {}), _version
        path = kind.split(" ", 1)[1]
        return kind, _encode(self.host, "GET", path, None, {}), _version

    def _ingested(self, battles: list[dict[str, Any]], again: bool, body: bytes) -> int | None:
        document = json.loads(body)
        expected = (0, len(battles)) if again else (len(battles), 0)
        if (document["accepted"], document["duplicates"]) != expected or document["rejected"]:
            self.inconsistent += 1
        if not again:
            self.sent.append(battles)
        for user, token in document["tokens"].items():
            self.users.append((user, token))
        return int(document["version"])


_VERSION = re.compile(rb'"version":\s*(\d+)')


def _version(body: bytes) -> int | None:
    """The ``version`` an answer names (looked for at its end first), or ``None``."""
    match = _VERSION.search(body[-200:]) or _VERSION.search(body)
    return int(match.group(1)) if match else None


async def drive(spec: dict[str, Any]) -> dict[str, Any]:
    """Send the mix at ``spec['rate']`` a second for ``spec['duration_s']``; the figures.

    Returns
    -------
    dict
        ``buckets`` (one summary per ``bucket_s`` of due time), ``total`` (the same over
        the whole run), ``inconsistent`` (ingest answers that did not add up), ``late``
        (requests sent more than 50 ms after they were due: the client fell behind),
        ``started`` (wall-clock time of the first due time) and ``elapsed_s``.
    """
    address = urllib.parse.urlsplit(spec["base"])
    rate, bucket_s = float(spec["rate"]), float(spec["bucket_s"])
    n_requests = int(float(spec["duration_s"]) * rate)
    mix = _Mix(spec)
    buckets = [_Bucket() for _ in range(int(np.ceil(n_requests / rate / bucket_s)))]
    total = _Bucket()
    # idle keep-alive connections and when each was last used: one idle for longer than
    # IDLE_S is closed rather than reused, before uvicorn (5 s) closes it under a request
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []
    slots = asyncio.Semaphore(MAX_CONNECTIONS)
    late = 0

    async def one(due: float, bucket: _Bucket, kind: str, raw: bytes, check: Any) -> None:
        nonlocal late
        async with slots:
            if time.perf_counter() - due > 0.05:
                late += 1
            status: int | None = None
            body = b""
            connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_S):
                    while idle and connection is None:
                        reader, writer, used = idle.pop()
                        if time.perf_counter() - used < IDLE_S:
                            connection = reader, writer
                        else:
                            writer.close()
                    if connection is None:
                        connection = await asyncio.open_connection(address.hostname, address.port)
                    status, body = await _exchange(*connection, raw)
                idle.append((*connection, time.perf_counter()))
            except (OSError, ValueError, asyncio.IncompleteReadError, TimeoutError):
                if connection is not None:
                    connection[1].close()
            seconds = time.perf_counter() - due
            if status == 200:
                try:
                    version = check(body)
                except (ValueError, KeyError, TypeError):
                    mix.inconsistent += 1
                    version = None
                if version is not None:
                    bucket.versions.add(version)
                    total.versions.add(version)
            bucket.add(kind, status, seconds)
            total.add(kind, status, seconds)

    started = time.time()
    start = time.perf_counter()
    tasks = set()
    for i in range(n_requests):
        due = start + i / rate
        if (wait := due - time.perf_counter()) > 0:
            await asyncio.sleep(wait)
        kind, raw, check = mix.next()
        bucket = buckets[min(int(i / rate / bucket_s), len(buckets) - 1)]
        task = asyncio.create_task(one(due, bucket, kind, raw, check))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(tasks, timeout=REQUEST_TIMEOUT_S + 10)
    for _, writer, _ in idle:
        writer.close()
    return {
        "buckets": [b.summary() for b in buckets],
        "total": total.summary(),
        "inconsistent": mix.inconsistent,
        "late": late,
        "battles_sent": mix.n_battles,
        "started": started,
        "bucket_s": bucket_s,
        "elapsed_s": time.perf_counter() - start,
    }


def run_load(spec: dict[str, Any]) -> dict[str, Any]:
    """:func:`drive` on a fresh event loop (uvloop where installed)."""
    with event_loop_runner() as runner:
        return runner.run(drive(spec))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench.service.soak load SPEC OUT``: run the soak's load, write its result."""
    return load_task_main("bench.service.soak", run_load, "JSON of soak_spec()", argv)


# -- the benchmark -----------------------------------------------------------------------------


class _RssSampler:
    """Reads ``VmRSS`` of one process once a second, in a thread, until stopped."""

    def __init__(self, pid: int) -> None:
        self.path = Path(f"/proc/{pid}/status")
        self.samples: list[tuple[float, float]] = []  # (wall time, MB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss", daemon=True)

    def read(self) -> float | None:
        try:
            text = self.path.read_text()
        except OSError:
            return None
        match = re.search(r"^VmRSS:\s+(\d+) kB", text, re.MULTILINE)
        return int(match.group(1)) * 1024 / 1e6 if match else None

    def _loop(self) -> None:
        while not self._stop.wait(1.0):
            if (mb := self.read()) is not None:
                self.samples.append((time.time(), mb))

    def __enter__(self) -> _RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def at(self, when: float) -> float | None:
        """The last sample at or before ``when``."""
        before = [mb for t, mb in self.samples if t <= when]
        return before[-1] if before else None


def _refits(log: Path) -> list[str]:
    """The background refits the server logged: 'version N: S s'."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        match = re.search(r"refit on (\d+) battles published version (\d+) in ([\d.]+) s", line)
        if match:
            found.append(f"v{match.group(2)} {float(match.group(3)):.1f} s")
    return found


def _error_lines(log: Path) -> int:
    text = log.read_text(errors="replace")
    return text.count('"level": "error"') + text.count("Traceback")


def _rows(
    result: dict[str, Any], rss: _RssSampler, before_mb: float, log: Path, data: str, quick: bool
) -> list[Row]:
    buckets, total = result["buckets"], result["total"]
    bucket_s = result["bucket_s"]
    unit = "min" if bucket_s == 60 else f"{bucket_s:.0f} s"
    ends = [result["started"] + (i + 1) * bucket_s for i in range(len(buckets))]
    rss_series = [rss.at(t) for t in ends]
    rss_known = [mb for mb in rss_series if mb is not None]
    peak = max((mb for _, mb in rss.samples), default=float("nan"))
    first, last = (rss_known[0], rss_known[-1]) if rss_known else (float("nan"), float("nan"))
    growth = last - first
    versions = total["versions"]
    refits = _refits(log)
    series = "; ".join(
        f"{i + 1}: {b['requests']:,} req, {b['errors']} err, p50 {b['p50_ms']:.0f} / p99 "
        f"{b['p99_ms']:.0f} ms, RSS {mb if mb is not None else float('nan'):.0f} MB, "
        f"v{','.join(map(str, b['versions']))}"
        for i, (b, mb) in enumerate(zip(buckets, rss_series, strict=True))
    )
    mix = ", ".join(f"{kind} {share:.0%}" for kind, share in MIX)
    load = (
        f"an open loop at {result['total']['requests'] / result['elapsed_s']:.1f} req/s "
        f"(due {RATE:.0f} req/s; sent over 50 ms late: {result['late']:,}) from a "
        f"second process: {mix}; {result['battles_sent']:,} new votes, a fifth of the vote "
        f"posts a batch sent before again; background refit every {bucket_s:.0f} s"
    )
    errors = total["errors"]
    statuses = ", ".join(f"{k} × {n}" for k, n in total["statuses"].items()) or "none"
    first_p99, last_p99 = buckets[0]["p99_ms"], buckets[-1]["p99_ms"]
    drift = last_p99 / first_p99 if first_p99 > 0 else float("nan")
    rss_met = growth < RSS_GROWTH_GOAL_MB or growth < RSS_GROWTH_GOAL_SHARE * first
    rows = [
        make_row(
            "errors (status outside 2xx, or no answer)",
            data,
            ours=f"{errors:,} in {total['requests']:,} ({total['server_errors']} 5xx)",
            goal="0",
            met=None if quick else errors == 0 and result["inconsistent"] == 0,
            notes=f"{load}; statuses: {statuses}; ingest answers that did not add up "
            f"(accepted/duplicates): {result['inconsistent']}; error lines in the server's "
            f"log: {_error_lines(log)}",
        ),
        make_row(
            f"server RSS, first {unit} → last {unit}",
            data,
            ours=f"{first:.0f} → {last:.0f} MB ({growth:+.0f} MB, {growth / first:+.1%})",
            goal=f"< {RSS_GROWTH_GOAL_MB:.0f} MB or < {RSS_GROWTH_GOAL_SHARE:.0%} growth",
            met=None if quick else rss_met,
            notes=f"VmRSS of the plb serve process, read once a second, at the end of each "
            f"{unit}: {', '.join(f'{mb:.0f}' for mb in rss_known)} MB; before the load "
            f"{before_mb:.0f} MB, peak {peak:.0f} MB",
        ),
        make_row(
            f"p99 latency, last {unit} vs first",
            data,
            ours=f"{first_p99:.0f} → {last_p99:.0f} ms (×{drift:.2f})",
            goal=f"within {P99_DRIFT_GOAL:.0f}×",
            met=None if quick else drift <= P99_DRIFT_GOAL,
            notes=f"latency from the due time; per {unit}: {series}",
        ),
        make_row(
            "latency over the whole run, by request",
            data,
            ours=f"p50 {total['p50_ms']:.1f} ms, p99 {total['p99_ms']:.1f} ms, "
            f"max {total['max_ms']:.0f} ms",
            notes="; ".join(
                f"{kind}: {k['requests']:,} req, p50 {k['p50_ms']:.1f} / p99 {k['p99_ms']:.1f} ms"
                for kind, k in total["by_kind"].items()
            ),
        ),
        make_row(
            "model versions served under load",
            data,
            ours=f"{len(versions)} versions ({min(versions, default=0)}–"
            f"{max(versions, default=0)})",
            notes=f"versions the answers named; background refits in the server's log "
            f"(version, time): {', '.join(refits) or 'none'}",
        ),
    ]
    return rows


def run(quick: bool = False) -> list[Row]:
    """Run benchmark I; ``quick``: the 60-user fit, 15 s, goals not evaluated."""
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        return [make_row("the soak", "—", ours="skipped", notes=NO_REDIS_SERVER)]
    fit = _fit_dir(quick)
    duration = QUICK_DURATION_S if quick else DURATION_S
    bucket_s = QUICK_BUCKET_S if quick else BUCKET_S
    manifest = json.loads((fit / "manifest.json").read_text(encoding="utf-8"))
    data = (
        f"plb simulate: {manifest['n_users']} users, {manifest['n_battles']:,} votes, "
        f"{len(manifest['models'])} models; plb serve (1 worker) on Redis (AOF, fsync every "
        f"second); {duration / 60:.1f} min"
    )
    with tempfile.TemporaryDirectory(prefix="plb-soak-") as tmp_dir:
        tmp = Path(tmp_dir)
        try:
            with _redis(redis_server, tmp) as redis_url:
                env = _env(
                    PLB_INGEST_KEY=_INGEST_KEY,
                    PLB_ADMIN_KEY=_ADMIN_KEY,
                    PLB_TOKEN_SECRET=_TOKEN_SECRET,
                    PLB_REFIT_INTERVAL_S=str(bucket_s),
                    PLB_RATE_LIMIT_PER_ADDRESS="off",
                    PLB_RATE_LIMIT_PER_KEY="off",
                )
                port = _free_port()
                base = f"http://{_HOST}:{port}"
                command = [sys.executable, "-m", "service.cli", "serve", str(fit)]
                command += ["--redis-url", redis_url, "--host", _HOST, "--port", str(port)]
                log = tmp / "serve.log"
                with _process(command, env, log, lambda: _answers(base + "/healthz"), 300.0) as p:
                    spec = soak_spec(
                        base,
                        fit,
                        admin_key=_ADMIN_KEY,
                        ingest_key=_INGEST_KEY,
                        duration_s=duration,
                        bucket_s=bucket_s,
                    )
                    with _RssSampler(p.pid) as rss:
                        before = rss.read() or float("nan")
                        result = _load(spec, tmp)
                    rows = _rows(result, rss, before, log, data, quick)
                    (ROOT / "bench" / "out").mkdir(exist_ok=True)
                    name = "soak-quick.json" if quick else "soak.json"
                    (ROOT / "bench" / "out" / name).write_text(json.dumps(result, indent=1))
        except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as exc:
            return [
                make_row("the soak", data, ours="error", goal="runs", met=False,
                         notes=error_text(exc))
            ]  # fmt: skip
    return rows


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0):
            return True
    except OSError:
        return False


def _load(spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    spec_path, out = tmp / "soak.json", tmp / "soak-result.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    command = [sys.executable, "-m", "bench.service.soak", "load", str(spec_path), str(out)]
    timeout = spec["duration_s"] + REQUEST_TIMEOUT_S + 120
    done = subprocess.run(
        command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"the load process exited with {done.returncode}: {tail}")
    return dict(json.loads(out.read_text(encoding="utf-8")))


if __name__ == "__main__":
    sys.exit(main())
