"""``plb`` imports only what the command it runs uses (issue 32, item 9).

Each check runs ``python -m service.cli`` in a fresh interpreter and reads
``sys.modules`` at its exit: structural, so no timing is asserted. ``plb --help`` loads no
numerics at all; ``plb leaderboard`` loads no topic model, embedding network or
scikit-learn.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import build_parser, main, named_command
from service.cli.commands import COMMANDS

#: What no command that fits no topic model should load (seconds of import each).
TOPIC_MODEL = {"torch", "bertopic", "sentence_transformers", "transformers", "sklearn", "umap"}
#: What ``plb --help`` should not load either.
NUMERICS = TOPIC_MODEL | {"numpy", "pandas", "numba", "scipy", "pyarrow", "tqdm"}

#: Runs ``service.cli`` as ``plb`` with the arguments after ``-c`` and prints the top-level
#: packages it loaded on stderr's last line, whether it exited or not.
PROBE = """
import runpy, sys
sys.argv = ["plb", *sys.argv[1:]]
try:
    runpy.run_module("service.cli", run_name="__main__")
except SystemExit:
    pass
finally:
    print(" ".join(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def loaded(*argv: str) -> set[str]:
    """The top-level packages ``plb *argv`` loads, in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=300
    )
    return set(result.stderr.splitlines()[-1].split())


def test_help_loads_no_numerics() -> None:
    packages = loaded("--help")
    assert "service" in packages  # the probe ran plb
    assert not packages & NUMERICS, packages & NUMERICS


def test_leaderboard_loads_no_topic_model(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("model_a,model_b,winner\nx,y,model_a\ny,z,tie\nx,z,model_b\n")
    help_packages = loaded("leaderboard", "--help")
    assert "pandas" in help_packages  # the command's own module, imported to register it
    assert not help_packages & TOPIC_MODEL
    run_packages = loaded("leaderboard", str(log), "--min-votes", "0", "--ci", "none")
    assert {"numba", "pyarrow"} <= run_packages  # it did read and fit
    assert not run_packages & TOPIC_MODEL, run_packages & TOPIC_MODEL


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_command_s_help_loads_the_topic_model(command: str) -> None:
    """``plb next-battle --help`` loaded it through ``service.live``'s engine (9 s)."""
    packages = loaded(command, "--help")
    assert "service" in packages
    assert not packages & TOPIC_MODEL, packages & TOPIC_MODEL


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["--help"], None),
        (["-v", "-q", "leaderboard", "x.csv", "--where", "a=1"], "leaderboard"),
        (["next-battle", "--help"], "next-battle"),
        (["--", "users", "x.csv"], "users"),
        ([], None),
    ],
)
def test_named_command_is_the_first_word_that_is_no_option(
    argv: list[str], command: str | None
) -> None:
    assert named_command(argv) == command


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action


def test_the_light_listing_is_the_full_parser_s() -> None:
    """Every command's help line comes from :data:`COMMANDS`, loaded or not."""
    full = _subcommands(build_parser())
    light = _subcommands(build_parser([]))
    assert list(full.choices) == list(light.choices) == list(COMMANDS)
    lines = {a.dest: a.help for a in full._choices_actions}
    assert lines == {a.dest: a.help for a in light._choices_actions}
    assert lines == {name: entry.help for name, entry in COMMANDS.items()}
    # a command registered in full has its own options; one listed by name has none
    assert "--where" in full.choices["leaderboard"].format_help()
    assert "--where" not in light.choices["leaderboard"].format_help()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_s_help_is_the_full_parser_s(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``plb COMMAND --help`` loads that command alone, and says all the full parser does."""
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out == _subcommands(build_parser()).choices[command].format_help()
    usage = out.split("\n\n")[0]  # more than a command listed by name alone has
    assert usage.startswith(f"usage: plb {command} [-h] ") or usage.count("\n")


def test_a_misspelt_command_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["leaderbord", "x.csv"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'leaderbord'" in err and err.count("\n") == 1


#: Serves a fit (``argv[1]``) on an embedded store (``argv[2]``) as ``plb serve`` does, reads
#: the boards, and prints the top-level packages loaded on stderr's last line.
SERVE_PROBE = """
import sys
from pathlib import Path
from fastapi.testclient import TestClient
from service.api.app import create_app
from tests.service.conftest import service_settings

settings = service_settings(Path(sys.argv[1]), store_path=Path(sys.argv[2]))
with TestClient(create_app(settings)) as client:
    for path in ("/healthz", "/v1/leaderboard", "/v1/leaderboard?method=elo"):
        assert client.get(path).status_code == 200, path
print(" ".join(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def test_serving_a_fit_without_features_loads_no_embedding_network(
    shared_fit_no_features: Path, tmp_path: Path
) -> None:
    """The server imported BERTopic, and with it PyTorch and transformers (4 s of every
    ``plb serve`` start), through the profiler's style cache, for fits that have no
    topic model to use them."""
    result = subprocess.run(
        [sys.executable, "-c", SERVE_PROBE, str(shared_fit_no_features), str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert result.returncode == 0, result.stderr
    packages = set(result.stderr.splitlines()[-1].split())
    assert {"fastapi", "service", "pandas"} <= packages  # the probe served the fit
    assert not packages & (TOPIC_MODEL - {"sklearn"}), packages & TOPIC_MODEL
