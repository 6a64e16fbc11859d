"""Fixtures shared by every test module."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from filelock import FileLock

from ranking.types import PairwiseData
from tests.redis_server import RedisServer, require_redis_server

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ARENA_140K = SHARED / "data" / "arena-140k" / "battles.csv.gz"


#: Fixture scopes built once per module (or class): their tests share one xdist worker.
_SHARED_SCOPES = frozenset({"module", "class", "package"})


#: The variables that set how many threads BLAS and OpenMP (PyTorch's too) start.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config: pytest.Config) -> None:
    """Give each xdist worker its share of the cores for BLAS and OpenMP.

    Each library otherwise starts a thread per core in every worker, and the processes
    the tests start: on 2 cores, 2 workers ran 4 or more busy numeric threads that waited
    on each other. As scikit-learn's own test configuration does, a worker gets ``cores //
    workers`` threads (at least 1): in the libraries loaded already (threadpoolctl), and,
    through the environment, in those loaded later and in child processes. Where the
    environment names a thread count, it is kept.
    """
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None or any(name in os.environ for name in THREAD_VARIABLES):
        return
    from threadpoolctl import threadpool_limits

    allowed = max(1, (os.cpu_count() or 1) // int(workers))
    os.environ.update({name: str(allowed) for name in THREAD_VARIABLES})
    threadpool_limits(allowed)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep a module's tests on one worker under ``pytest -n N --dist loadgroup``.

    A test that uses a fixture built once per module (a fit, a served app) joins its
    module's ``xdist_group``, so that fixture is built once, not once per worker; every
    other test goes to whichever worker is free. Runs before xdist reads the groups.
    """
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker("xdist_group"):
            continue
        scopes = {d.scope for defs in info.name2fixturedefs.values() for d in defs}
        if scopes & _SHARED_SCOPES:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The folder ``name``, filled by ``build(folder)`` once for the whole test run.

    A session fixture is otherwise built once per xdist worker: a fit of tens of seconds
    twice under ``make test``. Here the first worker to ask builds it under the run's
    shared temporary folder while the others wait on a file lock (pytest-xdist's recipe
    for session fixtures), then every worker reads the same folder; without xdist it is
    the session's own. A build that fails leaves nothing marked done, so the next asker
    builds again (and fails the same way, as its own test's error).

    Parameters
    ----------
    tmp_path_factory : pytest.TempPathFactory
        The session's temporary folders.
    name : str
        The folder's name, unique among the things built once.
    build : callable
        Fills the (new, empty) folder it is given.

    Returns
    -------
    Path
        The folder, built. Its readers must not change it: every worker shares it.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's own
    folder = root / f"built-once-{name}"
    done = root / f"built-once-{name}.done"
    with FileLock(root / f"built-once-{name}.lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def arena_path() -> Path:
    """The shared real Chatbot Arena log; tests that need it skip where it is absent."""
    if not ARENA_140K.exists():
        pytest.skip(f"the shared real battle log is absent (looked for {ARENA_140K})")
    return ARENA_140K


@dataclass
class Stage:
    """One stage a :class:`RecordedProgress` was told of, and the steps advanced."""

    name: str
    total: int
    unit: str
    done: int = 0
    calls: int = 0


@dataclass
class RecordedProgress:
    """A :class:`ranking.progress.Progress` that records its stages instead of drawing."""

    stages: list[Stage] = field(default_factory=list)

    def __call__(self, stage: str, total: int, unit: str, /) -> object:
        entry = Stage(stage, total, unit)
        self.stages.append(entry)

        def advance(steps: int) -> None:
            assert steps > 0, f"{stage}: advanced by {steps}"
            entry.done += steps
            entry.calls += 1

        return advance

    def named(self) -> list[str]:
        return [s.name for s in self.stages]

    def assert_complete(self) -> None:
        """Every stage was advanced exactly to its total."""
        for s in self.stages:
            assert s.done == s.total, f"{s.name}: {s.done} of {s.total} {s.unit}"


def simulate_votes(
    n_models: int, n_votes: int, seed: int, tie_share: float = 0.2, spread: float = 1.0
) -> tuple[PairwiseData, np.ndarray]:
    """Votes drawn from a known Bradley-Terry model with ties; returns them and the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(scale=spread, size=n_models)
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    p = 1.0 / (1.0 + np.exp(truth[b] - truth[a]))
    y = (rng.random(n_votes) < p).astype(float)
    y[rng.random(n_votes) < tie_share] = 0.5
    models = tuple(f"m{j}" for j in range(n_models))
    data = PairwiseData(models, np.stack([a, b], axis=1), y, np.ones(n_votes))
    return data, truth - truth.mean()


def simulate_users(
    n_users: int,
    votes_per_user: int,
    n_models: int,
    seed: int,
    deviation: float = 0.7,
    tie_share: float = 0.0,
) -> tuple[PairwiseData, np.ndarray, np.ndarray, np.ndarray]:
    """Users whose true strengths are a population vector plus a Gaussian deviation.

    Returns the votes, each vote's user, the users' true strengths ``(U, k)`` and the
    population's ``(k,)``.
    """
    rng = np.random.default_rng(seed)
    population = rng.normal(0.0, 0.8, n_models)
    truth = population + rng.normal(0.0, deviation, (n_users, n_models))
    users = np.repeat(np.arange(n_users), rng.poisson(votes_per_user, n_users))
    rng.shuffle(users)
    a = rng.integers(0, n_models, users.size)
    b = (a + rng.integers(1, n_models, users.size)) % n_models
    p = 1.0 / (1.0 + np.exp(truth[users, b] - truth[users, a]))
    y = (rng.random(users.size) < p).astype(float)
    y[rng.random(users.size) < tie_share] = 0.5
    models = tuple(f"m{j}" for j in range(n_models))
    data = PairwiseData(models, np.stack([a, b], axis=1), y, np.ones(users.size))
    return data, users, truth, population


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real ``redis-server`` on a free loopback port, AOF on, for the whole session.

    Skips where ``redis-server`` is not on ``PATH``, except under ``CI=true``, where that
    fails: CI must never silently skip the Redis tests.
    """
    executable = require_redis_server()
    server = RedisServer(tmp_path_factory.mktemp("redis"), executable)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, running (restarted if a test left it stopped) and empty."""
    import redis

    redis_server.resume()  # a test may have left it paused, or stopped
    redis_server.start()
    client = redis.Redis.from_url(redis_server.url, socket_timeout=5)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url
