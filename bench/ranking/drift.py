"""Benchmark AE (issue 34, item 3): drift flags on simulated arenas.

A simulated arena of 10 models (Bradley-Terry strengths drawn from a standard normal, pairs
drawn uniformly, no ties) votes over 120 days from 2024-01-01; in a drifting arena one
model's strength moves by ``drift`` Elo points on day 60 (2024-03-01, a month boundary).
:func:`ranking.history.fit_history` cuts the votes into calendar months (``auto``: four
months) and tests every model between consecutive months, Holm-corrected at 5%. Over
``SEEDS`` arenas per cell this measures:

* **power**: the share of drifting arenas where the model that moved is flagged;
* **false alarms**: the share of arenas where a model that did not move is flagged, on
  stable arenas (no drift) and on drifting ones (the other nine models).

The real logs at hand carry no ``tstamp`` (the Arena 140k export and LLMFAO have none), so
this runs on the simulator only. Nothing here is timed. ``python -m bench.ranking.drift [--quick]``
prints the rows; ``python -m bench.run drift`` writes them into bench/RESULTS.md.
``--quick`` runs 3 arenas a cell.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from bench.common import Row, make_row, quick_option
from ranking.history import fit_history
from tests.reference.drift_arena import N_MODELS, drift_arena

__all__ = ["DRIFTS", "SEEDS", "run"]

logger = logging.getLogger("bench")

#: Arenas per cell of the full run.
SEEDS = 40
#: The drifts tried, in Elo points (0: a stable arena).
DRIFTS = (0.0, 50.0, 100.0, 200.0)
#: The arenas' sizes, in votes.
SIZES = (4_000, 16_000)


def _within(alarms: int, seeds: int) -> bool:
    """Whether ``alarms`` of ``seeds`` arenas is within sampling error (2 sd) of 5%."""
    return alarms / seeds <= 0.05 + 2.0 * math.sqrt(0.05 * 0.95 / seeds)


def _cell(drift: float, n_votes: int, seeds: int) -> tuple[int, int, float]:
    """Arenas where model 0 was flagged, where another was, and the mean |change| of
    model 0 across the change."""
    hits = others = 0
    changes = []
    for seed in range(seeds):
        data, t = drift_arena(1_000 * n_votes + seed, drift, n_votes)
        history = fit_history(data, t)
        hits += "m0" in history.drifting
        others += bool(set(history.drifting) - {"m0"})
        changes += [x.change for x in history.tests if x.model == "m0" and x.after == "2024-03"]
    return hits, others, float(np.mean(np.abs(changes))) if changes else math.nan


def run(quick: bool = False) -> list[Row]:
    """Run benchmark AE.

    Parameters
    ----------
    quick : bool
        3 arenas a cell instead of :data:`SEEDS`.

    Returns
    -------
    list of Row
        Per arena size: false alarms on stable arenas, then power and false alarms per
        drift.
    """
    seeds = 3 if quick else SEEDS
    rows: list[Row] = []
    for n_votes in SIZES:
        data = f"simulated, {N_MODELS} models, {n_votes:,} votes over 4 months, {seeds} arenas"
        per_month = n_votes * 2 // N_MODELS // 4
        for drift in DRIFTS:
            logger.info("drift: %s votes, %s points", n_votes, drift)
            hits, others, change = _cell(drift, n_votes, seeds)
            if drift == 0.0:
                rows.append(
                    make_row(
                        "false alarms, stable arena",
                        data,
                        ours=f"{others}/{seeds} arenas ({others / seeds:.0%})",
                        goal="5% (Holm, family-wise), within 2 sd",
                        met=_within(others, seeds) if not quick else None,
                        notes=f"about {per_month:,} votes a model a month",
                    )
                )
                continue
            rows.append(
                make_row(
                    f"power, drift of {drift:.0f} points",
                    data,
                    ours=f"{hits}/{seeds} arenas ({hits / seeds:.0%})",
                    notes=f"the model's change measured across March 1: {change:.0f} points "
                    "on average",
                )
            )
            rows.append(
                make_row(
                    f"false alarms on the 9 others, drift of {drift:.0f} points",
                    data,
                    ours=f"{others}/{seeds} arenas ({others / seeds:.0%})",
                    goal="5%, within 2 sd",
                    met=_within(others, seeds) if not quick else None,
                )
            )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the rows (``python -m bench.ranking.drift [--quick]``)."""
    quick = quick_option("bench.ranking.drift", __doc__, "3 arenas a cell", argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for row in run(quick):
        print(row)


if __name__ == "__main__":
    main()
