"""docs/python.md: its examples run, and the names it documents are the packages' own.

Every ```python block of the page is run in order in one namespace, from the repository
root, as a reader of the page would run them; a block that raises fails the test and
names its line in the page.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "python.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The page's ```python blocks, each with the line of the page its code starts on."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_python_blocks_are_found() -> None:
    text = "intro\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = x\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = x\n")]


@pytest.mark.slow
def test_examples_run_in_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 10, f"expected the page's examples, found {len(blocks)} blocks"
    monkeypatch.chdir(ROOT)  # the page runs from the repository root (data/sample/...)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # what it writes goes here
    namespace: dict[str, object] = {"__name__": "docs_python"}
    for line, code in blocks:
        try:
            exec(compile(code, f"{PAGE}:{line}", "exec"), namespace)
        except Exception as error:
            pytest.fail(f"the example at docs/python.md line {line} raised {error!r}")
    printed = capsys.readouterr().out
    assert "coding votes; best there:" in printed  # the blocks printed what they show
    assert "mean Spearman with the true rankings" in printed


@pytest.mark.parametrize("package", ["ranking", "features"])
def test_public_names_resolve(package: str) -> None:
    module = importlib.import_module(package)
    homes: dict[str, str] = module._HOMES
    assert sorted(module.__all__) == sorted(homes), "__all__ and _HOMES name the same names"
    for name in module.__all__:
        value = getattr(module, name)
        home = importlib.import_module(f"{package}.{homes[name]}")
        assert value is getattr(home, name), name
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018


def test_documented_names_are_exported() -> None:
    """Each ``ranking.NAME`` or ``features`` import the page uses is a re-exported name."""
    text = PAGE.read_text(encoding="utf-8")
    ranking = importlib.import_module("ranking")
    used = set(re.findall(r"\branking\.([A-Za-z_]\w*)\(", text))
    assert used and used <= set(ranking.__all__), sorted(used - set(ranking.__all__))
    features = importlib.import_module("features")
    for names in re.findall(r"^from features import (.+)$", text, re.MULTILINE):
        assert {n.strip() for n in names.split(",")} <= set(features.__all__)


def test_packages_import_light() -> None:
    """``import ranking, features, data`` loads none of pandas, SciPy, scikit-learn, torch."""
    heavy = ("pandas", "scipy", "sklearn", "torch")
    code = f"import sys, ranking, features, data; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
