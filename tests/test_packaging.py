"""The wheel: built from the checkout, installed into a fresh environment, and complete.

The fresh environment (made without pip or setuptools of its own, so that none shadows
the project environment's) gets the wheel alone (``--no-deps``); the packages it depends on
are borrowed from the project environment through a ``.pth`` file, so the test needs no
network and installs no second PyTorch. ``pip check`` then verifies that the wheel's
declared requirements are met there, and every check runs outside the checkout, so
nothing can be imported from the source tree by accident.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ranking", "features", "service", "data")

pytestmark = pytest.mark.slow


def run(command: list[str], cwd: Path, timeout: float = 300) -> str:
    """Run ``command`` outside the checkout, with no ``PYTHONPATH``; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def pip(env: Path) -> list[str]:
    """The project environment's pip, acting on ``env`` (which has none of its own)."""
    python = str(env / "bin" / "python")
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", python]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the checkout, built with the project environment's setuptools.

    It is built from a copy of what the build reads (so the checkout gets no ``build/``),
    which also proves that it needs nothing else of the tree.
    """
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    run([*command, "--quiet", "--wheel-dir", str(out), str(source)], cwd=out)
    (built,) = out.glob("personal_leaderboard-*.whl")
    return built


@pytest.fixture(scope="module")
def fresh_env(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment holding the wheel; its dependencies borrowed (see above)."""
    env = tmp_path_factory.mktemp("env") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(env)], cwd=env.parent)
    purelib = sysconfig.get_path("purelib", vars={"base": str(env), "platbase": str(env)})
    borrowed = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "borrowed-dependencies.pth").write_text("\n".join(borrowed) + "\n")
    run([*pip(env), "install", "--quiet", "--no-deps", "--no-index", str(wheel)], cwd=env.parent)
    return env


def test_the_wheel_holds_every_package_the_web_assets_and_the_sample(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {".py", ".html", ".js", ".css", ".svg"}
    sources = [
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.suffix in shipped and "__pycache__" not in path.parts
    ]
    assert sources and not sorted(set(sources) - names)
    for sample in ("battles.jsonl.gz", "queries.txt", "truth.json"):
        assert f"data/sample/{sample}" in names
    assert not [name for name in names if name.startswith("tests/")]


def test_plb_help_runs_from_the_fresh_environment(fresh_env: Path) -> None:
    out = run([str(fresh_env / "bin" / "plb"), "--help"], cwd=fresh_env.parent)
    for command in ("leaderboard", "users", "fit", "recommend", "serve", "simulate"):
        assert command in out


#: Asks ``plb COMMAND --help`` of each command in ``sys.argv[1:]`` in turn, in one process,
#: each help followed by a line of its exit code.
EVERY_HELP = """
import sys
from service.cli import main
for command in sys.argv[1:]:
    try:
        main([command, "--help"])
    except SystemExit as exit_:
        print(f"exit {exit_.code}")
"""


def test_each_command_loads_from_the_fresh_environment(fresh_env: Path) -> None:
    """Commands are imported by name when run (``service.cli.commands``): each must be
    found in the installed package (every command's help, in one process of the fresh
    environment; ``plb --help`` ran its console script), and ``plb leaderboard`` must
    run from it, its compiled kernels cached wherever numba can write."""
    from service.cli.commands import COMMANDS

    python = str(fresh_env / "bin" / "python")
    out = run([python, "-c", EVERY_HELP, *COMMANDS], cwd=fresh_env.parent)
    helps = out.split("usage: plb ")[1:]
    assert len(helps) == len(COMMANDS)
    for command, help_text in zip(COMMANDS, helps, strict=True):
        assert help_text.startswith(f"{command} ") and help_text.endswith("exit 0\n"), command
    locate = "from importlib.resources import files; print(files('data') / 'sample')"
    sample = Path(run([python, "-c", locate], cwd=fresh_env.parent).strip())
    plb = str(fresh_env / "bin" / "plb")
    out = run([plb, "leaderboard", str(sample / "battles.jsonl.gz")], cwd=fresh_env.parent)
    assert out.startswith("BT leaderboard: ")


def test_the_wheels_requirements_are_met(fresh_env: Path) -> None:
    run([*pip(fresh_env), "check"], cwd=fresh_env.parent)


def test_every_module_imports_from_the_wheel(fresh_env: Path) -> None:
    script = textwrap.dedent(
        f"""
        import importlib, pkgutil, sys
        from importlib.resources import files
        prefix = sys.prefix
        for name in {PACKAGES!r}:
            package = importlib.import_module(name)
            assert package.__file__.startswith(prefix), package.__file__
            for module in pkgutil.walk_packages(package.__path__, name + "."):
                if module.name.endswith(".__main__"):  # runs the command line
                    continue
                imported = importlib.import_module(module.name)
                assert imported.__file__.startswith(prefix), imported.__file__
                print(module.name)
        from service.web import WEB_DIR
        for asset in ("index.html", "app.js", "style.css", "widget.html", "widget.js"):
            assert (WEB_DIR / asset).is_file(), asset
        assert (files("data") / "sample" / "battles.jsonl.gz").is_file()
        """
    )
    out = run([str(fresh_env / "bin" / "python"), "-c", script], cwd=fresh_env.parent)
    imported = set(out.split())
    assert {"service.api.app", "service.cli.serve", "ranking.bt", "features.topics"} <= imported
