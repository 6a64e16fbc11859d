"""The fit pipeline: from battles to a fit directory, and from a fit to a snapshot.

One place for every step of a fit, which ``plb fit``, the Dask fit
(:mod:`service.scale`), the service's background refit (:mod:`service.live.refits`) and the
demo (``plb serve --demo``) all call:

* :mod:`~service.pipeline.config`: :class:`FitConfig` (the options of ``plb fit``) and
  the grid of methods and shrinkages;
* :mod:`~service.pipeline.steps`: the steps (aggregate boards, per-user fits, held-out
  evaluation, the TopicModel → UserProfiler → RatingPredictor chain);
* :mod:`~service.pipeline.fit`: :func:`fit_all` and its :class:`FitResult`, written as
  a fit directory;
* :mod:`~service.pipeline.executor`: where the steps' parallel parts run: here
  (:class:`~service.pipeline.executor.InProcess`), or on a Dask cluster
  (:mod:`service.scale`);
* :mod:`~service.pipeline.artifacts`: the fit directory's layout, writing and reading;
* :mod:`~service.pipeline.text_store`: the prompts' rows (embeddings, style) kept by the
  hash of their text in the fit directory's ``texts/``;
* :mod:`~service.pipeline.reuse`: what a refit (``plb fit --reuse``, the service's)
  takes from an earlier fit: those rows, its topic model, its predictor;
* :mod:`~service.pipeline.snapshot`: the published model of the live service.

Imports point down only: this package uses ``ranking``, ``features`` and ``data``, and
is used by the service, the CLI and the report, never the other way round.
"""

from __future__ import annotations

from service.pipeline.artifacts import FitArtifacts, load_fit, write_fit
from service.pipeline.config import GRID, METHODS, SHRINKAGES, FitConfig
from service.pipeline.fit import FitResult, fit_all, manifest_document, write_result
from service.pipeline.steps import build_predictor, evaluation_document, truth_matrix

__all__ = [
    "GRID",
    "METHODS",
    "SHRINKAGES",
    "FitArtifacts",
    "FitConfig",
    "FitResult",
    "build_predictor",
    "evaluation_document",
    "fit_all",
    "load_fit",
    "manifest_document",
    "truth_matrix",
    "write_fit",
    "write_result",
]
