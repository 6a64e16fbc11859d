"""The whole page of ``plb report``: :func:`build_report` and its :class:`Report`.

The sections (:mod:`service.report.sections`) in report order under a title, a lead
paragraph and a table of contents, in one HTML document with its style sheet inlined.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from service.pipeline.artifacts import FitArtifacts
from service.report.history import history_section
from service.report.markup import CSS, date
from service.report.noise import noise_section
from service.report.sections import (
    SECTIONS,
    agreement_sections,
    evaluation_section,
    header,
    leaderboard_section,
    topics_section,
)

__all__ = ["Report", "build_report"]


@dataclass(frozen=True)
class Report:
    """A rendered report.

    Attributes
    ----------
    html : str
        The complete, self-contained HTML document.
    sections : tuple of str
        Ids of the sections with content (from :data:`~service.report.sections.SECTIONS`);
        a section replaced by a note, such as the evaluation of a fit without one, is not
        listed.
    """

    html: str
    sections: tuple[str, ...]


def build_report(fit: FitArtifacts, *, title: str = "Personal leaderboards: report") -> Report:
    """Render the research report of a fit.

    Parameters
    ----------
    fit : FitArtifacts
        What :func:`service.pipeline.artifacts.load_fit` read.
    title : str
        Title of the page.

    Returns
    -------
    Report
        The HTML document and the ids of its sections.
    """
    min_battles = int(fit.manifest.get("min_battles", 1))
    lead, summary = header(fit)
    parts = [summary]
    sections = ["summary"]
    for section_id, html in agreement_sections(fit, min_battles):
        parts.append(html)
        if section_id is not None:
            sections.append(section_id)
        if section_id == "spearman":
            noise = noise_section(fit, min_battles)
            if noise is not None:
                parts.append(noise)
                sections.append("noise")
    evaluation, has_evaluation = evaluation_section(fit.evaluation)
    parts.append(evaluation)
    if has_evaluation:
        sections.append("evaluation")
    if fit.topics:
        parts.append(topics_section(fit.topics))
        sections.append("topics")
    board = fit.leaderboards.get("bt") or next(iter(fit.leaderboards.values()), None)
    if board is not None:
        parts.append(leaderboard_section(board))
        sections.append("leaderboard")
    history = history_section(fit.read_history())
    if history is not None:
        parts.append(history)
        sections.append("history")
    toc = "".join(f'<li><a href="#{s}">{t}</a></li>' for s, t in SECTIONS.items() if s in sections)
    created = date(fit.manifest.get("created"))
    html = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>{lead}"
        f"<nav><ol>{toc}</ol></nav>" + "".join(parts) + "<footer>personal-leaderboard "
        f"<code>plb report</code> of the fit created {created}.</footer></body></html>\n"
    )
    return Report(html, tuple(sections))
