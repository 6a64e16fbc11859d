"""Benjamini-Hochberg: which of many tests to reject at a false-discovery rate."""

from __future__ import annotations

import numpy as np

from ranking.types import BoolArray, FloatArray

__all__ = ["benjamini_hochberg"]


def benjamini_hochberg(p_values: FloatArray, level: float) -> BoolArray:
    """Which hypotheses Benjamini-Hochberg rejects at false-discovery rate ``level``."""
    p = np.asarray(p_values, dtype=np.float64)
    reject = np.zeros(p.shape, dtype=bool)
    if p.size == 0:
        return reject
    order = np.argsort(p, kind="stable")
    passed = np.flatnonzero(p[order] <= level * np.arange(1, p.size + 1) / p.size)
    if passed.size:
        reject[order[: passed[-1] + 1]] = True
    return reject
