"""``plb`` on JSON Lines nested deep (issue 31, item 6): exit 2 naming the file and the
row, never the segfault of Arrow's JSON parser (rc 139). In a subprocess: a crash would
kill pytest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = "".join(
    json.dumps({"model_a": "a", "model_b": "b", "winner": "model_a", "user_id": f"u{i}"}) + "\n"
    for i in range(3)
).encode()
DEEP = 30_000  # 60 KB of brackets, as the attacker sent


@pytest.mark.parametrize("command", ["leaderboard", "users"])
def test_a_deeply_nested_label_exits_2_naming_file_and_row(tmp_path: Path, command: str) -> None:
    path = tmp_path / "deep.jsonl"
    record = b'{"model_a": "a", "model_b": "b", "winner": "tie", "label": '
    path.write_bytes(GOOD + record + b"[" * DEEP + b"]" * DEEP + b"}\n" + GOOD)
    run = subprocess.run(
        [sys.executable, "-m", "service.cli", command, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])  # -11: a segfault
    assert run.stderr.splitlines() == [
        f"plb {command}: error: {path}: row 4: malformed JSON (nested too deeply)"
    ]
