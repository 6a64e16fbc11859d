"""``plb report``: one self-contained HTML research report of a fit directory.

Pure functions from a :class:`~service.pipeline.artifacts.FitArtifacts` (what
:func:`service.pipeline.artifacts.load_fit` reads) to an HTML string; the figures are
inline SVG, so the file needs nothing else to display: no network, no scripts, no
external files.

Modules, each with one job:

* :mod:`service.report.document`: :func:`build_report`, the whole page;
* :mod:`service.report.sections`: one function a section, and :data:`SECTIONS`;
* :mod:`service.report.history`: the section on ratings over time, and drift;
* :mod:`service.report.markup`: the HTML pieces (tables, figures, numbers, the CSS);
* :mod:`service.report.plots`: the figures, rendered with matplotlib to SVG.
"""
