"""``plb next-battle``: the pair to vote on, from queries (and votes), on the shared fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main
from service.cli.next_battle import format_next_battle
from service.live.next_battle import next_battle_document

QUERIES = ["How do I reverse a linked list in Rust?", "Write a short poem about autumn rain"]


@pytest.fixture
def queries_txt(tmp_path: Path) -> Path:
    path = tmp_path / "queries.txt"
    path.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    return path


def test_json_and_table(
    shared_fit: Path, queries_txt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["next-battle", str(shared_fit), "--queries", str(queries_txt)]
    assert main([*argv, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["source"] == "predicted"
    assert document["model_a"] != document["model_b"]
    assert document["information"] >= 0.0 and len(document["alternatives"]) == 3
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert f"Vote next: {document['model_a']} vs {document['model_b']}" in table
    assert "bits" in table

    votes = tmp_path_votes(queries_txt.parent, document["model_a"], document["model_b"])
    assert main([*argv, "--votes", str(votes), "--format", "json"]) == 0
    blended = json.loads(capsys.readouterr().out)
    assert blended["source"] == "blended" and blended["n_votes"] == 2
    # the pair just voted on is not suggested again (docs/SPEC.md, the next battle)
    assert {blended["model_a"], blended["model_b"]} != {document["model_a"], document["model_b"]}
    assert blended["informative"] is (blended["information"] >= 0.1)
    assert main([*argv, "--votes", str(votes)]) == 0
    said = capsys.readouterr().out
    if "skipped" in blended:
        skipped = blended["skipped"]
        assert f"Not {skipped['model_a']} vs {skipped['model_b']} again" in said
    assert ("One vote will hardly change these odds" in said) is not blended["informative"]

    assert main([*argv, "--target", "ranking"]) == 0
    assert "bits about your ranking" in capsys.readouterr().out


def tmp_path_votes(folder: Path, a: str, b: str) -> Path:
    path = folder / "votes.jsonl"
    vote = {"model_a": a, "model_b": b, "winner": "model_b"}
    path.write_text("\n".join(json.dumps(vote) for _ in range(2)) + "\n", encoding="utf-8")
    return path


def test_a_fit_without_a_predictor_exits_2(
    shared_fit_no_features: Path, queries_txt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["next-battle", str(shared_fit_no_features), "--queries", str(queries_txt)]
    assert main(argv) == 2
    assert "no rating predictor" in capsys.readouterr().err


def test_the_words_say_a_skipped_pair_and_a_weak_vote() -> None:
    rows = [("a", 1100, 400), ("b", 1100, 400), ("c", 500, 40), ("d", 450, 40)]
    board = {
        "models": [{"model": m, "rating": r, "lower": r - w, "upper": r + w} for m, r, w in rows]
    }
    plain = format_next_battle(next_battle_document(board))
    assert "again" not in plain and "hardly" not in plain  # a strong vote, never skipped
    after = format_next_battle(next_battle_document(board, last=("a", "b")))
    assert "Not a vs b again: you have just voted on it" in after
    assert "One vote will hardly change these odds" in after
