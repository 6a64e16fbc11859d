"""Benchmark H (issue 8): ``plb fit --no-features`` alone, and on a local Dask cluster.

The same simulated log (2 million votes of 100,000 users; 5,000 votes with ``--quick``)
is fitted three times, each as a fresh ``plb fit`` process, one after the other: in its
own process (the default), then with ``--scheduler local:1`` and ``--scheduler local:2``
(a LocalCluster of 1 or 2 worker processes on this machine, started and closed by the
command). The log is simulated once, in a child process, and kept in
``bench/out/scale/``. Peak memory is that of the ``plb`` process itself (the client),
``ru_maxrss`` of ``RUSAGE_SELF`` read at its end; the workers are not counted.

Each fit's own step timings (``timings`` of its JSON; the Dask fit's are its client's
steps, each until the next begins) follow its row, so the steps that scale with workers
and those that do not are visible.

Benchmark R (:func:`run_features`) fits the same log once more with the query features
(topics, style, the rating predictor), in one process, and lists its steps likewise. The
simulator writes most votes a prompt of their own (1.5 million distinct prompts in
2 million votes), and the default MiniLM embedding of that many takes hours on two
cores, so the full run fits with ``--embedding tfidf`` and times the default backend on
a random sample of the log's distinct prompts, projecting its time on all of them.

On one machine a cluster can only win where the local fit leaves cores idle: the client
reads the log as one process does (it needs every vote in the end) and evaluates while
the workers run the Elo bootstrap's batches, learn the shrinkage strength and fit the
users. Each Dask fit's steps end with the workers' own time by kind of task (step ``on
the workers``): from the first task's start to the last one's end, which shrinks where a
step scales with workers, and the seconds its tasks computed, which do not. Each fit's
CPU seconds, its own and its workers', are in its notes: on a shared machine the wall
time follows the load, the CPU what the cluster costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bench.common import ROOT, Row, make_row
from service.pipeline.timings import SEPARATOR

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["run", "run_features"]

CACHE = ROOT / "bench" / "out" / "scale"
#: (users, votes per user): 100,000 x 20 is about 2 million votes.
FULL = (100_000, 20)
QUICK = (250, 20)
#: Benchmark R's quick log: a few thousand prompts (the topic model is the slow part).
QUICK_FEATURES = (60, 30)
MODES = ("local", "local:1", "local:2")
#: Wall seconds ``plb fit --no-features`` may take on the full log (issue 18).
GOAL_S = 60.0
#: Distinct prompts of benchmark R's log that the default embedding is timed on.
EMBEDDING_SAMPLE = 5_000

_SIMULATE = """
import sys
from data.simulate import simulate
from data.simulation_files import write_simulation
users, per_user, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
write_simulation(simulate(users, per_user, 15, rng=0), out)
"""

# plb fit in this process; its own peak RSS (not its workers') written at the end.
_FIT = """
import resource, sys
from service.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    out.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
sys.exit(code)
"""
# Linux carries a process's peak RSS over fork and execve: started straight from this
# benchmark (gigabytes of imports), the fit would report our peak. A launcher that
# imports nothing starts it instead (see bench._child).
_LAUNCH = """
import subprocess, sys
sys.exit(subprocess.call([sys.executable, "-c", sys.argv[1], *sys.argv[2:]]))
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("PLB_DASK_SCHEDULER", None)
    return env


def _log(users: int, per_user: int) -> Path:
    """The simulated log, made in a child process the first time."""
    folder = CACHE / f"sim-{users}x{per_user}"
    battles = folder / "battles.jsonl.gz"
    if not battles.exists():
        command = [sys.executable, "-c", _SIMULATE, str(users), str(per_user), str(folder)]
        subprocess.run(command, cwd=ROOT, env=_env(), check=True)
    return battles


def _fit(
    battles: Path, mode: str, out: Path, *, features: Sequence[str] | None = None
) -> tuple[float, float, dict[str, object]]:
    """Wall seconds, client peak RSS (MB) and the JSON document of one ``plb fit``:
    ``--no-features``, or with the query features and the options ``features``."""
    rss = out.parent / f"{out.name}.rss"
    argv = ["fit", str(battles), "--out", str(out), "--format", "json"]
    argv += ["--no-features"] if features is None else list(features)
    if mode != "local":
        argv += ["--scheduler", mode]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCH, _FIT, str(rss), *argv],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"plb fit ({mode}) exited with {done.returncode}: {tail}")
    return wall, int(rss.read_text()) * 1024 / 1e6, json.loads(done.stdout)


def run_features(quick: bool = False) -> list[Row]:
    """``plb fit`` with the query features on benchmark H's log, one process, with its steps.

    The topic model, the style profiles and the rating predictor meet every prompt of
    the log; the row's data names how many distinct prompts the fit kept. No goal is
    set: issue 18 asks for the time and the steps. The full run embeds by TF-IDF, then
    times the default embedding on :data:`EMBEDDING_SAMPLE` of the distinct prompts (see
    the module docstring); the quick run uses the default embedding throughout.
    """
    users, per_user = QUICK_FEATURES if quick else FULL
    battles = _log(users, per_user)
    options = ["--n-topics", "4"] if quick else ["--embedding", "tfidf"]
    with tempfile.TemporaryDirectory(prefix="plb-bench-features-") as tmp:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        seconds, mb, document = _fit(battles, "local", Path(tmp) / "fit", features=options)
        distinct = _distinct_prompts(Path(tmp) / "fit" / "battles.parquet")
    sample = [] if quick else _prompt_sample(distinct)
    prompts = len(distinct)
    label = (
        f"simulator: {users:,} users, {int(str(document['n_battles'])):,} votes "
        f"({prompts:,} distinct prompts), 15 models"
    )
    rows = [
        make_row(
            "plb fit (aggregate, per-user, topics, style, predictor), one process"
            + ("" if quick else ", --embedding tfidf"),
            label,
            ours=seconds,
            notes=f"peak {mb:,.0f} MB; load average at start {load}; {os.cpu_count()} CPUs; "
            "its steps below (the fit's own timings, wall seconds)",
        ),
        *_step_rows("with features", document),
    ]
    if sample:
        rows += _embedding_rows(sample, prompts)
    return rows


def _prompt_sample(distinct: pa.Array) -> list[str]:
    """:data:`EMBEDDING_SAMPLE` of ``distinct`` prompts, drawn at random (seed 0)."""
    import numpy as np

    rng = np.random.default_rng(0)
    chosen = rng.choice(len(distinct), min(EMBEDDING_SAMPLE, len(distinct)), replace=False)
    return [str(text) for text in distinct.take(np.sort(chosen)).to_pylist()]


def _embedding_rows(sample: list[str], prompts: int) -> list[Row]:
    """The default embedding of ``sample`` as a fit embeds, projected to ``prompts``, and
    beside it the backend's raw batch throughput on the same prompts."""
    from features.embeddings import default_embedding, make_embedder

    name = default_embedding()
    embedder = make_embedder(name)
    embedder.embed(sample[:100])  # the session made and warm
    told: list[int] = []
    start = time.perf_counter()
    embedder.embed(sample, progress=lambda stage, total, unit: told.append)
    seconds = time.perf_counter() - start
    rows = [
        make_row(
            f"the default embedding ({name}) of every distinct prompt, projected",
            f"{len(sample):,} of the log's distinct prompts, drawn at random",
            ours=seconds / len(sample) * prompts,
            notes=f"measured: {seconds:.1f} s for {len(sample):,} prompts in this process "
            f"({seconds / len(sample) * 1000:.2f} ms each), times {prompts:,}: what `plb "
            "fit` without --embedding would spend in the part 'embedding queries' above, "
            "in place of TF-IDF's",
        )
    ]
    raw = _raw_batches(embedder, sample)
    if raw is not None:
        rows.append(
            make_row(
                f"the fit's embedding ({name}, as `plb fit` runs it) beside its backend's raw "
                "batch throughput",
                f"the same {len(sample):,} prompts",
                ours=seconds,
                reference=raw,
                goal="≥ 0.9× (issue 33)",
                met=raw / seconds >= 0.9,
                notes="raw: the tokenizer and the ONNX Runtime session alone, batches of "
                f"{embedder.batch_size} in the sample's order, each prompt cut at "
                f"{embedder.max_tokens} word pieces; ours: the backend's embed with a "
                "progress callback (text selection, batches by length); prompts a second",
            )
        )
    return rows


def _raw_batches(embedder: object, sample: list[str]) -> float | None:
    """Wall seconds of the ONNX MiniLM backend's tokenizer and session alone on
    ``sample`` (None for another backend)."""
    import numpy as np

    from features.embeddings.minilm_onnx import (
        OnnxMiniLMEmbedder,
        _session,
        _tokenizer,
        exported_model,
    )

    if not isinstance(embedder, OnnxMiniLMEmbedder):
        return None
    session = _session(str(exported_model()), embedder.threads or 0)
    tokenizer = _tokenizer(embedder.max_tokens)
    start = time.perf_counter()
    for first in range(0, len(sample), embedder.batch_size):
        encoded = tokenizer.encode_batch(sample[first : first + embedder.batch_size])
        feed = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        session.run(None, feed)
    return time.perf_counter() - start


def _distinct_prompts(battles: Path) -> pa.Array:
    """The distinct prompts of a fit's votes, missing ones left out (none where it kept
    none)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not battles.exists():
        return pa.array([], pa.string())
    return pc.unique(pq.read_table(battles, columns=["prompt"]).column("prompt")).drop_null()


def _same(reference: dict[str, object], other: dict[str, object]) -> bool:
    """Whether two ``plb fit`` documents report the same summaries and evaluation."""
    return all(reference[key] == other[key] for key in ("summary", "evaluation", "n_battles"))


def run(quick: bool = False) -> list[Row]:
    """Run benchmark H; ``quick`` fits 5,000 votes (250 users)."""
    users, per_user = QUICK if quick else FULL
    battles = _log(users, per_user)
    results: dict[str, tuple[float, float, dict[str, object]]] = {}
    loads: dict[str, str] = {}
    cpu: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="plb-bench-scale-") as tmp:
        for mode in MODES:
            loads[mode] = " ".join(f"{x:.1f}" for x in os.getloadavg())
            before = _children_cpu()
            results[mode] = _fit(battles, mode, Path(tmp) / mode.replace(":", "-"))
            cpu[mode] = _children_cpu() - before
    local_s, local_mb, local_doc = results["local"]
    label = f"simulator: {users:,} users, {int(str(local_doc['n_battles'])):,} votes, 15 models"
    rows = [
        make_row(
            "plb fit --no-features, one process (the default)",
            label,
            ours=local_s,
            goal=f"≤ {GOAL_S:.0f} s (issue 18)",
            met=local_s <= GOAL_S if not quick else None,
            notes=f"client peak {local_mb:,.0f} MB; CPU {cpu['local']:.1f} s; load average at "
            f"start {loads['local']}; its steps below (the fit's own timings, wall seconds)",
        ),
        *_step_rows("one process", local_doc),
    ]
    for mode in MODES[1:]:
        seconds, mb, document = results[mode]
        workers = int(mode.split(":")[1])
        rows.append(
            make_row(
                f"plb fit --no-features --scheduler {mode} "
                f"({workers} worker process{'es' if workers > 1 else ''})",
                label,
                ours=seconds,
                reference=local_s,
                notes=f"ratio = one process / Dask; client peak {mb:,.0f} MB; CPU "
                f"{cpu[mode]:.1f} s, client and workers ({cpu[mode] / cpu['local']:.2f}x one "
                "process's); same summaries and evaluation: "
                f"{'yes' if _same(local_doc, document) else 'NO'}; "
                f"load average at start {loads[mode]}; {os.cpu_count()} CPUs",
            )
        )
        rows += _step_rows(f"--scheduler {mode}", document)
    return rows


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's finished children, and theirs."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _step_rows(how: str, document: dict[str, object]) -> list[Row]:
    """One row a step of a fit, from the ``timings`` of its JSON (parts indented)."""
    timings = document.get("timings")
    if not isinstance(timings, dict):
        return []
    rows = []
    for name, seconds in timings.items():
        step, _, part = str(name).partition(SEPARATOR)
        rows.append(
            make_row(
                f"{how}: step {step}" + (f", part {part}" if part else ""),
                "the fit above",
                ours=float(seconds),
                notes="a part of the step above it" if part else "",
            )
        )
    return rows
