"""Progress on stderr (issue 14): bars with stage names and counts, on a terminal only.

A terminal is simulated by forcing the one on/off decision of :mod:`service.cli.progress`
(``stderr_is_terminal``); pytest's captured stderr is not a terminal, so without it no
bar may appear. Whatever is drawn, stdout stays exactly one JSON document with
``--format json``.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main, progress


@pytest.fixture(autouse=True)
def decided_afresh() -> Iterator[None]:
    """Each test decides on bars itself; none leaves bars on for the next."""
    yield
    progress.configure(quiet=False)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stderr counts as a terminal: bars are drawn unless ``--quiet``."""
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(3)
    models = ["alpha", "beta", "gamma"]
    rows = []
    for i in range(300):
        a, b = rng.choice(models, 2, replace=False)
        rows.append({"model_a": a, "model_b": b, "winner": ("model_a", "model_b", "tie")[i % 3]})
    path = tmp_path_factory.mktemp("progress") / "battles.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_simulation(simulate(40, 25, 5, rng=2), tmp_path_factory.mktemp("sim"))


def finished_bars(err: str) -> list[str]:
    """Each bar's last ``"NAME: 100%|...| N/N ..."`` state, in order (tqdm redraws with \r,
    and a bar that closes draws its last state once more)."""
    done: list[str] = []
    for piece in re.split(r"[\r\n]", err):
        if "100%|" not in piece:
            continue
        if done and _name(done[-1]) == _name(piece):
            done[-1] = piece
        else:
            done.append(piece)
    return done


def _name(line: str) -> str:
    return line.split(": 100%|")[0].strip()


def bar_names(err: str) -> list[str]:
    return [_name(line) for line in finished_bars(err)]


def one_json(out: str) -> dict[str, Any]:
    document = json.loads(out)  # raises on anything but exactly one document
    assert isinstance(document, dict)
    return document


def test_the_decision_is_made_once_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    progress.configure(quiet=False)
    assert progress.bars_on() and not progress.quiet()
    progress.configure(quiet=True)
    assert not progress.bars_on() and progress.quiet()
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    progress.configure(quiet=False)
    assert not progress.bars_on()


def test_notes_are_one_line_and_quiet_silences_them(capsys: pytest.CaptureFixture[str]) -> None:
    progress.configure(quiet=False)
    progress.note("fitting topics")
    assert capsys.readouterr().err == "plb: fitting topics\n"
    progress.configure(quiet=True)
    progress.note("fitting topics")
    assert capsys.readouterr().err == ""


def test_stages_draw_one_bar_each_with_counts(
    terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress.configure(quiet=False)
    with progress.stages() as stages:
        first = stages("first stage", 3, "fits")
        for _ in range(3):
            first(1)
        stages("second stage", 2, "rounds")(2)
    err = capsys.readouterr().err
    assert bar_names(err) == ["first stage", "second stage"]
    assert "3/3" in finished_bars(err)[0] and "2/2" in finished_bars(err)[1]


@pytest.mark.parametrize(
    ("argv", "bars"),
    [
        (["--method", "elo"], ["reading battles.csv", "Elo bootstrap"]),  # Elo's default CI
        (["--ci", "bootstrap", "--rounds", "200"], ["reading battles.csv", "BT bootstrap"]),
        (["--method", "elo", "--ci", "none"], ["reading battles.csv"]),
    ],
)
def test_leaderboard_bars_name_the_stage_and_count_the_rounds(
    small_log: Path,
    argv: list[str],
    bars: list[str],
    terminal: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["leaderboard", str(small_log), *argv, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert one_json(captured.out)["n_battles"] == 300
    assert bar_names(captured.err) == bars
    rounds = "200" if "200" in argv else "100"
    if len(bars) > 1:
        assert f"{rounds}/{rounds}" in finished_bars(captured.err)[-1]


@pytest.mark.parametrize("quiet", [True, False], ids=["--quiet", "not-a-terminal"])
def test_quiet_or_no_terminal_draws_nothing(
    small_log: Path, quiet: bool, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    if quiet:
        monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    argv = ["leaderboard", str(small_log), "--method", "elo", "--format", "json"]
    assert main(["-q", *argv] if quiet else argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert [m["model"] for m in one_json(captured.out)["models"]]


def test_fit_names_every_stage(
    simulated: dict[str, Path], tmp_path: Path, terminal: None, capsys: Any
) -> None:
    argv = ["fit", str(simulated["battles"]), "--out", str(tmp_path / "fit")]
    assert main([*argv, "--embedding", "tfidf", "--n-topics", "3", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert one_json(captured.out)["n_users"] == 40
    assert bar_names(captured.err) == [
        "reading battles.jsonl.gz",
        "Elo bootstrap",
        "per-user fits",
        "held-out evaluation",
        "prompts' rows kept by text",
        "query profiles",
        "embedding queries (TF-IDF)",
        "topics",
        "rating predictor",
        # the prompts' vectors by the TF-IDF just fitted, kept for a refit (with MiniLM
        # they are embedded once, before the profiles)
        "embedding queries (TF-IDF)",
    ]
    lines = finished_bars(captured.err)
    assert "4/4" in lines[2] and "100/100" in lines[1]
    assert "plb: fitting topics, query profiles and the rating predictor\n" in captured.err


def test_fit_quietly_prints_no_bar_and_no_note(
    simulated: dict[str, Path], tmp_path: Path, terminal: None, capsys: Any
) -> None:
    argv = ["-q", "fit", str(simulated["battles"]), "--out", str(tmp_path / "fit")]
    assert main([*argv, "--embedding", "tfidf", "--n-topics", "3", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert one_json(captured.out)["features"] is True


def test_evaluate_names_its_stage(
    simulated: dict[str, Path], terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["evaluate", str(simulated["battles"]), "--no-features", "--format", "json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert one_json(captured.out)["results"]
    assert bar_names(captured.err) == ["reading battles.jsonl.gz", "held-out evaluation"]
    assert "4/4" in finished_bars(captured.err)[-1]


def _on_a_terminal(argv: list[str], size: tuple[int, int]) -> tuple[int, str, str]:
    """``python -m service.cli ARGV`` with stderr on a pseudo-terminal of ``size``."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=follower,
        )
        os.close(follower)
        out, _ = process.communicate(timeout=120)
        err = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed its end: all is read
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(leader)
    return process.returncode, out.decode(), err.decode(errors="replace")


@pytest.mark.parametrize("size", [(40, 120), (0, 0)], ids=["120 columns", "no size"])
def test_a_real_terminal_gets_bars_and_quiet_silences_them(
    small_log: Path, size: tuple[int, int]
) -> None:
    argv = ["leaderboard", str(small_log), "--method", "elo", "--format", "json"]
    code, out, err = _on_a_terminal(argv, size)
    assert code == 0, err
    assert one_json(out)["n_battles"] == 300
    assert bar_names(err) == ["reading battles.csv", "Elo bootstrap"]
    assert all(len(line) <= (size[1] or 80) for line in finished_bars(err))
    code, out, err = _on_a_terminal(["--quiet", *argv], size)
    assert code == 0 and err == ""
    assert one_json(out)["n_battles"] == 300


def test_verbose_logs_our_details_and_only_the_notices_of_other_libraries(
    tmp_path: Path,
) -> None:
    """``plb -v`` is for our details: numba's compiler dumps (DEBUG) would bury them."""
    import logging

    try:
        assert main(["-q", "-v", "simulate", "--out", str(tmp_path), "--users", "5"]) == 0
        for own in ("ranking", "features.topics", "service.pipeline"):
            assert logging.getLogger(own).isEnabledFor(logging.DEBUG)
        numba = logging.getLogger("numba.core.ssa")
        assert numba.isEnabledFor(logging.INFO) and not numba.isEnabledFor(logging.DEBUG)
        assert main(["-q", "simulate", "--out", str(tmp_path), "--users", "5"]) == 0
        assert not logging.getLogger("ranking").isEnabledFor(logging.INFO)
    finally:
        logging.getLogger().setLevel(logging.WARNING)
