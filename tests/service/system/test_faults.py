"""Faults with real processes (issue 7, item 3): every acknowledged vote is kept exactly once.

* ``plb serve`` killed with SIGKILL while several clients post batches of votes, then
  started again on the same store (the embedded SQLite file, or Redis), and every batch
  posted again, as a client that never saw its answer would;
* ``redis-server`` restarted (SIGTERM), and killed with SIGKILL then started, while the
  clients post: requests meanwhile get a 503 ("the store is unavailable", naming no
  address), never a 500 or a hang, and the same service process recovers by itself.

Afterwards the store, opened directly, holds every acknowledged battle exactly once and
nothing of a batch half; its Elo state is :func:`service.live.votes.elo_update` replayed over
the stored battles in order, the live Elo the service answers is that state, and each
voter's personal leaderboard counts all of their stored votes. The store-level SIGKILL
tests are in ``tests/service/store/test_embedded.py``.
"""

from __future__ import annotations

import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.live.votes import elo_update
from service.pipeline.artifacts import load_fit
from service.store import open_store
from tests.redis_server import RedisServer, require_redis_server
from tests.service.conftest import ADMIN, ADMIN_KEY, INGEST, INGEST_KEY, ServeProcess

pytestmark = pytest.mark.slow

ENV = {
    "PLB_INGEST_KEY": INGEST_KEY,
    "PLB_ADMIN_KEY": ADMIN_KEY,
    "PLB_REFIT_INTERVAL_S": "0",
    "PLB_VERSION_POLL_S": "0",
    "PLB_RATE_LIMIT_PER_ADDRESS": "off",
    "PLB_RATE_LIMIT_PER_KEY": "off",
    # durability, not integrity: every acknowledged vote counts on the live board at once
    "PLB_ESTABLISHED_DAYS": "0",
    "PLB_DAILY_VOTE_CAP": "0",
}
CLIENTS = 4
BATCH = 3  # battles per POST
USERS = tuple(f"fault-user-{i}" for i in range(6))
CLIENT_TIMEOUT_S = 10.0  # a request unanswered this long counts as a hang
WAIT_S = 30.0  # the most any phase waits for progress


@dataclass
class Batch:
    """One POST of a client, and what became of it.

    Attributes
    ----------
    battles : list of dict
        The battles posted, each with its own ``battle_id``.
    status : int or None
        The HTTP status of the last attempt; ``None`` when no answer came (a connection
        refused or cut, or a timeout).
    detail : str
        The error's ``detail``, or the transport error.
    acknowledged : bool
        Whether an attempt was answered 200 before the retries of the test.
    """

    battles: list[dict[str, Any]]
    status: int | None = None
    detail: str = ""
    acknowledged: bool = False


class Voters:
    """``CLIENTS`` threads, each posting new batches of votes back to back until stopped.

    Parameters
    ----------
    url : str
        The service.
    models : tuple of str
        Models to draw the battles from.
    stop_on_no_answer : bool
        Whether a client stops at its first request without an answer (the service
        was killed), or goes on to its next batch after a short pause.
    """

    def __init__(self, url: str, models: tuple[str, ...], *, stop_on_no_answer: bool) -> None:
        self.url = url
        self.models = models
        self.stop_on_no_answer = stop_on_no_answer
        self.batches: list[list[Batch]] = [[] for _ in range(CLIENTS)]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.in_flight = 0
        self._threads = [
            threading.Thread(target=self._client, args=(i,), name=f"voter-{i}", daemon=True)
            for i in range(CLIENTS)
        ]

    def _batch(self, client: int, index: int) -> list[dict[str, Any]]:
        rng = random.Random(client * 100_003 + index)
        battles = []
        for j in range(BATCH):
            a, b = rng.sample(self.models, 2)
            battles.append(
                {
                    "battle_id": f"fault-{client}-{index}-{j}",
                    "model_a": a,
                    "model_b": b,
                    "winner": rng.choice(["model_a", "model_b", "tie"]),
                    "user_id": rng.choice(USERS),
                }
            )
        return battles

    def _client(self, client: int) -> None:
        with httpx.Client(base_url=self.url, headers=INGEST, timeout=CLIENT_TIMEOUT_S) as http:
            for index in range(100_000):
                if self._stop.is_set():
                    return
                batch = Batch(self._batch(client, index))
                self.batches[client].append(batch)
                with self._lock:
                    self.in_flight += 1
                try:
                    post(http, batch)
                finally:
                    with self._lock:
                        self.in_flight -= 1
                batch.acknowledged = batch.status == 200
                if batch.status != 200:
                    if batch.status is None and self.stop_on_no_answer:
                        return
                    time.sleep(0.02)

    @property
    def all(self) -> list[Batch]:
        """Every batch tried, client by client, each client's in order."""
        return [batch for batches in self.batches for batch in batches]

    def acknowledged(self) -> int:
        """How many batches were answered 200 so far."""
        return sum(batch.acknowledged for batch in self.all)

    def reached(self, n: int) -> Callable[[], bool]:
        """A condition: ``n`` batches or more were acknowledged."""
        return lambda: self.acknowledged() >= n

    def start(self) -> None:
        """Start every client."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop every client after its current request, and wait for them."""
        self._stop.set()
        for thread in self._threads:
            thread.join(CLIENT_TIMEOUT_S + 5)
        assert not any(t.is_alive() for t in self._threads), "a client thread hangs"


def post(http: httpx.Client, batch: Batch) -> dict[str, Any] | None:
    """POST ``batch``; record its status and detail; the answer's JSON when 200."""
    try:
        response = http.post("/v1/battles", json={"battles": batch.battles})
    except httpx.TransportError as error:
        batch.status, batch.detail = None, f"{type(error).__name__}: {error}"
        return None
    batch.status = response.status_code
    if response.status_code == 200:
        return dict(response.json())
    try:
        batch.detail = str(response.json().get("detail"))
    except ValueError:
        batch.detail = response.text[:500]
    return None


def wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    """Poll ``condition`` every 10 ms; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.01)


@contextmanager
def logs_shown_on_failure(*logs: Path) -> Iterator[None]:
    """On any failure, write the end of each log to stderr (pytest shows it)."""
    try:
        yield
    except BaseException:
        for log in logs:
            text = log.read_text(errors="replace") if log.exists() else "(no log)"
            sys.stderr.write(f"\n----- {log} (last 8000 characters) -----\n{text[-8000:]}\n")
        raise


def serve(fit: Path, store_args: list[str], tmp_path: Path, name: str) -> ServeProcess:
    """``plb serve FIT STORE_ARGS`` on a free port, healthy; its stderr in ``name.log``."""
    process = ServeProcess([str(fit), *store_args], tmp_path, tmp_path / f"{name}.log", ENV)
    try:
        process.wait_healthy()
    except BaseException:
        process.stop()
        raise
    return process


def fit_models(fit: Path) -> tuple[str, ...]:
    """The models of the fit, sorted."""
    return tuple(sorted(m["model"] for m in load_fit(fit).leaderboards["bt"]["models"]))


def retry_everything(url: str, voters: Voters) -> None:
    """Post every batch again, in each client's order: all 200, nothing counted twice."""
    with httpx.Client(base_url=url, headers=INGEST, timeout=CLIENT_TIMEOUT_S) as http:
        for batch in voters.all:
            again = Batch(batch.battles)
            result = post(http, again)
            assert result is not None, f"a retry answered {again.status}: {again.detail}"
            assert result["rejected"] == []
            assert result["accepted"] + result["duplicates"] == BATCH, result
            if batch.acknowledged:  # stored before: all of it is a duplicate now
                assert (result["accepted"], result["duplicates"]) == (0, BATCH), result


def check_service(url: str, fit: Path, kept: list[dict[str, Any]]) -> None:
    """The live Elo is the stored state; each voter's leaderboard counts all their votes."""
    with httpx.Client(base_url=url, headers=ADMIN, timeout=CLIENT_TIMEOUT_S) as http:
        elo = http.get("/v1/leaderboard", params={"method": "elo"})
        assert elo.status_code == 200, elo.text
        fitted = load_fit(fit).leaderboards["elo"]["n_battles"]
        assert elo.json()["n_battles"] == fitted + len(kept)
        # the store's Elo state (the public board keeps it within the published intervals)
        stored = http.get("/v1/admin/integrity").json()["elo_every_vote"]
        assert stored == pytest.approx(replayed_elo(fit, kept), abs=0.0051)
        for user in USERS:
            board = http.get(f"/v1/users/{user}/leaderboard")
            assert board.status_code == 200, board.text
            mine = sum(b["user_id"] == user for b in kept)
            assert board.json()["n_battles"] == mine, f"{user}'s leaderboard is stale"


def replayed_elo(fit: Path, battles: list[dict[str, Any]]) -> dict[str, float]:
    """The fit's Elo state moved by ``battles`` in order, in one go."""
    start = {m["model"]: m["rating"] for m in load_fit(fit).leaderboards["elo"]["models"]}
    return elo_update(start, battles)


def check_store(
    store_kwargs: dict[str, Any], fit: Path, voters: Voters, *, retried: bool
) -> list[dict[str, Any]]:
    """The store, opened directly, holds each battle at most once, and whole batches.

    Every acknowledged battle is there; after the retries, every battle tried is. The Elo
    state is :func:`~service.live.votes.elo_update` replayed over the stored battles. Returns
    the stored battles.
    """
    with open_store(**store_kwargs) as store:
        stored = store.battles()
        elo = store.elo()
        assert store.n_battles() == len(stored)
    ids = [b["battle_id"] for b in stored]
    assert len(ids) == len(set(ids)), "a battle is stored twice"
    tried = {b["battle_id"]: b for batch in voters.all for b in batch.battles}
    acknowledged = {
        b["battle_id"] for batch in voters.all if batch.acknowledged for b in batch.battles
    }
    assert acknowledged <= set(ids), "an acknowledged battle is missing"
    assert set(ids) <= set(tried), "a battle nobody posted is stored"
    if retried:
        assert set(ids) == set(tried), "a battle posted again is missing"
    for battle in stored:
        sent = tried[battle["battle_id"]]
        assert {k: battle[k] for k in sent} == sent
    position = {battle_id: i for i, battle_id in enumerate(ids)}
    for batch in voters.all:  # each batch stored whole or not at all, together, in order
        where = [position.get(b["battle_id"]) for b in batch.battles]
        if where[0] is None:
            assert where == [None] * BATCH, f"half a batch is stored: {where}"
        else:
            assert where == list(range(where[0], where[0] + BATCH)), where
    assert elo == pytest.approx(replayed_elo(fit, stored), abs=1e-6)
    return stored


@pytest.mark.parametrize("backend", ["embedded", "redis"])
def test_kill_9_mid_ingest_then_restart_and_retry(
    backend: str, shared_fit_no_features: Path, tmp_path: Path
) -> None:
    fit = shared_fit_no_features
    redis: RedisServer | None = None
    if backend == "redis":
        redis = RedisServer(tmp_path / "redis", require_redis_server())
        redis.start()
        store_args = ["--redis-url", redis.url]
        store_kwargs: dict[str, Any] = {"redis_url": redis.url}
    else:
        store_args = ["--store", str(tmp_path / "store.sqlite")]
        store_kwargs = {"path": tmp_path / "store.sqlite"}
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    try:
        with logs_shown_on_failure(*logs):
            first = serve(fit, store_args, tmp_path, "first")
            voters = Voters(first.url, fit_models(fit), stop_on_no_answer=True)
            try:
                voters.start()
                wait_until(voters.reached(40), "40 acknowledged batches")
                wait_until(lambda: voters.in_flight >= 2, "two requests in flight")
                first.process.send_signal(signal.SIGKILL)
                first.process.wait(10)
            finally:
                voters.stop()
                first.stop()
            assert first.process.returncode == -signal.SIGKILL
            statuses = {batch.status for batch in voters.all}
            assert statuses <= {200, None}, [(b.status, b.detail) for b in voters.all]
            assert None in statuses  # some request was cut off by the kill
            check_store(store_kwargs, fit, voters, retried=False)

            second = serve(fit, store_args, tmp_path, "second")
            try:
                retry_everything(second.url, voters)
                kept = check_store(store_kwargs, fit, voters, retried=True)
                check_service(second.url, fit, kept)
            finally:
                second.stop()
            check_store(store_kwargs, fit, voters, retried=True)  # the service stopped
    finally:
        if redis is not None:
            redis.stop()


def test_redis_restart_and_crash_mid_ingest(shared_fit_no_features: Path, tmp_path: Path) -> None:
    fit = shared_fit_no_features
    redis = RedisServer(tmp_path / "redis", require_redis_server())
    redis.start()
    log = tmp_path / "serve.log"
    try:
        with logs_shown_on_failure(log, redis.log_path):
            service = serve(fit, ["--redis-url", redis.url], tmp_path, "serve")
            voters = Voters(service.url, fit_models(fit), stop_on_no_answer=False)
            try:
                voters.start()
                wait_until(voters.reached(20), "20 acknowledged batches")
                for fault in ("restart", "crash"):
                    done = voters.acknowledged()
                    if fault == "restart":
                        redis.restart()  # SIGTERM, then start again on the same AOF
                    else:
                        redis.crash()  # SIGKILL: no shutdown, no final flush
                        time.sleep(1.0)  # an outage the clients cannot miss
                        redis.start()
                    wait_until(
                        voters.reached(done + 20),
                        f"20 more acknowledged batches after the Redis {fault}",
                    )
            finally:
                voters.stop()
            assert service.process.poll() is None, "the service died"
            outage = [b for b in voters.all if b.status != 200]
            assert outage, "no request met the outage"
            for batch in outage:
                assert batch.status == 503, (batch.status, batch.detail)
                assert batch.detail == "the store is unavailable", batch.detail
            try:
                check_store({"redis_url": redis.url}, fit, voters, retried=False)
                retry_everything(service.url, voters)
                kept = check_store({"redis_url": redis.url}, fit, voters, retried=True)
                check_service(service.url, fit, kept)
            finally:
                service.stop()
    finally:
        redis.stop()
