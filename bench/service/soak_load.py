"""Benchmark I's load (issue 7): the soak's mixed load, in a process of its own.

``python -m bench.service.soak_load load SPEC OUT`` sends the mix of :data:`MIX` at a
fixed rate, an *open* loop: request ``i`` is due at ``i / rate`` seconds whether or not
earlier ones were answered, and its latency counts from that due time, so a stall shows
as latency rather than as a lower rate (no coordinated omission). :func:`soak_spec` is
what it needs (read tokens, bodies, models), :func:`drive` its loop, which
``tests/service/system/test_soak.py`` runs for a few seconds; :mod:`bench.service.soak`
starts the server and this process, and makes the rows.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import event_loop_runner, load_task_main

__all__ = ["BUCKET_S", "MIX", "RATE", "REQUEST_TIMEOUT_S", "drive", "main", "run_load", "soak_spec"]

RATE = 10.0  # requests a second, all kinds together: a moderate load here (see soak.run)
BUCKET_S = 60.0
REQUEST_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 256
IDLE_S = 2.0  # keep-alive connections idle for longer are not reused
N_QUERIES = 20
N_USERS = 20  # users of the fit whose leaderboards are read
N_NEW_USERS = 200  # new users who vote during the soak
#: Request kind and its share of the load.
MIX: tuple[tuple[str, float], ...] = (
    ("GET /v1/leaderboard", 0.30),
    ("GET /v1/leaderboard?method=elo", 0.20),
    ("GET /v1/users/{id}/leaderboard", 0.30),
    ("POST /v1/battles", 0.15),
    ("POST /v1/recommend", 0.05),
)


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
    """``python -m bench.service.soak_load load SPEC OUT``: run the soak's load, write its
    result."""
    return load_task_main("bench.service.soak_load", run_load, "JSON of soak_spec()", argv)


if __name__ == "__main__":
    sys.exit(main())
