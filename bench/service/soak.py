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

The load process is :mod:`bench.service.soak_load` (``python -m bench.service.soak_load
load SPEC OUT``).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.common import ROOT, Row, error_text, make_row
from bench.service.processes import NO_REDIS_SERVER, _env, _fit_dir, _free_port, _process, _redis
from bench.service.soak_load import BUCKET_S, MIX, RATE, REQUEST_TIMEOUT_S, soak_spec

__all__ = ["run"]

logger = logging.getLogger("bench")

DURATION_S = 600.0
#: Quick: two buckets of 5 s, a background refit every 5 s (the version served changes
#: under load at least once, and the first bucket is compared with the last as in full).
QUICK_DURATION_S = 10.0
QUICK_BUCKET_S = 5.0
RSS_GROWTH_GOAL_MB = 50.0
RSS_GROWTH_GOAL_SHARE = 0.10
P99_DRIFT_GOAL = 2.0
_ADMIN_KEY = "soak-admin-key-not-secret"
_INGEST_KEY = "soak-ingest-key-not-secret"
_TOKEN_SECRET = "soak-token-secret-not-secret"
_HOST = "127.0.0.1"


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
    """Run benchmark I; ``quick``: the 60-user fit, 10 s, goals not evaluated."""
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
    command = [sys.executable, "-m", "bench.service.soak_load", "load", str(spec_path), str(out)]
    timeout = spec["duration_s"] + REQUEST_TIMEOUT_S + 120
    done = subprocess.run(
        command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"the load process exited with {done.returncode}: {tail}")
    return dict(json.loads(out.read_text(encoding="utf-8")))
