"""``plb leaderboard --style-control`` (service/cli/style_control.py): known answers, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main
from tests.style_arena import length_battles, write_length_log


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_length_log(tmp_path_factory.mktemp("style") / "votes.jsonl")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["-q", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_long_winner_is_first_raw_and_not_under_control(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "leaderboard", str(log), "--format", "json")
    assert code == 0 and json.loads(out)["models"][0]["model"] == "long"
    code, out, _ = run(capsys, "leaderboard", str(log), "--style-control", "--format", "json")
    assert code == 0
    document = json.loads(out)
    rows = {r["model"]: r for r in document["models"]}
    assert abs(rows["long"]["rating"] - rows["mid"]["rating"]) < 40
    assert {r["rank"] for r in rows.values()} == {1}  # three equal models, overlapping
    assert sum(r["p_best"] for r in rows.values()) == pytest.approx(1.0, abs=1e-3)
    style = document["style_control"]
    length = style["coefficients"][0]
    assert length["feature"] == "length" and length["lower"] > 40
    assert style["raw"][0]["model"] == "long"
    assert style["scaling"] == "mixed"


def test_the_table_says_the_coefficients_in_words(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "leaderboard", str(log), "--style-control")
    assert code == 0
    assert out.startswith("BT leaderboard, style-controlled: 3 models, 1,500 battles")
    assert "length: +" in out and "points per doubling of length" in out
    assert "Raw board beside it:" in out


def test_answers_joined_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    battles = length_battles(600)
    answers = {}
    for row in battles.itertuples():
        answers[(row.prompt, row.model_a)] = row.answer_a
        answers[(row.prompt, row.model_b)] = row.answer_b
    (tmp_path / "answers.jsonl").write_text(
        "".join(
            json.dumps({"prompt": p, "model": m, "answer": a}) + "\n"
            for (p, m), a in answers.items()
        )
    )
    votes = battles.drop(columns=["answer_a", "answer_b"])
    votes.to_json(tmp_path / "votes.jsonl", orient="records", lines=True)
    argv = ["leaderboard", str(tmp_path / "votes.jsonl"), "--style-control", "--format", "json"]
    code, out, _ = run(capsys, *argv, "--answers", str(tmp_path / "answers.jsonl"))
    assert code == 0
    assert json.loads(out)["style_control"]["coefficients"][0]["coefficient"] > 40


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--method", "elo"], "--method elo"),
        (["--answers", "nowhere.jsonl"], "nowhere.jsonl"),
    ],
)
def test_options_that_cannot_work_exit_2(
    log: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    argv = ["leaderboard", str(log), *extra]
    if "--method" in extra:
        argv.append("--style-control")
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err and "Traceback" not in err


def test_a_log_without_answers_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    votes = length_battles(100).drop(columns=["answer_a", "answer_b"])
    votes.to_json(tmp_path / "plain.jsonl", orient="records", lines=True)
    code, _, err = run(capsys, "leaderboard", str(tmp_path / "plain.jsonl"), "--style-control")
    assert code == 2
    assert "answer_a and answer_b" in err and "--answers" in err


def test_answers_are_not_a_segment(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "leaderboard", str(log), "--where", "answer_a=word")
    assert code == 2 and "answer_a" in err
