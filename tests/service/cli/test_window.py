"""``--since`` / ``--until`` on ``plb leaderboard`` and ``plb users``: the board of a
time window, by ``tstamp``; what cannot work is refused with exit 2, naming the option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main

MAY_1 = 1714521600  # 2024-05-01T00:00:00Z
HEADER = "id,model_a,model_b,winner,user_id,tstamp\n"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """April: x always beats y; May: y always beats x; one vote without a tstamp."""
    rows = []
    for i in range(30):
        rows.append(f"a{i},x,y,model_a,u{i % 5},{MAY_1 - 86_400 - i}")
        rows.append(f"m{i},x,y,model_b,u{i % 5},{MAY_1 + 3600 + i}")
    rows.append("n0,x,y,model_a,u0,")
    path = tmp_path / "battles.csv"
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def board(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["leaderboard", *argv, "--format", "json", "--min-votes", "0"]) == 0
    return json.loads(capsys.readouterr().out)


def error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and captured.out == "", captured.err
    return lines[0]


def test_a_window_keeps_its_votes_only(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    may = board(capsys, str(log), "--since", "2024-05-01")
    assert may["n_battles"] == 30
    assert [m["model"] for m in may["models"]] == ["y", "x"]
    assert may["window"] == {"since": "2024-05-01T00:00:00Z"}
    april = board(capsys, str(log), "--until", str(MAY_1))
    assert april["n_battles"] == 30 and april["models"][0]["model"] == "x"
    assert april["window"] == {"until": "2024-05-01T00:00:00Z"}
    # half-open: a window ending where the next starts shares no vote with it
    both = board(capsys, str(log), "--since", "2024-04-01T00:00Z", "--until", "2024-06-01")
    assert both["n_battles"] == 60  # the vote without a tstamp is in no window
    assert "window" not in board(capsys, str(log))


def test_the_table_says_the_window(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leaderboard", str(log), "--since", "2024-05-01", "--min-votes", "0"]) == 0
    out = capsys.readouterr().out
    assert "30 battles where tstamp >= 2024-05-01T00:00:00Z (of 61 read)" in out


def test_users_take_a_window(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["users", str(log), "--min-battles", "1", "--null-replicates", "0", "--format", "json"]
    assert main([*argv, "--until", "2024-05-01"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["window"] == {"until": "2024-05-01T00:00:00Z"}
    assert document["aggregate"]["n_battles"] == 30


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--since", "yesterday"], "--since: 'yesterday' is not a date"),
        (["--until", "9" * 400], "--until: '999999999999...9999 (400 digits)' is outside"),
        (
            ["--since", "2024-06-01", "--until", "2024-05-01"],
            "--since 2024-06-01 --until 2024-05-01: since (2024-06-01T00:00:00Z) must come "
            "before until",
        ),
    ],
)
def test_bad_values_are_refused_before_any_file(
    options: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("leaderboard", "users"):
        line = error_line(capsys, command, "/nonexistent/battles.csv", *options)
        assert line.startswith(f"plb {command}: error: {expected}"), line


def test_a_log_without_tstamp_cannot_be_windowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("model_a,model_b,winner\nx,y,model_a\n", encoding="utf-8")
    line = error_line(capsys, "leaderboard", str(path), "--since", "2024-05-01")
    assert line.startswith("plb leaderboard: error: --since 2024-05-01: the votes of")
    assert "carry no tstamp" in line


def test_an_empty_window_is_refused(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, "leaderboard", str(log), "--since", "2030-01-01")
    assert "--since 2030-01-01: no vote of" in line and "falls in that window" in line
