"""Run the benchmarks and (re)write their results table.

Usage::

    python -m bench.run                 # every benchmark, full size, writes bench/RESULTS.md
    python -m bench.run per_user        # one benchmark; the other sections are kept
    python -m bench.run --quick         # tiny data, writes bench/out/RESULTS-quick.md

Each benchmark gets one section of the Markdown file, between ``<!-- bench:NAME -->``
markers, so that running a subset leaves the sections of the others as they were.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from bench.common import Row, machine_info
from bench.features import (
    per_prompt,
    predictor,
    real_voters,
    style_taste,
    topic_names,
    topic_sample,
    topics,
    topics_real,
)
from bench.ranking import (
    aggregate,
    contextual_kernel,
    coverage,
    drift,
    elo_bootstrap,
    ingest,
    integrity,
    next_battle,
    per_user,
    per_user_bt,
    price_to_crown,
    rank_reading,
    repeats,
    study,
    style_control,
)
from bench.service import cli_speed, refit, scale, soak, under_load

__all__ = ["BENCHMARKS", "format_section", "main", "render"]

logger = logging.getLogger("bench")

#: Name to (title, run function), in the order they run and appear.
BENCHMARKS: dict[str, tuple[str, Callable[[bool], list[Row]]]] = {
    "aggregate": ("A. Aggregate leaderboard at Arena scale (issue 2)", aggregate.run),
    "per_user": ("B. Per-user ratings, 100,000 users (issue 3)", per_user.run),
    "study": ("C. The study's per-user agreement, reproduced and explained (issue 3)", study.run),
    "topics": ("D. Query topics: backends, recovery of true topics, speed (issue 4)", topics.run),
    "topics_scale": ("E. The default topic model at scale, and warm (issue 4)", topics.run_scale),
    "predictor": ("F. Fitting everything, and recommending warm (issues 5, 16)", predictor.run),
    "service": ("G. The service under load (issue 6)", under_load.run),
    "scale": ("H. Fitting on a Dask cluster (issue 8)", scale.run),
    "soak": ("I. Soak: ten minutes of mixed load (issue 7)", soak.run),
    "integrity": ("J. Voter integrity: random clickers and a brigade (issue 15)", integrity.run),
    "topics_real": ("K. Topics on real prompts (issue 16)", topics_real.run_real),
    "elo_bootstrap": ("L. Elo bootstrap and per-user Elo, compiled (issue 18)", elo_bootstrap.run),
    "ingest": ("M. Columnar ingest: CSV, JSON Lines, Parquet (issue 18)", ingest.run),
    "per_user_bt": ("N. Per-user Bradley-Terry at kernel speed (issue 18)", per_user_bt.run),
    "coverage": ("O. Interval coverage on the simulator (issue 19)", coverage.run),
    "next_battle": ("P. The next battle: suggested pairs or random (issue 19)", next_battle.run),
    "per_prompt": ("Q. Per-prompt, per-person rankings (issue 19)", per_prompt.run),
    "real_voters": (
        "S. Personal answers on real voters: never worse than the public board (issue 30)",
        real_voters.run,
    ),
    "price_to_crown": (
        "T. The price of crowning the weakest model, in fake votes (issue 31)",
        price_to_crown.run,
    ),
    "scale_features": (
        "R. plb fit with the query features, 100,000 users (issue 18)",
        scale.run_features,
    ),
    "cli_speed": ("U. How fast plb answers, in fresh processes (issue 32)", cli_speed.run),
    "topic_names": (
        "V. Topic names, and whether a prompt fits its topic, on real prompts (issue 32)",
        topic_names.run,
    ),
    "rank_reading": ("W. The ranks a person reads, on real logs (issue 32)", rank_reading.run),
    "topic_sample": ("X. Topics fitted on a sample of the prompts (issue 33)", topic_sample.run),
    "refit": ("Y. Refits that only do what is new (issue 33)", refit.run),
    "contextual_kernel": (
        "Z. The rating predictor's contextual fits: Newton on pairs, no design (issue 33)",
        contextual_kernel.run,
    ),
    "style_control": (
        "AC. Style control on LLMFAO: features, scaling, ranks that change (issue 34)",
        style_control.run,
    ),
    "style_taste": (
        "AB. A person's taste in answers, on LLMFAO's real voters (issue 34)",
        style_taste.run,
    ),
    "repeats": ("AD. Prompts repeated too often, capped before the boards (issue 34)", repeats.run),
    "drift": ("AE. Drift flags on boards over time, simulated (issue 34)", drift.run),
}
HERE = Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "RESULTS.md"
QUICK_OUTPUT = HERE / "out" / "RESULTS-quick.md"

_COLUMNS = ("what", "data", "ours", "reference", "ratio", "goal", "met?", "notes")
_CONVENTIONS = """\
Conventions: times are wall-clock seconds (`time.perf_counter`), the best of a few
repetitions, ours and the reference measured in the same process, one after the other;
**ratio = reference / ours** (above 1: ours is faster). The machine is shared and noisy,
so read the ratios rather than the bare seconds. Peak memory is the `ru_maxrss` of a
fresh child process (`RUSAGE_CHILDREN` of a small launcher), in MB of 10^6 bytes.
The L-BFGS-B reference runs with BLAS limited to one thread (`threadpoolctl`), its fastest
setting here: OpenBLAS's thread pool at times adds milliseconds to every L-BFGS-B
iteration on this machine; the point-fit rows also give its time with the default threads.
"—": no goal set, or nothing to compare."""


def _seconds(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value:.3f} s"


def _cell(value: object) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "**NO**"
    if isinstance(value, float):
        return _seconds(value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def _ratio(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}×" if value >= 10 else f"{value:.2f}×"


def format_section(name: str, rows: Sequence[Row], *, quick: bool, seconds: float) -> str:
    """One benchmark's Markdown section, markers included."""
    title = BENCHMARKS[name][0]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    mode = "quick (tiny data, goals not evaluated)" if quick else "full"
    lines = [
        f"<!-- bench:{name} -->",
        f"## {title}",
        "",
        f"`python -m bench.run {name}`: {mode}; run {when}, took {seconds:.0f} s.",
        "",
        "| " + " | ".join(_COLUMNS) + " |",
        "|" + "---|" * len(_COLUMNS),
    ]
    for row in rows:
        cells = [
            _cell(row["what"]),
            _cell(row["data"]),
            _cell(row["ours"]),
            _cell(row["reference"]),
            _ratio(row["ratio"]),
            _cell(row["goal"]),
            _cell(row["met"]) if row["goal"] else "—",
            _cell(row["notes"]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(f"<!-- /bench:{name} -->")
    return "\n".join(lines)


def _old_sections(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(r"<!-- bench:(\w+) -->.*?<!-- /bench:\1 -->", re.DOTALL)
    return {m.group(1): m.group(0) for m in pattern.finditer(text)}


def render(sections: dict[str, str]) -> str:
    """The whole results file: header, machine, conventions, then the sections in order."""
    machine = machine_info()
    header = [
        "# Benchmark results",
        "",
        "Written by `python -m bench.run` (see `bench/run.py`); do not edit by hand.",
        "",
        "| machine | |",
        "|---|---|",
        *[f"| {key} | {value} |" for key, value in machine.items()],
        "",
        _CONVENTIONS,
    ]
    body = [sections[name] for name in BENCHMARKS if name in sections]
    return "\n".join(header) + "\n\n" + "\n\n".join(body) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"benchmarks to run: {', '.join(BENCHMARKS)}"
    )
    parser.add_argument("--quick", action="store_true", help="tiny data, a few seconds")
    parser.add_argument("--output", type=Path, help="results file (default by mode)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    names = list(dict.fromkeys(args.names)) or list(BENCHMARKS)
    output: Path = args.output or (QUICK_OUTPUT if args.quick else DEFAULT_OUTPUT)
    for name in names:
        logger.info("running %s%s", name, " (quick)" if args.quick else "")
        start = time.perf_counter()
        rows = BENCHMARKS[name][1](args.quick)
        seconds = time.perf_counter() - start
        logger.info("%s done in %.1f s", name, seconds)
        # read again now: another run may have written its section meanwhile
        sections = _old_sections(output)
        sections[name] = format_section(name, rows, quick=args.quick, seconds=seconds)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(render(sections), encoding="utf-8")  # after each, in case of a crash
    logger.info("wrote %s", output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
