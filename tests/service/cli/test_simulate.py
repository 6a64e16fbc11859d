"""``plb simulate --random-voters F --brigade F`` (issue 15): attackers in the arena."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from data.simulation_files import load_truth
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


def test_real_prompts_are_written_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts.jsonl"
    rows = [
        {"cluster": "Python Bugs", "prompt": f"Fix my Python code number {i}"} for i in range(4)
    ]
    rows += [{"cluster": "Bread Recipes", "prompt": f"A recipe for bread {i}"} for i in range(4)]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "sim"
    argv = ["simulate", "--out", str(out), "--users", "30", "--battles-per-user", "6"]
    assert main([*argv, "--models", "4", "--prompts", str(prompts), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["prompts"] == str(prompts) and doc["prompt_topics"]["coding"] == 4
    assert doc["prompt_topics"]["travel_food"] == 4 and doc["prompt_topics"]["chat"] == 0
    assert load_truth(out).prompts == str(prompts)
    with gzip.open(out / "battles.jsonl.gz", "rt") as fh:
        texts = {json.loads(line)["prompt"] for line in fh}
    assert texts <= {r["prompt"] for r in rows}


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, ["--prompts", "is not a file"]),
        ('{"prompt": "p"}\n', ["--prompts", "line 1", "'cluster'"]),
        ("not json\n", ["--prompts", "line 1", "not valid JSON"]),
    ],
)
def test_bad_prompt_files_are_named(
    content: str | None, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.jsonl"
    if content is not None:
        path.write_text(content)
    assert main(["simulate", "--out", str(tmp_path / "sim"), "--prompts", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and captured.out == "", captured.err
    assert lines[0].startswith("plb simulate: error: ") and str(path) in lines[0]
    assert all(word in lines[0] for word in words), lines[0]
    assert not (tmp_path / "sim").exists()
