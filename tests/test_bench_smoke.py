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
