"""Smoke test of the benchmarks: the quick mode of each runs and produces rows.

No timing is asserted: the figures of a quick run on tiny data mean nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.common import Row
from bench.run import BENCHMARKS, main


@pytest.mark.parametrize("name", list(BENCHMARKS))
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
    from bench.ceiling import main as ceiling_main
    from data.simulate import simulate, write_simulation

    write_simulation(simulate(80, 40, 6, rng=3), tmp_path / "sim")
    ceiling_main([str(tmp_path / "sim")])
    table = capsys.readouterr().out
    assert "| shrunk elo: true ratings | +" in table  # the exact truth beats the mean
    assert table.count("\n") == 2 + 2 + 3 * 3
