"""The columnar reader's formats (:mod:`ranking.io.arrow_tables`): the nesting guard.

Arrow's JSON parser recurses without a bound: a label nested 30,000 deep crashed
``plb leaderboard`` with a segfault (issue 31, item 6). :func:`_json_depth` bounds the
nesting of a block before Arrow sees it; a block over :data:`MAX_JSON_DEPTH` goes by rows.
A crash would kill pytest, so the reads run in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from ranking.io.arrow_tables import MAX_JSON_DEPTH, _json_depth

GOOD = "".join(
    json.dumps({"model_a": "a", "model_b": "b", "winner": "model_a", "user_id": f"u{i}"}) + "\n"
    for i in range(3)
).encode()
DEEP = 30_000
#: Ways to nest deep that a count blind to strings or to line ends would miss.
ATTACKS = {
    "label": b'{"label": ' + b"[" * DEEP + b"]" * DEEP + b"}\n",
    "objects": b'{"label": ' + b'{"a": ' * DEEP + b"1" + b"}" * DEEP + b"}\n",
    "over lines": b'{"label": ' + (b"[" * 50 + b"\n") * 600 + (b"]" * 50 + b"\n") * 600 + b"}\n",
    "closers in a string first": b'{"a": "' + b"]" * DEEP + b'", "b": ' + b"[" * DEEP + b"\n",
    "a closer in a string each": b'{"label": ' + b'["]",' * DEEP + b"]" * DEEP + b"}\n",
    "stray closers first": b"]" * DEEP + b"\n" + b'{"label": ' + b"[" * DEEP + b"\n",
    "after an unterminated string": b'{"a": "x\n{"label": ' + b"[" * DEEP + b"\n",
    "after a backslash at a line end": b'{"a": "x\\\n{"label": ' + b"[" * DEEP + b"\n",
}
#: Brackets that Arrow never nests: inside strings, escapes included.
FLAT = {
    "in a string": b'{"a": "' + b"[" * DEEP + b'"}\n',
    "after an escaped quote": b'{"a": "\\"' + b"[" * DEEP + b'"}\n',
    "after an escaped backslash": b'{"a": "\\\\' + b"[" * DEEP + b'"}\n',
    "balanced lines": b'{"a": [[1], {"b": [2]}]}\n' * 1000,
}


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=list(ATTACKS))
def test_deep_nesting_is_found_however_it_is_written(attack: bytes) -> None:
    assert _json_depth(pa.py_buffer(GOOD + attack + GOOD)) > MAX_JSON_DEPTH


@pytest.mark.parametrize("text", FLAT.values(), ids=list(FLAT))
def test_brackets_in_strings_do_not_count(text: bytes) -> None:
    assert _json_depth(pa.py_buffer(GOOD + text + GOOD)) <= 4  # {"a": [[1], {"b": [2]}]}


def test_escapes_end_where_json_says() -> None:
    # an even run of backslashes leaves the quote unescaped: the string ends there
    text = b'{"a": "\\\\\\\\", "b": ' + b"[" * 100 + b"]" * 100 + b"}\n"
    assert _json_depth(pa.py_buffer(text)) > MAX_JSON_DEPTH


_READ = """
import sys
from ranking.io.chunks import BattleLogError
from ranking.io.ingest import read_battles
try:
    read_battles(sys.argv[1])
except BattleLogError as error:
    print(error)
    sys.exit(2)
"""


@pytest.mark.parametrize("attack", ["label", "objects", "over lines"])
def test_a_deeply_nested_log_is_a_row_error_not_a_crash(tmp_path: Path, attack: str) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(GOOD + ATTACKS[attack] + GOOD)
    run = subprocess.run(
        [sys.executable, "-c", _READ, str(path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])  # -11: a segfault
    assert "deep.jsonl: row 4: malformed JSON" in run.stdout, run.stdout
