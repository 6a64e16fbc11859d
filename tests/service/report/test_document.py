"""``plb report``: one self-contained HTML file with every section, from a fit directory."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from data.simulate import simulate
from data.simulation_files import write_simulation
from service.cli import main
from service.pipeline.artifacts import load_fit
from service.report.document import build_report
from service.report.plots import pick_users
from service.report.sections import SECTIONS
from tests.service.conftest import assert_error, open_client, service_settings

#: Namespace URIs of inline SVG: the only addresses a self-contained report may hold.
SVG_NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


@pytest.fixture(scope="module")
def fit_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small fit directory, with the held-out evaluation and the truth."""
    root = tmp_path_factory.mktemp("report")
    paths = write_simulation(simulate(60, 30, 8, rng=0), root / "sim")
    out = root / "fit"
    code = main(["fit", str(paths["battles"]), "--out", str(out), "--truth", str(paths["truth"])])
    assert code == 0
    return out


@pytest.fixture(scope="module")
def report(fit_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """``plb report --format json`` run once: the output folder and the JSON document."""
    out_dir = tmp_path_factory.mktemp("html")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["report", str(fit_dir), "--out", str(out_dir / "r.html"), "--format", "json"])
    assert code == 0
    return out_dir, json.loads(stdout.getvalue())


def _html(report: tuple[Path, dict]) -> str:
    return (report[0] / "r.html").read_text(encoding="utf-8")


def test_writes_one_html_file_and_says_so(report: tuple[Path, dict]) -> None:
    out_dir, document = report
    assert [p.name for p in out_dir.iterdir()] == ["r.html"]  # no temporary file left
    assert document["out"] == str(out_dir / "r.html")
    assert document["sections"] == list(SECTIONS)
    html = _html(report)
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")


def test_is_self_contained(report: tuple[Path, dict]) -> None:
    html = _html(report)
    assert not re.search(r"<script|<link|<img|<iframe|@import", html, re.IGNORECASE)
    assert not re.search(r"url\((?!#)", html)  # only references inside the document
    for attribute in re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", html, re.IGNORECASE):
        assert attribute.startswith("#"), attribute
    assert set(re.findall(r"https?://[^\s\"'<>)]+", html)) <= SVG_NAMESPACES
    assert html.count("<svg") == 5  # the rating history's too (a dated simulated log)


def test_has_every_section(report: tuple[Path, dict]) -> None:
    html = _html(report)
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
        assert f'href="#{section}"' in html


def test_summary_table_matches_summary_json(report: tuple[Path, dict], fit_dir: Path) -> None:
    summaries = json.loads((fit_dir / "summary.json").read_text(encoding="utf-8"))
    table = _rows(_html(report), "agreement-summary")
    assert len(table) == 4
    for row in table:
        method = "bt" if row[0] == "Bradley-Terry" else "elo"
        expected = summaries[method][row[1].split()[0]]
        assert int(row[2]) == expected["users"]
        # the table rounds to 3 decimals, summary.json to 4: they differ by up to 5.5e-4
        assert float(row[3]) == pytest.approx(expected["mean_spearman"], abs=6e-4)
        assert float(row[6]) == pytest.approx(expected["mean_kendall"], abs=6e-4)


def test_held_out_table_matches_evaluation_json(report: tuple[Path, dict], fit_dir: Path) -> None:
    evaluation = json.loads((fit_dir / "evaluation.json").read_text(encoding="utf-8"))
    rows = _rows(_html(report), "evaluation-table")
    assert len(rows) == len(evaluation["results"])
    names = {"Bradley-Terry": "bt", "Elo": "elo"}
    fields = ("log_loss", "accuracy", "brier", "spearman_truth")
    for row, expected in zip(rows, evaluation["results"], strict=True):
        assert (names[row[0]], row[1]) == (expected["method"], expected["predictor"])
        for cell, field in zip(row[2:], fields, strict=True):
            assert float(cell) == pytest.approx(expected[field], abs=5e-5)


def test_best_held_out_value_per_method_is_bold(report: tuple[Path, dict]) -> None:
    rows = _rows(_html(report), "evaluation-table", markup=True)
    for column in range(2, 6):
        for method in ("Bradley-Terry", "Elo"):
            cells = [r[column] for r in rows if r[0] == method]
            best = [c for c in cells if c.startswith("<b>")]
            values = [float(re.sub(r"<[^>]+>", "", c)) for c in cells]
            lower_is_better = column in (2, 4)
            target = min(values) if lower_is_better else max(values)
            assert best and all(float(c[3:-4]) == target for c in best)


def test_leaderboard_table_matches_leaderboard_json(
    report: tuple[Path, dict], fit_dir: Path
) -> None:
    board = json.loads((fit_dir / "leaderboard.json").read_text(encoding="utf-8"))["bt"]
    rows = _rows(_html(report), "leaderboard-table")
    assert [r[1] for r in rows] == [m["model"] for m in board["models"]]
    assert [int(r[0]) for r in rows] == [m["rank"] for m in board["models"]]


def test_without_evaluation_the_section_is_a_note(fit_dir: Path) -> None:
    fit = dataclasses.replace(load_fit(fit_dir), evaluation=None)
    result = build_report(fit)
    assert "evaluation" not in result.sections
    assert 'id="evaluation-table"' not in result.html
    assert "no held-out evaluation" in result.html


def test_picks_distinct_users_with_reasons() -> None:
    agreement = pd.DataFrame(
        {
            "method": "bt",
            "shrinkage": "cv",
            "user_id": [f"u{i}" for i in range(8)],
            "n_battles": [100, 80, 60, 50, 40, 30, 20, 5],
            "spearman": [0.5, -0.2, 0.9, 0.1, 0.3, 0.4, -0.9, 1.0],
        }
    )
    picked = pick_users(agreement, "bt", "cv", min_battles=10)
    assert [u for u, _ in picked] == ["u0", "u3", "u1", "u2"]
    assert len({reason for _, reason in picked}) == 4


def test_missing_dir_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["report", str(missing), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err and "plb fit" in err
    assert not (tmp_path / "r.html").exists()


def test_incomplete_dir_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r.html")]) == 2
    assert "manifest.json" in capsys.readouterr().err


def test_cli_import_does_not_import_matplotlib() -> None:
    code = "import sys, service.cli; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def _rows(html: str, table_id: str, markup: bool = False) -> list[list[str]]:
    """The body cells of a table, as text (or with their inline markup)."""
    body = html.split(f'id="{table_id}"')[1].split("</table>")[0].split("<tbody>")[1]
    rows = re.findall(r"<tr>(.*?)</tr>", body)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return cells if markup else [[re.sub(r"<[^>]+>", "", c) for c in row] for row in cells]


def test_topics_section_lists_every_topic(report: tuple[Path, dict], fit_dir: Path) -> None:
    html = (report[0] / "r.html").read_text(encoding="utf-8")
    topics = load_fit(fit_dir).topics
    assert topics is not None and 'id="topics"' in html
    table = html.split('id="topics-table"')[1].split("</table>")[0]
    assert table.count("<tr>") == len(topics) + 1  # header row and one per topic
    assert ", ".join(topics[0]["words"][:3]) in table


def test_noise_table_matches_summary_json(report: tuple[Path, dict], fit_dir: Path) -> None:
    summaries = json.loads((fit_dir / "summary.json").read_text(encoding="utf-8"))
    rows = _rows(_html(report), "noise-table")
    assert len(rows) == 4
    for row in rows:
        method = "bt" if row[0] == "Bradley-Terry" else "elo"
        noise = summaries[method][row[1].split()[0]]["noise"]
        # "0.712 (0.650 – 0.770)": the null's mean and its interval
        mean, lower, upper = (float(v) for v in re.findall(r"-?\d+\.\d+", row[6]))
        assert mean == pytest.approx(noise["mean_spearman"], abs=6e-4)
        assert [lower, upper] == pytest.approx(noise["mean_spearman_interval"], abs=6e-4)
    assert "of the gap from perfect agreement" in _html(report)


def test_the_service_serves_the_report_its_operator_placed(
    fit_dir: Path, report: tuple[Path, dict], tmp_path: Path
) -> None:
    served = tmp_path / "fit"
    shutil.copytree(fit_dir, served)
    settings = service_settings(served, store_path=tmp_path / "s.sqlite")
    with open_client(settings) as client:
        missing = client.get("/report")  # none written: a 404 saying how to write one
        detail = assert_error(missing, 404, "no report", "plb report", "report.html")
        assert str(tmp_path) not in detail  # the server's folders stay private
        (served / "report.html").write_text(_html(report), encoding="utf-8")
        page = client.get("/report")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.text == _html(report)
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert "/report" not in client.get("/openapi.json").json()["paths"]  # a page
        assert 'href="/report"' in client.get("/").text  # linked from the web page
