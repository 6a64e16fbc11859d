"""Benchmark G (issue 6): the service under load, over Redis, from a second process.

A real ``redis-server`` and the service run as processes of their own on loopback: first
as ``plb serve`` (one uvicorn worker), then as ``uvicorn --workers 2`` with the same app
(:func:`serving_app`), the way to use two cores. Another process loads it: ``wrk`` for the
GETs where it is installed (far lighter than a Python client), else an asyncio loop over
raw keep-alive HTTP/1.1 connections (``python -m bench.service.load load SPEC OUT``: stdlib and
uvloop; httpx's ``AsyncClient`` was itself the bottleneck, some 130 req/s at 50
connections, see encode/httpx#3215); ``POST /v1/recommend`` always with that loop. Every
phase is bounded in time and in count. Beside recommend's latency at 4 clients, its CPU
against its embedding network's, in the bench's own process (:mod:`bench.service.recommend_cpu`).

The load generator shares the machine's cores with the server, so each GET phase has a
reference: the same load on a trivial Starlette app (:func:`trivial_app`) under the same
uvicorn workers, the most this client and uvicorn can do here; a hello-world FastAPI app
(:func:`hello_fastapi_app`) shows what the framework itself costs.

Two kinds of load (issue 18):

* **closed loop**: :data:`CLIENTS` connections, each sending its next request when the
  last one is answered; it measures throughput, and its latency is about clients / rate.
* **open loop** at fixed rates (:data:`OPEN_RATES`): request *i* is due at ``start + i /
  rate`` whatever happened to the others, and its latency is counted from that scheduled
  time, not from when it was sent, so a server (or client) that falls behind shows its
  queue in the latency instead of hiding it (no coordinated omission). Requests take a
  keep-alive connection from a pool of :data:`OPEN_CONNECTIONS` (more are never opened; a
  request waits for one, and that wait counts); the achieved rate, the errors and how
  late the client itself sent (``sent late p99``) are reported beside the percentiles.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench.common import Row, error_text, make_row
from bench.service.load import LoadResult, Request
from bench.service.phases import (
    _ADMIN_KEY,
    _PYTHON_LOAD,
    CLIENTS,
    N_QUERIES,
    N_USERS,
    OPEN_GOAL_RATE,
    OPEN_RATES,
    _Load,
    _load_worker,
    _meets,
    _References,
    _references,
    _workload,
)
from bench.service.processes import NO_REDIS_SERVER, _env, _fit_dir, _redis, _server
from bench.service.recommend_cpu import cpu_row
from bench.service.recommend_cpu import measure as measure_cpu

__all__ = ["run"]

logger = logging.getLogger("bench")

GET_P99_GOAL_MS = 20.0
GET_RPS_GOAL = 1000.0
#: Issue 18's goals for the user board on one worker: closed-loop req/s per store, and
#: p99 at 2,000 req/s open loop.
USER_RPS_GOALS = {"SQLite": 7000.0, "Redis": 5000.0}
OPEN_P99_GOAL_MS = 5.0
#: Phases at the goal's rate: one 10 s phase on the 2 shared cores moved p99 from 4.5 to
#: 8.6 ms between runs of the same build, so the goal is judged on the median of three.
OPEN_GOAL_REPEATS = 3
RECOMMEND_P99_GOAL_MS = 250.0
#: Recommend requests a second when every query was seen before (issue 18).
REPEATED_RPS_GOAL = 100.0
#: Batches of new queries whose recommend CPU is measured in the bench's own process.
CPU_BATCHES = 20
RECOMMEND_CLIENTS = (1, 4)  # few: the goal is latency, not throughput
_INGEST_KEY = "bench-ingest-key-not-secret"
_TOKEN_SECRET = "bench-token-secret-not-secret"


def _closed_notes(load: _Load) -> str:
    return (
        f"{load.tool} for {load.duration:.0f} s after {load.warmup:.0f} s of warm-up, on the "
        f"same cores as the server and Redis; a closed loop, so latency is about {CLIENTS} / "
        f"rate (p99 ≤ {GET_P99_GOAL_MS:.0f} ms takes some {CLIENTS * 1000 / GET_P99_GOAL_MS:,.0f} "
        "req/s or more); reference: the same load on a trivial Starlette app (one async "
        "route) under the same uvicorn workers, the ceiling of this client here; "
        "ratio = ours / reference req/s"
    )


def _user_notes(paths: list[str], store: str) -> str:
    return (
        f"{len(paths)} users in turn, each with its token (?token=), leaderboards stored in "
        f"{store} (each read once before); "
    )


def _new_queries(load: _Load, base: str, posts: list[Request]) -> dict[int, LoadResult]:
    """Recommend at each of :data:`RECOMMEND_CLIENTS`, every request with queries the
    server has not seen: the phases take turns over the batches, and none repeats one."""
    phases = len(RECOMMEND_CLIENTS)
    return {
        n: load.http(base, posts[i::phases], n, 5_000, fresh=True)
        for i, n in enumerate(RECOMMEND_CLIENTS)
    }


def _recommend_rows(
    name: str, data: str, recommend: dict[int, LoadResult], bodies: int, load: _Load, quick: bool
) -> list[Row]:
    rows = []
    for n, result in recommend.items():
        clients = f"{n} client{'s' if n > 1 else ''}"
        rows.append(
            make_row(
                f"POST /v1/recommend, {clients}, {name}",
                data,
                ours=result.text(),
                goal=f"p99 ≤ {RECOMMEND_P99_GOAL_MS:.0f} ms",
                met=_meets(result, RECOMMEND_P99_GOAL_MS, 0.0, quick),
                notes=f"{_PYTHON_LOAD}, {clients} back to back for "
                f"{load.duration:.0f} s after {load.warmup:.0f} s of warm-up (the goal is "
                f"latency); each request {N_QUERIES} simulated prompts not sent before "
                f"(each phase its own of {bodies // len(RECOMMEND_CLIENTS)} batches, warm-up "
                "included; it ends early rather than repeat one)",
            )
        )
    return rows


def _open_rows(
    what: str, data: str, results: dict[float, list[LoadResult]], refs: _References,
    load: _Load, notes: str, quick: bool,
) -> list[Row]:  # fmt: skip
    """A row a rate; of repeated phases, the one of median p99, every p99 in its notes
    (met: that p99, and no error in any of them)."""
    rows = []
    for rate, runs in results.items():
        result = sorted(runs, key=lambda r: r.p99_ms)[len(runs) // 2]
        ref = refs.open.get(rate)
        goal, met = "—", None
        if rate == OPEN_GOAL_RATE:
            goal = f"p99 ≤ {OPEN_P99_GOAL_MS:.0f} ms at {OPEN_GOAL_RATE:,.0f} req/s (issue 18)"
            met = _meets(result, OPEN_P99_GOAL_MS, 0.95 * rate, quick)
            if met is not None:
                met = met and all(r.errors == 0 for r in runs)
        repeated = ""
        if len(runs) > 1:
            p99s = ", ".join(f"{r.p99_ms:.2f}" for r in runs)
            repeated = f"; the median of {len(runs)} phases in turn, whose p99s were {p99s} ms"
        rows.append(
            make_row(
                f"{what}, open loop at {rate:,.0f} req/s",
                data,
                ours=result.text(),
                reference=None if ref is None else f"trivial app: {ref.text(errors=False)}",
                ratio=ref.p99_ms / result.p99_ms if ref and result.p99_ms > 0 else None,
                goal=goal,
                met=met,
                notes=notes + load.open_tool + repeated + "; ratio = reference p99 / ours "
                "(met: p99 and at least 95% of the rate achieved, no error)",
            )
        )
    return rows


def _one_worker_rows(
    store: str, env: dict[str, str], load: _Load, refs: _References, quick: bool
) -> list[Row]:
    """``plb serve`` on one worker over ``store``: both boards closed loop, the user board
    (and, over Redis, the aggregate board and recommend) open loop at each rate."""
    name = f"plb serve (1 uvicorn worker), {store}"
    logger.info("%s", name)
    log = load.tmp / f"serve-1-{store}.log"
    with _server("plb", 1, env, log) as base:
        paths, bodies, data = _workload(Path(env["PLB_FIT_DIR"]), base, env, load.users)
        board = load.get(base, ["/v1/leaderboard"])
        user = load.get(base, paths)
        user_open = load.open_rates(base, paths)
        board_open = {}
        recommend = {}
        repeated: LoadResult | None = None
        if store == "Redis":
            board_open = load.open_rates(base, ["/v1/leaderboard"])
            posts: list[Request] = [("POST", "/v1/recommend", b) for b in bodies]
            recommend = _new_queries(load, base, posts)
            # one batch over and over: after the first, every query is in the cache
            repeated = load.http(base, posts[:1], max(RECOMMEND_CLIENTS), 5_000)
    cpu = None
    if store == "Redis":  # the server stopped: the CPU of a recommend, in this process
        batches = [b["queries"] for b in bodies[-(CPU_BATCHES // (4 if quick else 1)) :]]
        cpu = measure_cpu(Path(env["PLB_FIT_DIR"]), batches)
    user_goal = USER_RPS_GOALS[store]
    rows = []
    for route, result, goal, rps in [
        ("/v1/leaderboard", board, f"p99 ≤ {GET_P99_GOAL_MS:.0f} ms at ≥ 1,000 req/s", None),
        ("/v1/users/{id}/leaderboard", user, f"≥ {user_goal:,.0f} req/s (issue 18)", user_goal),
    ]:
        ratio, fastapi_note = refs.ratios(result)
        met = (
            _meets(result, GET_P99_GOAL_MS, GET_RPS_GOAL, quick)
            if rps is None
            else _meets(result, float("inf"), rps, quick)
        )
        user_note = _user_notes(paths, store) if rps is not None else ""
        rows.append(
            make_row(
                f"GET {route}, {name}",
                data,
                ours=result.text(),
                reference=refs.closed_text(),
                ratio=ratio,
                goal=goal,
                met=met,
                notes=user_note + _closed_notes(load) + fastapi_note,
            )
        )
    what = f"GET /v1/users/{{id}}/leaderboard, {name}"
    rows += _open_rows(what, data, user_open, refs, load, _user_notes(paths, store), quick)
    what = f"GET /v1/leaderboard, {name}"
    rows += _open_rows(what, data, board_open, refs, load, "", quick)
    rows += _recommend_rows(name, data, recommend, len(bodies), load, quick)
    if cpu is not None:
        at_4 = recommend.get(max(RECOMMEND_CLIENTS))
        rows.append(cpu_row(cpu, data, None if at_4 is None else at_4.text(), N_QUERIES, quick))
    if repeated is not None:
        clients = max(RECOMMEND_CLIENTS)
        rows.append(
            make_row(
                f"POST /v1/recommend, the same {N_QUERIES} queries again, {clients} clients, "
                f"{name}",
                data,
                ours=repeated.text(),
                goal=f"≥ {REPEATED_RPS_GOAL:.0f} req/s (issue 18)",
                met=_meets(repeated, float("inf"), REPEATED_RPS_GOAL, quick),
                notes=f"{_PYTHON_LOAD}, {clients} clients back to back for "
                f"{load.duration:.0f} s after {load.warmup:.0f} s of warm-up, every request "
                "the same body: its queries' embeddings are in the served predictor's cache "
                "(PLB_EMBEDDING_CACHE) after the first",
            )
        )
    return rows


def _two_worker_rows(env: dict[str, str], load: _Load, quick: bool) -> list[Row]:
    """``uvicorn --workers 2`` over Redis: both boards closed loop, then recommend."""
    name = "uvicorn --workers 2, Redis"
    refs = _references(load, 2, open_loop=False)
    logger.info("%s", name)
    with _server("bench.service.apps:serving_app", 2, env, load.tmp / "serve-2.log") as base:
        paths, bodies, data = _workload(Path(env["PLB_FIT_DIR"]), base, env, load.users)
        board = load.get(base, ["/v1/leaderboard"])
        user = load.get(base, paths)
        posts: list[Request] = [("POST", "/v1/recommend", b) for b in bodies]
        recommend = _new_queries(load, base, posts)
    get_goal = f"p99 ≤ {GET_P99_GOAL_MS:.0f} ms at ≥ {GET_RPS_GOAL:,.0f} req/s"
    rows = [
        make_row(
            f"GET {route}, {name}",
            data,
            ours=result.text(),
            reference=refs.closed_text(),
            ratio=refs.ratios(result)[0],
            goal=get_goal,
            met=_meets(result, GET_P99_GOAL_MS, GET_RPS_GOAL, quick),
            notes=notes + _closed_notes(load),
        )
        for route, result, notes in [
            ("/v1/leaderboard", board, ""),
            ("/v1/users/{id}/leaderboard", user, _user_notes(paths, "Redis")),
        ]
    ]
    return rows + _recommend_rows(name, data, recommend, len(bodies), load, quick)


def _reference_rows(refs: _References, load: _Load) -> list[Row]:
    """The ceilings themselves: the hello-world FastAPI app against Starlette's."""
    if refs.fastapi is None:
        return []
    return [
        make_row(
            "GET / of a hello-world FastAPI app (1 uvicorn worker)",
            'one async route answering {"status": "ok"}',
            ours=refs.fastapi.text(errors=False),
            reference=f"trivial Starlette app: {refs.closed.text(errors=False)}",
            ratio=refs.fastapi.rps / refs.closed.rps if refs.closed.rps > 0 else None,
            notes=_closed_notes(load) + "; what the framework alone costs",
        )
    ]


#: Quick mode: the same phases, servers and rows on less: 5 users read of the fit's 60,
#: phases of 0.3 s after 0.1 s of warm-up, one open-loop rate (the goal's) where the full
#: run steps through :data:`~bench.service.phases.OPEN_RATES`, and one load process for
#: every phase where the full run starts one a phase (most of what is left is the servers'
#: start-up, their imports).
QUICK_USERS = 5
QUICK_DURATION_S, QUICK_WARMUP_S = 0.3, 0.1


def run(quick: bool = False) -> list[Row]:
    """Run benchmark G; ``quick`` reads :data:`QUICK_USERS` users of a fit of 60, runs
    phases of 0.3 s after 0.1 s of warm-up at one open-loop rate, and evaluates no goal."""
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        return [make_row("the service under load", "—", ours="skipped", notes=NO_REDIS_SERVER)]
    fit = _fit_dir(quick)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="plb-bench-") as tmp, ExitStack() as stack:
        # quick: one load process runs every phase (a process a phase in the full run)
        worker = stack.enter_context(_load_worker(Path(tmp))) if quick else None
        load = _Load(
            duration=QUICK_DURATION_S if quick else 10.0,
            warmup=QUICK_WARMUP_S if quick else 1.0,
            tmp=Path(tmp),
            wrk=shutil.which("wrk") is not None,
            goal_repeats=1 if quick else OPEN_GOAL_REPEATS,
            rates=(OPEN_GOAL_RATE,) if quick else OPEN_RATES,
            users=QUICK_USERS if quick else N_USERS,
            worker=worker,
        )
        with _redis(redis_server, Path(tmp)) as redis_url:
            env = _env(
                PLB_FIT_DIR=str(fit),
                PLB_INGEST_KEY=_INGEST_KEY,
                PLB_ADMIN_KEY=_ADMIN_KEY,
                PLB_TOKEN_SECRET=_TOKEN_SECRET,
                PLB_REFIT_INTERVAL_S="0",
                # one load generator on one address: the per-client limits would measure 429s
                PLB_RATE_LIMIT_PER_ADDRESS="off",
                PLB_RATE_LIMIT_PER_KEY="off",
            )
            stores = {
                "SQLite": {**env, "PLB_STORE_PATH": str(Path(tmp) / "store.sqlite")},
                "Redis": {**env, "PLB_REDIS_URL": redis_url},
            }
            try:
                refs = _references(load, 1, open_loop=True)
                rows += _reference_rows(refs, load)
                for store, store_env in stores.items():
                    rows += _one_worker_rows(store, store_env, load, refs, quick)
                rows += _two_worker_rows(stores["Redis"], load, quick)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                rows.append(
                    make_row("the service under load", "—", ours="error", met=False,
                             goal="runs", notes=error_text(exc))
                )  # fmt: skip
    return rows
