"""Addresses: what the manifest records, and what is refused before any connection."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from service.cli import main
from service.scale.cluster import ClusterError, connect, describe


@pytest.mark.parametrize(
    ("address", "recorded"),
    [
        ("local:2", "local:2"),
        ("tcp://10.0.0.5:8786", "tcp://10.0.0.5:8786"),
        ("tls://user:secret@scheduler.example:8786", "tls://scheduler.example:8786"),
        ("10.0.0.5:8786", "tcp://10.0.0.5:8786"),
    ],
)
def test_the_manifest_records_the_address_without_secrets(address: str, recorded: str) -> None:
    assert describe(address) == recorded


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("local:0", "local:N needs a positive number of workers"),
        ("local:two", "local:N needs a positive number of workers"),
        ("tcp://:8786", "names no host"),
        ("tcp://127.0.0.1:99999", "bad port"),
        ("tcp://127.0.0.1:1", "connection refused"),
    ],
)
def test_bad_addresses_are_one_line_errors(address: str, words: str) -> None:
    with pytest.raises(ClusterError, match=words) as caught, connect(address, timeout=2):
        pass
    assert "\n" not in str(caught.value)


def test_without_dask_the_option_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    argv = ["fit", str(tmp_path / "b.jsonl"), "--out", str(tmp_path / "f")]
    assert main([*argv, "--scheduler", "local:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "plb fit: error: --scheduler needs Dask (distributed is missing): "
        "pip install 'personal-leaderboard[dask]'"
    )
