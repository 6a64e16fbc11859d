"""Tests for ranking.io.prompt_texts: prompt texts by id, from JSON Lines, JSON and CSV."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from ranking.io.chunks import BattleLogError
from ranking.io.prompt_texts import PromptTexts, read_prompt_texts


@pytest.mark.parametrize("name", ["p.jsonl", "p.json", "p.csv", "p.jsonl.gz"])
def test_each_format_gives_the_texts_by_id_as_text(tmp_path: Path, name: str) -> None:
    records = [
        {"pid": 8, "body": "a haiku"},
        {"pid": "q7", "body": "why?"},
        {"pid": 9.0, "body": ""},
    ]
    path = tmp_path / name
    if name.endswith(".csv"):
        text = "pid,body\n8,a haiku\nq7,why?\n9,\n"
    elif ".jsonl" in name:
        text = "".join(json.dumps(r) + "\n" for r in records) + "\n"
    else:
        text = json.dumps(records)
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    prompts = read_prompt_texts(path, id_column="pid", text_column="body")
    assert dict(prompts.texts) == {"8": "a haiku", "q7": "why?", "9": ""}
    assert prompts.source == str(path)


def test_lookup_gives_texts_and_the_unknown_ids() -> None:
    prompts = PromptTexts({"1": "one"}, "p.jsonl")
    texts, unknown = prompts.lookup(pd.Series(["1", None, "2"], dtype="string"))
    assert texts.tolist() == ["one", pd.NA, pd.NA] and unknown.tolist() == [False, False, True]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": 1}\n', "row 1: field 'text': value is missing (fields found: id)"),
        ('{"id": true, "text": "x"}\n', "row 1: field 'id': value True is not a prompt id"),
        ('{"id": 1, "text": 2}\n', "row 1: field 'text': value 2 is not text"),
        (
            '{"id": 1, "text": "a"}\n{"id": 1, "text": "b"}\n',
            "row 2: field 'id': value '1' is given two different texts",
        ),
        ("{oops\n", "row 1: malformed JSON"),
        ("[1]\n", "row 1: record is not an object"),
        ("\n", "holds no prompts"),
    ],
)
def test_a_bad_file_is_named_with_the_row_field_and_value(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "prompts.jsonl"
    path.write_text(text)
    with pytest.raises(BattleLogError) as caught:
        read_prompt_texts(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_a_missing_file_or_an_unknown_suffix_is_named(tmp_path: Path) -> None:
    with pytest.raises(BattleLogError, match="file not found"):
        read_prompt_texts(tmp_path / "none.jsonl")
    (tmp_path / "p.txt").write_text("x")
    with pytest.raises(BattleLogError, match="unknown file type"):
        read_prompt_texts(tmp_path / "p.txt")
