"""``plb simulate --random-voters F --brigade F`` (issue 15): attackers in the arena."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data.simulate import load_truth
from service.cli import main


def test_attackers_are_written_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sim"
    argv = ["simulate", "--out", str(out), "--users", "100", "--battles-per-user", "10"]
    argv += ["--models", "6", "--random-voters", "0.05", "--brigade", "0.02", "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["random_voters"] == 5 and doc["brigade_voters"] == 2
    truth = load_truth(out)
    assert truth.attackers is not None and doc["brigade_model"] == truth.brigade_model
    assert sorted(truth.attackers.value_counts().items()) == [("brigade", 2), ("random", 5)]


def test_without_the_options_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--users", "40", "--battles-per-user", "8", "--models", "5", "--format", "json"]
    assert main(["simulate", "--out", str(tmp_path / "a"), *base]) == 0
    plain = json.loads(capsys.readouterr().out)
    off = ["--random-voters", "0", "--brigade", "0"]
    assert main(["simulate", "--out", str(tmp_path / "b"), *base, *off]) == 0
    assert "brigade_model" not in plain and "random_voters" not in plain
    for name in ("battles.jsonl.gz", "truth.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--random-voters", "-0.1"], ["--random-voters", "-0.1"]),
        (["--random-voters", "1"], ["--random-voters", "1.0"]),
        (["--brigade", "nan"], ["--brigade", "nan"]),
        (["--brigade", "1.5"], ["--brigade", "1.5"]),
        (["--random-voters", "0.6", "--brigade", "0.5"], ["--random-voters", "--brigade"]),
    ],
)
def test_bad_shares_are_named_before_any_work(
    options: list[str], words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--out", str(tmp_path / "sim"), *options]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and captured.out == "", captured.err
    assert lines[0].startswith("plb simulate: error: ")
    assert all(word in lines[0] for word in words), lines[0]
    assert not (tmp_path / "sim").exists()
