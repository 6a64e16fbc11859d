"""What every benchmark shares: result rows, timers, subprocess peak memory, machine facts.

Timing is wall clock (:func:`time.perf_counter`); a figure is the best of a few
repetitions, ours and the reference interleaved in the same process, so that their ratio
survives a noisy machine. Peak memory is the ``ru_maxrss`` of a fresh child process,
read by a small launcher process with ``RUSAGE_CHILDREN`` (see :mod:`bench._child`).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ChildRun",
    "LLMFAO",
    "SHARED_DATA",
    "event_loop_runner",
    "Row",
    "baseline_rss_mb",
    "best_of",
    "error_text",
    "first_call_row",
    "load_llmfao",
    "machine_info",
    "make_row",
    "markdown_table",
    "quick_option",
    "run_child",
    "seconds_row",
    "table_text",
    "write_table",
    "TABLES_DIR",
]

T = TypeVar("T")

#: The repository root, put on the child's ``PYTHONPATH`` so that ``bench`` imports.
ROOT = Path(__file__).resolve().parents[1]
#: The shared data sets beside the repository (``../shared/data``); a bench that reads one
#: skips it with a reason where it is absent.
SHARED_DATA = ROOT.parent / "shared" / "data"
#: LLMFAO's folder: crowd votes with voter ids, prompts, every model's answers.
LLMFAO = SHARED_DATA / "llmfao"
_BYTES_PER_MB = 1e6


class Row(TypedDict):
    """One line of a results table.

    ``ours`` and ``reference`` are seconds (float), a preformatted text (memory, an
    error) or ``None``; ``ratio`` is reference / ours, above 1 when ours is faster;
    ``met`` is ``True``/``False`` against ``goal``, ``None`` when there is no goal.
    """

    what: str
    data: str
    ours: float | str | None
    reference: float | str | None
    ratio: float | None
    goal: str
    met: bool | None
    notes: str


def make_row(
    what: str,
    data: str,
    *,
    ours: float | str | None,
    reference: float | str | None = None,
    ratio: float | None = None,
    goal: str = "",
    met: bool | None = None,
    notes: str = "",
) -> Row:
    """Build a :class:`Row`; ``ratio`` defaults to reference / ours when both are seconds."""
    if ratio is None and isinstance(ours, float) and isinstance(reference, float) and ours > 0:
        ratio = reference / ours
    return Row(
        what=what,
        data=data,
        ours=ours,
        reference=reference,
        ratio=ratio,
        goal=goal,
        met=met,
        notes=notes,
    )


def seconds_row(
    what: str,
    data: str,
    *,
    ours: float,
    reference: float | None,
    goal_s: float,
    quick: bool,
    notes: str = "",
) -> Row:
    """A :class:`Row` of seconds against a goal of at most ``goal_s`` seconds.

    The goal is shown as ``≤ N s`` and judged in a full run only (``met`` is None when
    ``quick``: the figures of tiny data mean nothing).
    """
    return make_row(
        what,
        data,
        ours=ours,
        reference=reference,
        goal=f"≤ {goal_s:.0f} s",
        met=ours <= goal_s if not quick else None,
        notes=notes,
    )


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table: ``header``, its ``|---|`` rule, then one line per row of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def best_of(function: Callable[[], T], repeat: int = 3) -> tuple[float, T]:
    """Run ``function`` ``repeat`` times; the shortest wall time and the last result."""
    if repeat < 1:
        raise ValueError(f"Argument 'repeat' must be at least 1, not {repeat}.")
    best = float("inf")
    result: T
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def first_call_row(script: str, kernels: str, data: str, imported: str) -> Row:
    """The compile time of ``kernels`` in a fresh process: numba's cache empty, then warm.

    ``script`` prints one JSON object with the seconds of its ``import`` and its ``calls``
    (on ``data``, described for the table); it runs in two fresh processes sharing an
    empty numba cache, the first compiling and caching the kernels, the second finding
    them cached. ``imported`` names what the script imports, for the notes.
    """
    runs = []
    with tempfile.TemporaryDirectory(prefix="plb-bench-numba-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, "-c", script],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(done.stdout))
    cold, warm = runs
    return make_row(
        f"first calls of the {kernels} in a fresh process, numba's cache empty",
        data,
        ours=float(cold["calls"]),
        notes=(
            f"compiling and caching; with the cache warm (any later process) "
            f"{warm['calls']:.3f} s; importing {imported} {warm['import']:.2f} s"
        ),
    )


#: Where a full run of a benchmark writes its table of docs/evaluation.md (``NAME.md``).
TABLES_DIR = ROOT / "bench" / "out"


def table_text(label: str, seconds: float, table: str) -> str:
    """A table of docs/evaluation.md under a line naming the run, as printed and written."""
    return f"{label}; {seconds:.0f} s\n\n{table}"


def write_table(path: Path, label: str, seconds: float, table: str) -> None:
    """Write a table of docs/evaluation.md to ``path``, under a line naming the run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table_text(label, seconds, table) + "\n", encoding="utf-8")


def quick_option(
    prog: str, description: str, quick_help: str, argv: Sequence[str] | None = None
) -> bool:
    """Parse ``python -m PROG [--quick]``, a benchmark's own command line.

    Parameters
    ----------
    prog : str
        The module, e.g. ``"bench.ranking.coverage"``.
    description : str
        The module docstring; its first line describes the command.
    quick_help : str
        What ``--quick`` runs instead of the full benchmark.
    argv : sequence of str, optional
        The arguments; ``sys.argv[1:]`` by default.

    Returns
    -------
    bool
        Whether ``--quick`` was given.
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m {prog}", description=description.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help=quick_help)
    return bool(parser.parse_args(argv).quick)


def load_llmfao(folder: Path = LLMFAO) -> pd.DataFrame | None:
    """LLMFAO's votes as a battle frame, read as ``plb --preset llmfao`` reads them.

    Parameters
    ----------
    folder : Path
        LLMFAO's folder (:data:`LLMFAO` by default).

    Returns
    -------
    pandas.DataFrame or None
        The battles, or None where ``crowd-comparisons.csv`` is absent.
    """
    from ranking.io.column_map import PRESETS
    from ranking.io.ingest import read_battles
    from ranking.io.prompt_texts import read_prompt_texts

    votes = folder / "crowd-comparisons.csv"
    if not votes.exists():
        return None
    prompts = read_prompt_texts(folder / "prompts.jsonl")
    return read_battles(votes, columns=PRESETS["llmfao"], prompts=prompts).battles


def error_text(exc: BaseException) -> str:
    """``TypeName: message`` on one line, for a table cell."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


@dataclass(frozen=True)
class ChildRun:
    """What a benchmark child process reported, and what it cost.

    Attributes
    ----------
    result : dict
        The JSON document the child task returned.
    peak_rss_mb : float
        Peak resident set size of the child, in MB (10^6 bytes).
    wall_s : float
        Wall time of the whole child, interpreter start and imports included.
    """

    result: dict[str, Any]
    peak_rss_mb: float
    wall_s: float


def run_child(task: str, args: Mapping[str, Any], timeout: float = 600.0) -> ChildRun:
    """Run ``bench._child`` task ``task`` with ``args`` in a fresh interpreter.

    The task runs under the small launcher of :mod:`bench._child`, which measures its
    peak RSS with ``RUSAGE_CHILDREN`` (see there why not directly from here).

    Raises
    ------
    RuntimeError
        If the child fails or times out; the message ends with its stderr.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="plb-bench-") as tmp:
        out, err = Path(tmp) / "result.json", Path(tmp) / "stderr.txt"
        command = [
            sys.executable,
            *("-m", "bench._child", "--measure", str(timeout)),
            *(task, json.dumps(dict(args)), str(out)),
        ]
        start = time.perf_counter()
        with open(err, "wb") as stderr:
            status = subprocess.run(
                command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr, check=False
            ).returncode
        wall = time.perf_counter() - start
        if status != 0:
            tail = err.read_text(errors="replace").strip().splitlines()[-3:]
            raise RuntimeError(f"child task {task!r} exited with {status}: {' | '.join(tail)}")
        result = json.loads(out.read_text())
        peak_kib = int(Path(f"{out}.rss").read_text())
    return ChildRun(result, peak_kib * 1024 / _BYTES_PER_MB, wall)


@functools.cache
def baseline_rss_mb() -> float:
    """Peak RSS (MB) of a bare ``python -c 'import numpy, pandas'``."""
    return run_child("baseline", {}).peak_rss_mb


def machine_info() -> dict[str, str]:
    """The facts a reader needs to judge the figures."""
    import numpy
    import pandas
    import scipy

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu count": str(os.cpu_count()),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "platform": platform.platform(),
    }


def event_loop_runner() -> asyncio.Runner:
    """A fresh event loop for a load generator: uvloop where installed, else asyncio's."""
    try:
        import uvloop

        factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:
        factory = None
    return asyncio.Runner(loop_factory=factory)


def load_task_main(
    prog: str,
    run: Callable[[dict[str, Any]], dict[str, Any]],
    spec_help: str,
    argv: Sequence[str] | None = None,
) -> int:
    """``python -m PROG load SPEC OUT``: run a load generator in its own process.

    Reads the JSON ``SPEC``, runs ``run`` on it and writes its JSON result to ``OUT``.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {prog}")
    parser.add_argument("task", choices=["load"])
    parser.add_argument("spec", type=Path, help=spec_help)
    parser.add_argument("out", type=Path, help="where the JSON result goes")
    args = parser.parse_args(argv)
    result = run(json.loads(args.spec.read_text(encoding="utf-8")))
    args.out.write_text(json.dumps(result), encoding="utf-8")
    return 0
