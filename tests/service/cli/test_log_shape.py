"""``plb`` reads logs in their own shape (issue 30, item 2): ``--columns``,
``--winner-values``, ``--battle-id``, ``--preset`` and ``--prompts`` on every command that
reads battle logs; an id column whose repeats carry different votes is refused on one
line; each mistake exits 2 naming the option and the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main

LLMFAO = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "llmfao"
MODELS = ("Airoboros", "Weaver", "Claude", "Vicuna")
SHAPE = [
    "--columns",
    "model_a=left,model_b=right,user_id=worker",
    "--winner-values",
    "left=model_a,right=model_b,tie=tie",
    "--battle-id",
    "none",
]


def _crowd_rows(n_pairs: int = 12, n_workers: int = 6) -> list[str]:
    """LLMFAO's shape: each pair id judged by every worker, with their own verdicts."""
    rows = []
    for pair in range(n_pairs):
        left, right = MODELS[pair % 4], MODELS[(pair + 1 + pair // 4) % 4]
        if left == right:
            right = MODELS[(pair + 2) % 4]
        for worker in range(n_workers):
            winner = ("left", "right", "tie")[(pair + worker) % 3]
            rows.append(f"{pair},{pair % 2 + 5},1,2,{worker},{winner},{left},{right}")
    return rows


@pytest.fixture
def crowd(tmp_path: Path) -> Path:
    path = tmp_path / "crowd.csv"
    header = "id,prompt,model_x,model_y,worker,winner,left,right"
    path.write_text("\n".join([header, *_crowd_rows()]) + "\n")
    return path


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"id": 5, "text": "Explain QFT."}\n{"id": 6, "text": "Sort a list."}\n')
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict, str]:
    code = main([*argv, "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out), captured.err


def run_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line ``plb`` prints on stderr when it exits 2 (argparse's own exit too)."""
    try:
        code = main(list(argv))
    except SystemExit as exit:
        code = exit.code
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err.strip()


def test_leaderboard_reads_a_mapped_log_keeping_every_vote(
    crowd: Path, prompts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["leaderboard", str(crowd), *SHAPE, "--prompts", str(prompts), "--min-votes", "0"]
    document, err = run_json(capsys, *argv)
    assert document["n_battles"] == 72 and err == ""
    assert {m["model"] for m in document["models"]} == set(MODELS)
    preset, _ = run_json(
        capsys, "leaderboard", str(crowd), "--preset", "llmfao", "--min-votes", "0"
    )
    assert preset["models"] == document["models"]


def test_the_pair_id_is_refused_as_a_battle_id_on_one_line(
    crowd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = run_error(capsys, "leaderboard", str(crowd), *SHAPE[:4])
    assert line == (
        f"plb leaderboard: error: {crowd}: column 'id' is not a battle id: 60 of 72 rows repeat "
        "an id with a different vote; name the battle id with --battle-id COLUMN, or "
        "--battle-id none"
    )


def test_a_question_id_log_is_refused_then_read_whole_with_battle_id_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # MT-bench human judgments: question_id repeats across judges and model pairs
    path = tmp_path / "judgments.csv"
    lines = ["question_id,model_a,model_b,winner,judge,turn"]
    for question in range(81, 89):
        for judge in range(5):
            a, b = MODELS[judge % 4], MODELS[(judge + question) % 3 + 1]
            if a == b:
                b = MODELS[0] if a != MODELS[0] else MODELS[1]
            winner = ("model_a", "model_b", "tie")[(question + judge) % 3]
            lines.append(f"{question},{a},{b},{winner},author_{judge},1")
    lines.append(lines[1].replace(",1", ",1", 1))  # an exact repeat of the first vote
    path.write_text("\n".join(lines) + "\n")
    line = run_error(capsys, "leaderboard", str(path))
    assert line == (
        f"plb leaderboard: error: {path}: column 'question_id' is not a battle id: 32 of 41 "
        "rows repeat an id with a different vote; name the battle id with --battle-id COLUMN, "
        "or --battle-id none"
    )
    for option in (["--battle-id", "none"], ["--preset", "mt-bench"]):
        document, err = run_json(capsys, "leaderboard", str(path), *option, "--min-votes", "0")
        assert document["n_battles"] == 41 and err == ""  # every vote, the repeat too


def test_exact_repeats_are_still_skipped_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "repeats.jsonl"
    votes = [
        {"battle_id": f"b{i}", "model_a": MODELS[i % 2], "model_b": MODELS[2], "winner": "tie"}
        for i in range(4)
    ]
    path.write_text("".join(json.dumps(v) + "\n" for v in [*votes, votes[0], votes[1]]))
    document, err = run_json(capsys, "leaderboard", str(path), "--min-votes", "0")
    assert document["n_battles"] == 4 and err == "plb: skipped 2 duplicate battle ids\n"


@pytest.mark.parametrize("command", ["users", "evaluate"])
def test_other_commands_take_the_same_options(
    crowd: Path, prompts: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, str(crowd), *SHAPE, "--prompts", str(prompts)]
    if command == "users":
        argv += ["--min-battles", "5", "--null-replicates", "0"]
    else:
        argv += ["--no-features", "--min-votes", "5"]
    document, _ = run_json(capsys, *argv)
    n_users = len(document["users"]) if command == "users" else document["users"]
    assert n_users == 6


def test_fit_joins_the_prompt_texts(
    crowd: Path, prompts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fit"
    argv = ["fit", str(crowd), *SHAPE, "--prompts", str(prompts), "--no-features"]
    document, _ = run_json(capsys, *argv, "--out", str(out))
    assert document["n_battles"] == 72


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--columns", "model_a"], "argument --columns: 'model_a' is not FIELD=COLUMN"),
        (["--columns", "lefty=left"], "argument --columns: lefty=left: no field 'lefty'"),
        (["--columns", "winner=none"], "argument --columns: winner=none: winner needs a column"),
        (["--winner-values", "left=first"], "'first' is not one of model_a, model_b, tie"),
        (["--battle-id", "id", "--columns", "battle_id=none"], "--battle-id id contradicts"),
        (["--columns", "model_a=left,model_b=left"], "maps column 'left' to two fields"),
        (["--prompts-id", "pid"], "--prompts-id names a column of --prompts FILE, which is not"),
        (["--prompts", "/nonexistent/p.jsonl"], "--prompts /nonexistent/p.jsonl: "),
    ],
)
def test_options_that_cannot_work_exit_2_naming_option_and_value(
    crowd: Path, argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert words in run_error(capsys, "leaderboard", str(crowd), *argv)


def test_a_mapped_column_the_log_lacks_names_the_option(
    crowd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = run_error(capsys, "leaderboard", str(crowd), "--columns", "model_a=lft,model_b=right")
    assert line.startswith(
        f"plb leaderboard: error: --columns model_a=lft: {crowd}: no column 'lft' for model_a "
        "(columns found: id, prompt, model_x"
    )
    line = run_error(capsys, "leaderboard", str(crowd), "--preset", "llmfao", "--battle-id", "bid")
    assert line.startswith(f"plb leaderboard: error: --battle-id bid: {crowd}: no column 'bid'")


def test_without_a_map_the_missing_fields_point_to_columns(
    crowd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = run_error(capsys, "leaderboard", str(crowd))
    assert line.endswith("; name the columns that hold them with --columns FIELD=COLUMN,...")
    assert "missing required columns 'model_a', 'model_b' (columns found: id, prompt" in line


def test_an_unknown_winner_value_names_the_option_row_and_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "crowd.csv"
    rows = _crowd_rows()
    rows[3] = rows[3].replace(",tie,", ",draw,").replace(",left,", ",draw,", 1)
    path.write_text("id,prompt,model_x,model_y,worker,winner,left,right\n" + "\n".join(rows))
    line = run_error(capsys, "leaderboard", str(path), "--preset", "llmfao")
    assert line == (
        "plb leaderboard: error: --winner-values left=model_a,right=model_b,tie=tie: "
        f"{path}: row 4: field 'winner': value 'draw' is not one of the winner values mapped: "
        "'left', 'right', 'tie'"
    )


def test_a_prompt_id_missing_from_the_prompts_names_it(
    crowd: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    few = tmp_path / "few.csv"
    few.write_text("pid,body\n5,Explain QFT.\n")
    argv = ["--prompts", str(few), "--prompts-id", "pid", "--prompts-text", "body"]
    line = run_error(capsys, "leaderboard", str(crowd), "--preset", "llmfao", *argv)
    assert line == (
        f"plb leaderboard: error: --prompts {few}: {crowd}: prompt id '6' of 36 votes is not in "
        "few.csv (1 ids there)"
    )


@pytest.mark.skipif(not LLMFAO.is_dir(), reason="../shared/data/llmfao is not here")
def test_the_real_llmfao_log_reads_in_one_command(capsys: pytest.CaptureFixture[str]) -> None:
    log, texts = LLMFAO / "crowd-comparisons.csv", LLMFAO / "prompts.jsonl"
    argv = ["leaderboard", str(log), *SHAPE, "--prompts", str(texts), "--min-votes", "0"]
    document, err = run_json(capsys, *argv)
    assert document["n_battles"] == 8931 and len(document["models"]) == 59 and err == ""
    line = run_error(capsys, "leaderboard", str(log), *SHAPE[:4])
    assert "column 'id' is not a battle id: 6,792 of 8,931 rows" in line
