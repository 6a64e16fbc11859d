"""Benchmark U (issue 32): how fast ``plb`` answers, each command in a fresh process.

Every figure is the wall time of a new interpreter, start to exit, as a person at a
terminal waits for it (its CPU time, user and system, in the notes: on a shared machine
the steadier of the two); the median of several rounds, the commands of a round one after
another so that a busy moment of the shared machine touches them all alike. Each
command sits beside its reference from the same rounds:

* ``plb --help`` beside ``python -c pass`` (the interpreter's own start);
* ``plb leaderboard`` (``--ci none`` and the default sandwich intervals) beside reading
  the log alone (``read_battles``, what ``plb`` reads it with, imports included);
* ``plb leaderboard --where foo=1`` (a column the log lacks, refused) beside the same
  run without ``--where``.

The log is the real Arena log (``../shared/data/arena-140k/battles.csv.gz``, 135,634
votes); where it is absent the rows say so. A first untimed round fills numba's on-disk
cache (kept beside the modules, or in the user's cache folder where those cannot be
written), as any earlier run of ``plb`` has. ``--quick``: 2,000 simulated votes, one
round, no warm-up, no goal evaluated.

``python -m bench.service.cli_speed [--quick]`` prints the rows; ``python -m bench.run cli_speed``
writes them into bench/RESULTS.md.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import SHARED_DATA, Row, make_row, quick_option
from bench.synthetic import write_battle_csv

__all__ = ["ARENA", "run", "timed"]

#: The real Arena log beside the repository.
ARENA = SHARED_DATA / "arena-140k"
ARENA_LOG = ARENA / "battles.csv.gz"
#: Rounds of the full benchmark (the median of them is reported).
ROUNDS = 5
#: ``plb --help``'s goal, seconds.
HELP_GOAL = 0.3
#: ``plb leaderboard``'s goal: at most this many times reading the log alone.
READ_FACTOR = 2.0

_READ = "import sys\nfrom ranking.io.ingest import read_battles\nread_battles(sys.argv[1:])"


def timed(argv: list[str], expect: int = 0) -> tuple[float, float]:
    """The wall time and the CPU time (user and system) of ``argv`` in a new process,
    stdout and stderr discarded.

    Raises
    ------
    RuntimeError
        When the process exits with another code than ``expect``.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {detail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def _commands(log: Path) -> dict[str, tuple[list[str], int]]:
    """Name to (command line, expected exit code), in the order a round runs them."""
    python, plb = [sys.executable], [sys.executable, "-m", "service.cli"]
    return {
        "pass": ([*python, "-c", "pass"], 0),
        "help": ([*plb, "--help"], 0),
        "read": ([*python, "-c", _READ, str(log)], 0),
        "none": ([*plb, "leaderboard", "--ci", "none", str(log)], 0),
        "default": ([*plb, "leaderboard", str(log)], 0),
        "where": ([*plb, "leaderboard", "--where", "foo=1", str(log)], 2),
    }


def _medians(
    log: Path, rounds: int, *, warm_up: bool = True
) -> tuple[dict[str, float], dict[str, float]]:
    """Each command's median wall time, and its median CPU time, over ``rounds``."""
    commands = _commands(log)
    for argv, expect in commands.values() if warm_up else ():
        timed(argv, expect)  # untimed: numba's cache filled, the files in the page cache
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (argv, expect) in commands.items():
            wall, cpu = timed(argv, expect)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return (
        {name: statistics.median(times) for name, times in walls.items()},
        {name: statistics.median(times) for name, times in cpus.items()},
    )


def _rows(
    measured: tuple[dict[str, float], dict[str, float]], data: str, quick: bool, rounds: int
) -> list[Row]:
    seconds, cpu = measured
    read = seconds["read"]
    bound = READ_FACTOR * read

    def within(ours: float, goal: float) -> bool | None:
        return None if quick else ours <= goal

    def cpu_note(name: str, reference: str) -> str:
        return f"CPU {cpu[name]:.2f} s, reference's {cpu[reference]:.2f} s"

    median = f"median of {rounds} fresh processes"
    factor = f"≤ {READ_FACTOR:g}× reading"
    return [
        make_row(
            "plb --help",
            "no data",
            ours=seconds["help"],
            reference=seconds["pass"],
            goal=f"< {HELP_GOAL} s",
            met=within(seconds["help"], HELP_GOAL),
            notes=f"{median}; reference: python -c pass; {cpu_note('help', 'pass')}",
        ),
        make_row(
            "plb leaderboard --ci none",
            data,
            ours=seconds["none"],
            reference=read,
            goal=factor,
            met=within(seconds["none"], bound),
            notes=f"{median}; reference: read_battles of the log alone, imports included; "
            f"{seconds['none'] / read:.2f}× reading; {cpu_note('none', 'read')}",
        ),
        make_row(
            "plb leaderboard (sandwich intervals)",
            data,
            ours=seconds["default"],
            reference=read,
            goal=factor,
            met=within(seconds["default"], bound),
            notes=f"{median}; reference as above; {seconds['default'] / read:.2f}× reading; "
            + cpu_note("default", "read"),
        ),
        make_row(
            "plb leaderboard --where foo=1 (refused)",
            data,
            ours=seconds["where"],
            reference=seconds["none"],
            notes=f"{median}; reference: the same without --where; exit 2 from the log's "
            f"header alone, no row read; {cpu_note('where', 'none')}",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    """Run benchmark U; ``quick`` times 2,000 simulated votes once and evaluates no goal."""
    if quick:
        with tempfile.TemporaryDirectory(prefix="plb-bench-") as tmp:
            log = write_battle_csv(Path(tmp) / "battles.csv", 2_000, n_models=8, seed=0)
            measured = _medians(Path(log), 1, warm_up=False)
            return _rows(measured, "2,000 simulated votes", True, 1)
    if not ARENA_LOG.exists():
        return [
            make_row(
                "plb leaderboard",
                "real Arena log",
                ours=None,
                notes=f"skipped: {ARENA_LOG} is absent (the shared data folder)",
            )
        ]
    return _rows(_medians(ARENA_LOG, ROUNDS), "135,634 real Arena votes", False, ROUNDS)


def main() -> None:
    """Print the rows (``python -m bench.service.cli_speed [--quick]``)."""
    quick = quick_option(
        "bench.service.cli_speed", __doc__ or "", "2,000 simulated votes, one round, no goal"
    )
    for row in run(quick):
        print(row)


if __name__ == "__main__":
    main()
