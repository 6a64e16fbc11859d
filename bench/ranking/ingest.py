"""Benchmark M (issue 18): columnar ingest of CSV, JSON Lines and Parquet.

On 2,000,000 simulated votes (:func:`bench.synthetic.write_battle_csv`, the log of
benchmark A) written as CSV, JSON Lines (plain and gzip) and Parquet: ``read_battles``
with full validation (``skip_invalid=True``, as benchmark A reads) against
``pandas.read_csv`` of the same CSV, which validates nothing, and against the reader it
replaced, kept here as the reference (:func:`rows_read_battles`: pandas chunks of
``dtype=str``, per-line ``json.loads``, each chunk validated by rows, a Python set of ids
grown chunk by chunk). Both readers must give the same battle frame. Ours and
``pandas.read_csv`` run in turn, five times each, and the best of each is kept: the pace
of the shared machine drifts within seconds.
"""

from __future__ import annotations

import gzip
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bench.common import Row, best_of, error_text, make_row
from bench.synthetic import write_battle_csv
from ranking.io.battle_frame import concat_battle_frames, drop_duplicate_ids, to_battle_frame
from ranking.io.formats import FORMATS
from ranking.io.ingest import IngestResult, read_battles
from ranking.io.records import normalise_columns
from ranking.io.validation import validate_battles

__all__ = ["rows_read_battles", "run"]

SEED = 0
#: Goals of issue 18: CSV at 0.8x pandas.read_csv or better, JSON Lines 3x the row reader.
CSV_GOAL = 0.8
JSONL_GOAL = 3.0


@dataclass(frozen=True)
class _Plan:
    votes: int
    repeat: int  # repetitions of ours and of pandas
    repeat_rows: int  # repetitions of the row reader (seconds to tens of seconds)


_FULL = _Plan(2_000_000, 5, 1)
_QUICK = _Plan(5_000, 1, 1)


def rows_read_battles(path: Path, chunksize: int = 100_000) -> pd.DataFrame:
    """The battle frame as ``read_battles(path, skip_invalid=True)`` made it before issue 18."""
    name = path.name.lower()
    gz = name.endswith(".gz")
    suffix = Path(name.removesuffix(".gz")).suffix
    frames: list[pd.DataFrame] = []
    seen: set[str] = set()
    with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw) if gz else raw as stream:
        for chunk in FORMATS[suffix].chunks(path, cast(IO[bytes], stream), chunksize, ()):
            frame = normalise_columns(chunk.frame)
            keep = np.ones(len(frame), dtype=bool)
            keep[[e.index for e in validate_battles(frame, allow_self_battles=True)]] = False
            typed = to_battle_frame(frame.loc[keep])
            same = (typed["model_a"].astype(str) == typed["model_b"].astype(str)).to_numpy()
            typed, _ = drop_duplicate_ids(typed.loc[~same], seen)
            frames.append(typed)
    return concat_battle_frames(frames)


def run(quick: bool = False) -> list[Row]:
    """Run benchmark M; ``quick`` uses tiny data and evaluates no goal."""
    plan = _QUICK if quick else _FULL
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="plb-bench-") as tmp:
        csv = write_battle_csv(Path(tmp) / "battles.csv", plan.votes, seed=SEED)
        frame = pd.read_csv(csv, dtype={"battle_id": str, "user_id": str})
        jsonl = Path(tmp) / "battles.jsonl"
        frame.to_json(jsonl, orient="records", lines=True)
        packed = Path(tmp) / "battles.jsonl.gz"
        packed.write_bytes(gzip.compress(jsonl.read_bytes(), compresslevel=6))
        parquet = Path(tmp) / "battles.parquet"
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), parquet)
        del frame
        label = f"{plan.votes:,} simulated votes"
        goals: list[tuple[Path, float | None]] = [
            (csv, CSV_GOAL),
            (jsonl, JSONL_GOAL),
            (packed, None),
            (parquet, None),
        ]
        for path, goal in goals:
            rows += _guard(path.name, label, partial(_bench, path, csv, label, plan, goal, quick))
    return rows


def _guard(what: str, data: str, step: Callable[[], list[Row]]) -> list[Row]:
    try:
        return step()
    except Exception as exc:
        return [make_row(f"ingest {what}", data, ours="error", met=False, notes=error_text(exc))]


def _size(path: Path) -> str:
    return f"{os.path.getsize(path) / 1e6:,.0f} MB"


class _RowPath(logging.Handler):
    """Counts the files ``read_battles`` reads again by rows (it logs each at DEBUG)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.files = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.files += "read again by rows" in record.getMessage()


def _read(path: Path) -> tuple[IngestResult, bool]:
    """``read_battles(path, skip_invalid=True)``, and whether the columnar path read it."""
    logger, handler = logging.getLogger("ranking.io.ingest"), _RowPath()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        return read_battles(path, skip_invalid=True), handler.files == 0
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _bench(
    path: Path, csv: Path, label: str, plan: _Plan, goal: float | None, quick: bool
) -> list[Row]:
    data = f"{label}, {path.name} ({_size(path)})"
    ours_s = pandas_s = ours_cpu = pandas_cpu = float("inf")
    for _ in range(plan.repeat):  # ours and pandas in turn: the machine's pace drifts
        cpu = time.process_time()
        seconds, (result, columnar) = best_of(lambda: _read(path), 1)
        ours_s, ours_cpu = min(ours_s, seconds), min(ours_cpu, time.process_time() - cpu)
        if path.suffix == ".csv":
            cpu = time.process_time()
            pandas_s = min(pandas_s, best_of(lambda: pd.read_csv(csv), 1)[0])
            pandas_cpu = min(pandas_cpu, time.process_time() - cpu)
    rows_s, reference = best_of(lambda: rows_read_battles(path), plan.repeat_rows)
    same = _same(result, reference)
    rows: list[Row] = []
    if path.suffix == ".csv":
        ratio = pandas_s / ours_s
        rows.append(
            make_row(
                "ingest CSV: read_battles vs pandas.read_csv",
                data,
                ours=ours_s,
                reference=pandas_s,
                goal=f"ratio ≥ {CSV_GOAL}",
                met=None if quick else ratio >= CSV_GOAL,
                notes=f"ours {result.n_read / ours_s:,.0f} rows/s with full validation "
                "(skip_invalid=True), ids as text, duplicates dropped; pandas.read_csv "
                f"infers types and validates nothing. CPU time (all threads, best of "
                f"{plan.repeat}): ours {ours_cpu:.2f} s, pandas {pandas_cpu:.2f} s",
            )
        )
        goal = None
    ratio = rows_s / ours_s
    kind = {".csv": "CSV", ".jsonl": "JSON Lines", ".gz": "JSON Lines, gzip"}.get(
        path.suffix, "Parquet"
    )
    rows.append(
        make_row(
            f"ingest {kind}: read_battles vs the row reader it replaced",
            data,
            ours=ours_s,
            reference=rows_s,
            goal="" if goal is None else f"ratio ≥ {goal:g}",
            met=None if goal is None or quick else ratio >= goal,
            notes=f"ours {result.n_read / ours_s:,.0f} rows/s, the row reader "
            f"{result.n_read / rows_s:,.0f} rows/s; read by the columnar path: "
            f"{'yes' if columnar else 'no'}; same battle frame: {'yes' if same else 'no'}",
        )
    )
    return rows


def _same(result: IngestResult, reference: pd.DataFrame) -> bool:
    """Same columns, dtypes (categories included) and values."""
    ours = result.battles
    return (
        list(ours.columns) == list(reference.columns)
        and list(ours.dtypes) == list(reference.dtypes)
        and ours.equals(reference)
    )
