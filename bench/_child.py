"""Tasks run in a fresh interpreter, so that their peak memory can be measured alone.

``python -m bench._child TASK ARGS_JSON OUT_PATH`` runs ``TASK`` with the JSON object
``ARGS_JSON`` as keyword arguments and writes the JSON document it returns to
``OUT_PATH``. Times inside are :func:`time.perf_counter` seconds of the work alone,
without the interpreter start and the imports.

``python -m bench._child --measure TIMEOUT TASK ARGS_JSON OUT_PATH`` is the launcher: it
runs the above as its only child and writes that child's peak RSS (``ru_maxrss`` of
``RUSAGE_CHILDREN``, KiB) to ``OUT_PATH.rss``. The launcher exists because Linux carries
the peak RSS of the process that spawned a program over ``execve``: spawned straight from
a benchmark holding gigabytes, a child would report the benchmark's peak, not its own.
This small launcher imports nothing heavy, so the figure it passes on is the task's.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["TASKS", "main"]


def _rss_mb() -> float:
    """Peak RSS of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6


def baseline() -> dict[str, Any]:
    """Import numpy and pandas and nothing else."""
    import numpy
    import pandas

    return {"numpy": numpy.__version__, "pandas": pandas.__version__}


def ingest_fit(path: str) -> dict[str, Any]:
    """Ours: read and validate the log, turn it into arrays, fit BT with sandwich intervals."""
    from ranking.io.frames import pairwise_from_battles
    from ranking.io.ingest import read_battles
    from ranking.leaderboard import fit_leaderboard

    imported = _rss_mb()
    times: dict[str, float] = {}
    start = time.perf_counter()
    battles = read_battles(path, skip_invalid=True).battles
    times["ingest"] = time.perf_counter() - start
    data = pairwise_from_battles(battles)  # the frame stays alive, as in the CLI
    times["arrays"] = time.perf_counter() - start - times["ingest"]
    board = fit_leaderboard(data, method="bt", interval="sandwich")
    times["total"] = time.perf_counter() - start
    times["fit"] = times["total"] - times["ingest"] - times["arrays"]
    return {"times": times, "n_battles": board.n_battles, "rss_after_imports_mb": imported}


def ingest_fit_reference(path: str) -> dict[str, Any]:
    """Reference: ``pandas.read_csv``, FastChat-style arrays, L-BFGS fit and sandwich."""
    import pandas as pd

    from bench.reference import (
        fastchat_arrays,
        fit_bt_reference,
        reference_blas,
        sandwich_reference,
    )

    imported = _rss_mb()
    times: dict[str, float] = {}
    start = time.perf_counter()
    battles = pd.read_csv(path)
    times["ingest"] = time.perf_counter() - start
    matchups, outcomes, models = fastchat_arrays(battles)
    times["arrays"] = time.perf_counter() - start - times["ingest"]
    with reference_blas():
        ratings, _ = fit_bt_reference(len(models), matchups, outcomes)
        sandwich_reference(ratings, matchups, outcomes)
    times["total"] = time.perf_counter() - start
    times["fit"] = times["total"] - times["ingest"] - times["arrays"]
    return {"times": times, "n_battles": len(outcomes), "rss_after_imports_mb": imported}


def user_fit(
    n_users: int, fits: Sequence[Sequence[str]], seed: int, report_users: Sequence[int] = ()
) -> dict[str, Any]:
    """Simulate the per-user votes, then time each ``(method, shrinkage)`` fit in ``fits``.

    The Elo-scale ratings of ``report_users`` from each fit are returned too.
    """
    from bench.synthetic import simulate_user_votes
    from ranking.users import fit_user_ratings

    votes = simulate_user_votes(n_users, seed=seed)
    after_data = _rss_mb()
    times: dict[str, float] = {}
    prior_sd: dict[str, float | None] = {}
    ratings: dict[str, list[list[float]]] = {}
    for method, shrinkage in fits:
        start = time.perf_counter()
        fit = fit_user_ratings(
            votes.data,
            votes.users,
            votes.n_users,
            method=method,  # type: ignore[arg-type]
            shrinkage=shrinkage,  # type: ignore[arg-type]
        )
        key = f"{method}/{shrinkage}"
        times[key] = time.perf_counter() - start
        prior_sd[key] = fit.prior_sd
        if report_users:
            ratings[key] = fit.ratings[list(report_users)].tolist()
    return {
        "times": times,
        "prior_sd": prior_sd,
        "n_votes": int(votes.users.size),
        "rss_after_data_mb": after_data,
        "ratings": ratings,
    }


TASKS: dict[str, Callable[..., dict[str, Any]]] = {
    "baseline": baseline,
    "ingest_fit": ingest_fit,
    "ingest_fit_reference": ingest_fit_reference,
    "user_fit": user_fit,
}


def _measure(timeout: float, argv: Sequence[str]) -> int:
    """Run ``TASK ARGS_JSON OUT_PATH`` as the only child; write its peak RSS (KiB)."""
    command = [sys.executable, "-m", "bench._child", *argv]
    child = subprocess.Popen(command)
    try:
        code = child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        print(f"bench task timed out after {timeout:g} s", file=sys.stderr)
        return 124
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(f"{argv[-1]}.rss", "w", encoding="utf-8") as stream:
        stream.write(str(peak_kib))
    return code


def main(argv: Sequence[str]) -> int:
    """Run one task, ``TASK ARGS_JSON OUT_PATH``, or launch and measure one (``--measure``)."""
    if argv[0] == "--measure":
        return _measure(float(argv[1]), argv[2:])
    task, args, out = argv
    result = TASKS[task](**json.loads(args))
    with open(out, "w", encoding="utf-8") as stream:
        json.dump(result, stream)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
