"""Smoke test of the benchmarks: the quick mode of each runs and produces rows.

No timing is asserted: the figures of a quick run on tiny data mean nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.common import Row
from bench.run import BENCHMARKS, main

#: Benchmarks that build the same cache under bench/out/ run on one xdist worker, in turn.
_SHARED_CACHE = {
    "service": "bench-service-fit",
    "soak": "bench-service-fit",
    "scale": "bench-scale-log",
    "scale_features": "bench-scale-log",
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xdist_group(_SHARED_CACHE[n]))
        if n in _SHARED_CACHE
        else n
        for n in BENCHMARKS
    ],
)
def test_quick_benchmark_produces_rows(name: str) -> None:
    rows: list[Row] = BENCHMARKS[name][1](True)
    assert rows
    assert all(set(row) == set(Row.__annotations__) for row in rows)
    assert all(row["what"] and row["data"] for row in rows)


def test_run_writes_a_table_per_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def tiny(quick: bool) -> list[Row]:
        from bench.common import make_row

        return [make_row("step", "tiny", ours=0.5, reference=1.0, goal="< 1 s", met=True)]

    monkeypatch.setattr("bench.run.BENCHMARKS", {n: (t, tiny) for n, (t, _) in BENCHMARKS.items()})
    output = tmp_path / "RESULTS.md"
    assert main(["--quick", "--output", str(output)]) == 0
    text = output.read_text()
    for name in BENCHMARKS:
        assert f"<!-- bench:{name} -->" in text
    assert "| step | tiny | 0.500 s | 1.00 s | 2.00× | < 1 s | yes |" in text
    assert "numpy" in text and "cpu count" in text


def test_ceiling_table_runs_on_a_small_simulation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.features.ceiling import main as ceiling_main
    from data.simulate import simulate
    from data.simulation_files import write_simulation

    write_simulation(simulate(80, 40, 6, rng=3), tmp_path / "sim")
    ceiling_main([str(tmp_path / "sim")])
    table = capsys.readouterr().out
    assert "| shrunk elo: true ratings | +" in table  # the exact truth beats the mean
    assert table.count("\n") == 2 + 2 + 3 * 3


def test_next_battle_ceiling_is_what_one_pair_allows() -> None:
    """With two models the only pair is every rule's pair: a vote carries ``w = p (1 -
    p)`` at the truth where at most 1/4 is possible, so no rule saves more than ``1 - 4w``;
    models of equal strength leave nothing to save."""
    from bench.ranking.next_battle import saving_ceiling

    gap = 1.3
    p = 1.0 / (1.0 + np.exp(-gap))
    np.testing.assert_allclose(saving_ceiling([[gap, 0.0]]), [1.0 - 4.0 * p * (1.0 - p)])
    np.testing.assert_allclose(saving_ceiling(np.zeros((3, 6))), 0.0, atol=1e-12)
    spread = saving_ceiling([[0.0, 0.5, 1.0, 2.0, 3.0]])
    assert 0.0 < spread[0] < 1.0


def test_bench_r_times_the_default_embedding_on_a_sample_of_distinct_prompts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full run's projection (its quick run skips it): a sample of distinct, present
    prompts, embedded and scaled to all of them, and the same prompts through the
    backend's bare session beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.service import scale

    prompts = ["a b", None, "c d", "a b"] + [f"prompt {i}" for i in range(40)]
    pq.write_table(pa.table({"prompt": prompts}), tmp_path / "battles.parquet")
    monkeypatch.setattr(scale, "EMBEDDING_SAMPLE", 30)
    distinct = scale._distinct_prompts(tmp_path / "battles.parquet")
    assert len(distinct) == 42  # "a b" once, no missing one
    sample = scale._prompt_sample(distinct)
    assert len(sample) == len(set(sample)) == 30 and None not in sample
    row, *raw = scale._embedding_rows(sample, 42)
    assert isinstance(row["ours"], float) and row["ours"] > 0
    assert "30 prompts" in row["notes"] and "times 42" in row["notes"]
    if raw:  # the ONNX backend (the default): the same prompts through its bare session
        (beside,) = raw
        assert beside["reference"] > 0 and beside["ratio"] == beside["reference"] / beside["ours"]
        assert beside["goal"] == "≥ 0.9× (issue 33)"


def test_bench_g_open_loop_sends_every_request_when_due_and_reads_every_answer() -> None:
    """The open loop's clock thread wakes the loop for each request: all are sent, in
    turn, and each answer is read and counted, over keep-alive connections."""
    import asyncio

    from bench.common import event_loop_runner
    from bench.service.load import _drive_open

    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    seen: list[bytes] = []

    async def serve_and_drive() -> dict[str, float]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while head := await reader.readuntil(b"\r\n\r\n"):
                seen.append(head.split(b" ", 2)[1])
                writer.write(answer)
                if reader.at_eof():
                    break

        async def quiet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await handle(reader, writer)
            except (asyncio.IncompleteReadError, ConnectionError):
                pass  # the client closed its connection

        server = await asyncio.start_server(quiet, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        spec = {
            "base": f"http://127.0.0.1:{port}",
            "requests": [("GET", "/a", None), ("GET", "/b", None)],
            "rate": 400.0,
            "connections": 4,
        }
        async with server:
            return await _drive_open(spec, 0.25)

    with event_loop_runner() as runner:
        result = runner.run(serve_and_drive())
    assert result["scheduled"] == result["requests"] == 100
    assert result["errors"] == 0
    assert sorted(seen) == [b"/a"] * 50 + [b"/b"] * 50  # the requests in turn
    assert result["late_p99_ms"] >= 0.0 and result["p50_ms"] > 0.0


def test_bench_g_judges_the_open_loop_goal_on_the_median_of_its_phases(tmp_path: Path) -> None:
    """Three phases at the goal's rate: the row shows the one of median p99 and lists all
    three; an error in any of them fails the goal."""
    from bench.service.load import LoadResult
    from bench.service.phases import OPEN_GOAL_RATE, _Load, _References
    from bench.service.under_load import _open_rows

    def phase(p99_ms: float, errors: int = 0) -> LoadResult:
        n = int(OPEN_GOAL_RATE * 10)
        return LoadResult(n, errors, 10.0, 0.5, p99_ms, OPEN_GOAL_RATE, 0.1, n)

    refs = _References(1, phase(1.0), None, {})
    load = _Load(10.0, 1.0, tmp_path, False, 3)
    for runs, met in [
        ([phase(9.0), phase(3.0), phase(4.0)], True),
        ([phase(9.0), phase(6.0), phase(4.0)], False),
        ([phase(3.0), phase(3.0), phase(4.0, errors=1)], False),
    ]:
        (row,) = _open_rows("GET /x", "data", {OPEN_GOAL_RATE: runs}, refs, load, "", False)
        median = sorted(r.p99_ms for r in runs)[1]
        assert f"p99 {median:.2f} ms" in row["ours"]
        assert ", ".join(f"{r.p99_ms:.2f}" for r in runs) in row["notes"]
        assert row["met"] is met


def test_bench_g_load_phases_run_in_a_process_each_or_all_in_one(tmp_path: Path) -> None:
    """A closed-loop phase gives the same kind of result in a process of its own (the full
    run's way) and sent to the one load process of a quick run, which runs phase after
    phase."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from bench.service.phases import _load_worker, _python_load

    class Ok(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the load generator expects

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spec = {
        "base": f"http://127.0.0.1:{server.server_address[1]}",
        "requests": [("GET", "/", None)],
        "clients": 2,
        "max_requests": 40,
        "duration_s": 0.2,
        "warmup_s": 0.05,
    }
    try:
        results = [_python_load(spec, tmp_path)]
        with _load_worker(tmp_path) as worker:
            results += [_python_load(spec, tmp_path, worker) for _ in range(2)]
    finally:
        server.shutdown()
        server.server_close()
    for result in results:
        assert 0 < result.requests <= 40 and result.errors == 0
        assert result.rate is None and result.p99_ms >= result.p50_ms > 0.0
