"""``plb users``: the summary's intervals over users and the null of no taste."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main


@pytest.fixture(scope="module")
def battles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_simulation(simulate(60, 30, 8, rng=2), tmp_path_factory.mktemp("sim"))["battles"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["users", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("shrinkage", ["none", "cv"])
def test_summary_has_intervals_and_the_null(
    battles: Path, shrinkage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = _json(capsys, str(battles), "--shrinkage", shrinkage, "--null-replicates", "4")[
        "summary"
    ]
    for name in ("mean_spearman", "median_spearman", "share_near_zero_or_negative"):
        lower, upper = summary[f"{name}_interval"]
        assert lower <= summary[name] <= upper
    assert summary["confidence"] == 0.95 and summary["bootstrap"]["resamples"] > 0
    noise = summary["noise"]
    assert noise["users"] == summary["users"] and noise["replicates"] == 4
    assert noise["observed_mean_spearman"] == summary["mean_spearman"]
    for name in ("mean_spearman", "excess", "noise_share", "share_near_zero_or_negative"):
        lower, upper = noise[f"{name}_interval"]
        assert lower <= noise[name] <= upper
    assert noise["excess"] == pytest.approx(
        noise["mean_spearman"] - noise["observed_mean_spearman"], abs=2e-4
    )


def test_no_null_without_replicates_and_the_table_says_it(
    battles: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "noise" not in _json(capsys, str(battles), "--null-replicates", "0")["summary"]
    assert main(["users", str(battles), "--null-replicates", "3", "--show", "0"]) == 0
    out = capsys.readouterr().out
    assert "(95% intervals over users): mean Spearman" in out
    assert "Noise alone (votes re-drawn from the aggregate" in out
    assert "of the gap from perfect agreement" in out


def test_a_negative_replicate_count_is_refused(
    battles: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["users", str(battles), "--null-replicates", "-1"]) == 2
    assert "--null-replicates" in capsys.readouterr().err
