"""``plb topics``: topics of a log's prompts, end to end with a real embedding backend."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from features.topics import TopicModel
from service.cli import main


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("topics")
    return write_simulation(simulate(20, 20, 5, rng=1), root / "sim")["battles"]


def test_topics_table_and_json(
    log: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["topics", str(log), "--n-topics", "6", "--compare", "topic"]) == 0
    table = capsys.readouterr().out
    assert "6 topics of" in table and "top words" in table and "adjusted Rand index" in table

    out = tmp_path / "model"
    argv = ["topics", str(log), "--n-topics", "6", "--out", str(out), "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["embedding"] == "minilm-onnx" and len(doc["topics"]) == 6
    assert sum(t["size"] for t in doc["topics"]) == doc["n_queries"]
    assert {"topic", "size", "share", "words", "label"} <= set(doc["topics"][0])
    assert TopicModel.load(out).n_topics_ == 6


def test_topics_errors_exit_2(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["topics", str(log), "--n-topics", "0"]) == 2
    assert "--n-topics must be at least 1, not 0" in capsys.readouterr().err
    assert main(["topics", str(log), "--compare", "nope"]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    bare = tmp_path / "bare.csv"
    pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "winner": ["model_a"]}).to_csv(bare)
    assert main(["topics", str(bare)]) == 2
    assert "no prompts" in capsys.readouterr().err
