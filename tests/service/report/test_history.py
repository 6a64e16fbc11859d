"""The report's section on ratings over time: the plot, the drifting models named."""

from __future__ import annotations

import re

from ranking.history import fit_history
from service.report.history import history_section
from tests.reference.drift_arena import drift_arena


def test_a_drifting_model_is_named_drawn_and_listed() -> None:
    data, t = drift_arena(3, 300.0, 6000)
    history = fit_history(data, t).to_dict()
    assert history["drifting"] == ["m0"]
    html = history_section(history)
    assert html is not None and html.startswith('<section id="history">')
    assert "<strong>1 model drifted</strong>: m0" in html
    assert html.count("<svg") == 1
    rows = re.findall(r"<tr><td class=\"text\">(.*?)</td>", html)
    assert rows == ["m0"]
    assert "2024-02 → 2024-03" in html


def test_a_stable_history_draws_the_leaders() -> None:
    data, t = drift_arena(4, 0.0, 6000)
    history = fit_history(data, t).to_dict()
    assert history["drifting"] == []
    html = history_section(history)
    assert html is not None
    assert "No model drifted" in html and "drift-table" not in html


def test_no_section_without_two_periods() -> None:
    data, t = drift_arena(5, 0.0, 500)
    assert history_section(None) is None
    assert history_section(fit_history(data, t, unit=1).to_dict()) is None
