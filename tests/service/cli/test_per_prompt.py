"""``plb recommend DIR --queries FILE --prompt TEXT``: the ranking for one prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main

QUERIES = ["How do I reverse a linked list in Rust?", "Explain p-values simply"]
CODE = "Write a Python function that merges two sorted lists, with unit tests."
POEM = "Write a short poem about autumn rain falling on an old stone bridge."


@pytest.fixture
def queries_txt(tmp_path: Path) -> Path:
    path = tmp_path / "queries.txt"
    path.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    return path


def recommend(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["recommend", *argv]) == 0
    return capsys.readouterr().out


def test_a_prompt_ranks_for_that_prompt(
    shared_fit: Path, queries_txt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = (str(shared_fit), "--queries", str(queries_txt), "--format", "json")
    person = json.loads(recommend(capsys, *base))
    code = json.loads(recommend(capsys, *base, "--prompt", CODE))
    poem = json.loads(recommend(capsys, *base, "--prompt", POEM))
    assert person.get("scope", "person") == "person"
    for document in (code, poem):
        assert document["scope"] == "prompt" and document["source"] == "predicted"
        assert set(document["prompt_topic"]) == {"topic", "label"}
        assert len(document["models"]) == len(person["models"])
    assert [m["rating"] for m in code["models"]] != [m["rating"] for m in poem["models"]]
    assert json.loads(recommend(capsys, *base, "--prompt", CODE)) == code  # deterministic

    text = recommend(capsys, str(shared_fit), "--queries", str(queries_txt), "--prompt", CODE)
    topic, (explained,) = code["prompt_topic"], code["explanation"]["topics"]
    assert explained["fits"]  # a coding prompt: named as the person would name it
    assert text.startswith(f"For this prompt (read as {explained['name']}: {topic['label']})")
    assert code["models"][0]["model"] in text
    assert code["explanation"]["scope"] == "prompt"
    why = text[text.index("Why, for this prompt:") :]
    for sentence in code["explanation"]["sentences"]:  # every sentence, wrapped
        assert " ".join(sentence.split()) in " ".join(why.split())

    tax = "What deductions can I claim on my tax return as a freelancer?"
    far = recommend(capsys, str(shared_fit), "--queries", str(queries_txt), "--prompt", tax)
    assert far.startswith("For this prompt (none of our topics fits it closely)")


def test_a_blank_prompt_is_a_usage_error(
    shared_fit: Path, queries_txt: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["recommend", str(shared_fit), "--queries", str(queries_txt), "--prompt", "  "]
    assert main(argv) == 2
    assert "--prompt" in capsys.readouterr().err
