"""Answers of a vote: the answer_a/answer_b fields, and answers joined by prompt and model."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ranking.io.answer_texts import (
    LLMFAO_ANSWERS,
    AnswerTexts,
    has_answers,
    read_answer_texts,
    vote_answers,
)
from ranking.io.chunks import BattleLogError
from ranking.io.column_map import PRESETS
from ranking.io.frames import label_columns
from ranking.io.ingest import read_battles
from ranking.io.prompt_texts import PromptTexts, read_prompt_texts
from ranking.io.validation import validate_battles

LLMFAO = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "llmfao"


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_answers_are_part_of_the_vote_not_labels(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "votes.jsonl",
        [
            {
                "model_a": "x",
                "model_b": "y",
                "winner": "model_a",
                "answer_a": "# Hi\n- a",
                "answer_b": "short",
                "lang": "en",
            },
            {"model_a": "y", "model_b": "x", "winner": "tie", "lang": "en"},
        ],
    )
    battles = read_battles(log).battles
    assert label_columns(battles) == ["lang"]
    assert has_answers(battles)
    a, b, present = vote_answers(battles)
    assert present.tolist() == [True, False]
    assert a == ["# Hi\n- a"] and b == ["short"]


def test_vote_answers_follow_the_vote_order() -> None:
    battles = pd.DataFrame(
        {
            "model_a": ["x", "y"],
            "model_b": ["y", "x"],
            "winner": ["model_a", "model_b"],
            "tstamp": [2.0, 1.0],
            "answer_a": ["second", "first"],
            "answer_b": ["2", "1"],
        }
    )
    a, b, present = vote_answers(battles)
    assert a == ["first", "second"] and b == ["1", "2"]
    assert present.all()
    assert not has_answers(battles.drop(columns="answer_b"))
    assert vote_answers(battles.drop(columns="answer_a"))[2].tolist() == [False, False]


def test_answers_may_hold_lines_but_not_control_characters() -> None:
    frame = pd.DataFrame(
        {
            "model_a": ["x", "x"],
            "model_b": ["y", "y"],
            "winner": ["model_a", "tie"],
            "answer_a": ["line one\nline two\ttab", "bell \x07"],
            "answer_b": ["ok", "ok"],
        }
    )
    errors = validate_battles(frame, strict_text=True)
    assert [(e.index, e.field) for e in errors] == [(1, "answer_a")]


def test_answers_joined_by_prompt_id_and_model(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl.gz"
    with gzip.open(results, "wt") as out:
        for record in [
            {"prompt": 8, "name": "x", "result": "x on 8"},
            {"prompt": 8, "name": "y", "result": "y on 8"},
            {"prompt": 9, "name": "x", "result": "x on 9"},
        ]:
            out.write(json.dumps(record) + "\n")
    prompts = PromptTexts({"8": "eight?", "9": "nine?"})
    answers = read_answer_texts(results, prompts=prompts, **LLMFAO_ANSWERS)
    battles = pd.DataFrame(
        {
            "model_a": ["x", "y", "x"],
            "model_b": ["y", "x", "y"],
            "winner": ["model_a", "tie", "model_b"],
            "prompt": ["eight?", "eight?", "nine?"],
        }
    )
    joined = answers.attach(battles)
    assert joined["answer_a"].tolist() == ["x on 8", "y on 8", "x on 9"]
    assert joined["answer_b"].iloc[:2].tolist() == ["y on 8", "x on 8"]
    assert pd.isna(joined["answer_b"].iloc[2])  # y never answered prompt 9
    assert "answer_a" not in battles.columns  # the caller's frame is left alone
    assert vote_answers(joined)[2].tolist() == [True, True, False]


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ({"prompt": 1, "model": "x"}, "answer"),
        ({"prompt": 7, "model": "x", "answer": "a"}, "not a prompt id"),
        ({"prompt": 1, "model": "", "answer": "a"}, "model"),
        ({"prompt": 1, "model": "x", "answer": 3}, "not text"),
    ],
)
def test_a_bad_answers_file_is_named(tmp_path: Path, record: dict, needle: str) -> None:
    path = write_jsonl(tmp_path / "answers.jsonl", [record])
    with pytest.raises(BattleLogError, match=needle) as info:
        read_answer_texts(path, prompts=PromptTexts({"1": "one"}))
    assert "answers.jsonl" in str(info.value)


def test_joining_needs_a_prompt() -> None:
    battles = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["tie"]})
    with pytest.raises(ValueError, match="prompt"):
        AnswerTexts({}).attach(battles)


@pytest.mark.skipif(not LLMFAO.exists(), reason="LLMFAO is not in ../shared/data/llmfao")
def test_every_llmfao_vote_gets_its_two_answers() -> None:
    prompts = read_prompt_texts(LLMFAO / "prompts.jsonl")
    votes = LLMFAO / "crowd-comparisons.csv"
    battles = read_battles(votes, columns=PRESETS["llmfao"], prompts=prompts).battles
    answers = read_answer_texts(LLMFAO / "results.jsonl.gz", prompts=prompts, **LLMFAO_ANSWERS)
    a, b, present = vote_answers(answers.attach(battles))
    assert present.all()
    assert np.mean([x != y for x, y in zip(a, b, strict=True)]) > 0.99
