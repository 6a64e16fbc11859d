"""The published model: what every reader of one model version sees.

A snapshot is a JSON document, published to the store as one version, so every replica
serves the same aggregate leaderboards, agreement figures and per-user shrinkage until
the next version. It is made from a fit directory at start-up
(:func:`snapshot_from_fit`), and again from all battles by each background refit
(:func:`refit_snapshot`).

Layout::

    {"created": ISO time, "origin": "fit" | "refit", "n_battles": int,
     "models": [names, sorted],
     "leaderboards": {"bt": <leaderboard>, "elo": <leaderboard>},
     "public": {"bt": <leaderboard>} or null,   # fitted among models with min_votes votes
     "correlations": {"bt/cv": <correlations>, "bt/none": ..., "elo/cv": ..., ...},
     "user_alpha": float or null,   # prior precision of a user's BT deviation (nats^-2)
     "integrity": <evidence> or null,  # service.integrity.screen_battles: who is left out
     "topics": [...] or null, "predictor_dir": str or null, "fit_created": str}

The aggregate and public boards count only the votes the integrity screen keeps; the
per-user agreement figures use every user's own votes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.analysis import UserAnalysis
from ranking.frames import pairwise_from_battles, user_codes
from ranking.leaderboard import fit_leaderboard
from ranking.pairwise import ELO_PER_NAT
from service.integrity import IntegrityConfig, screen_battles
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.steps import fit_aggregates, fit_users

__all__ = [
    "HISTOGRAM_EDGES",
    "correlations_document",
    "refit_snapshot",
    "snapshot_from_fit",
]

#: Bins of the per-user Spearman histogram: twenty of width 0.1 over [-1, 1].
HISTOGRAM_EDGES = np.round(np.linspace(-1.0, 1.0, 21), 2)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def correlations_document(
    spearman: npt.ArrayLike,
    n_battles: npt.ArrayLike,
    summary: dict[str, Any],
    *,
    method: str,
    shrinkage: str,
    min_battles: int,
) -> dict[str, Any]:
    """The ``GET /v1/analysis/correlations`` document of one method and shrinkage.

    Parameters
    ----------
    spearman : array_like
        ``(U,)`` each user's Spearman against the aggregate (NaN where undefined).
    n_battles : array_like
        ``(U,)`` each user's votes; users below ``min_battles`` are left out.
    summary : dict
        The users summary of SPEC section 3.
    """
    rho = np.asarray(spearman, dtype=np.float64)
    keep = (np.asarray(n_battles) >= min_battles) & np.isfinite(rho)
    counts, _ = np.histogram(rho[keep], bins=HISTOGRAM_EDGES)
    return {
        "method": method,
        "shrinkage": shrinkage,
        "min_battles": min_battles,
        "summary": summary,
        "histogram": {"edges": HISTOGRAM_EDGES.tolist(), "counts": counts.tolist()},
    }


def _alpha_from_sd(prior_sd: float | None) -> float | None:
    """Prior precision in nats^-2 of a deviation whose sd is ``prior_sd`` Elo points."""
    if prior_sd is None or not np.isfinite(prior_sd) or prior_sd <= 0:
        return None
    return float((ELO_PER_NAT / prior_sd) ** 2)


def snapshot_from_fit(fit: FitArtifacts) -> dict[str, Any]:
    """The first snapshot of a service: the fit directory's figures, as fitted."""
    min_battles = int(fit.manifest.get("min_battles", 10))
    correlations = {}
    for (method, shrinkage), rows in fit.agreement.groupby(["method", "shrinkage"], sort=True):
        summary = fit.summaries.get(str(method), {}).get(str(shrinkage), {})
        correlations[f"{method}/{shrinkage}"] = correlations_document(
            rows["spearman"].to_numpy(dtype=np.float64),
            rows["n_battles"].to_numpy(),
            summary,
            method=str(method),
            shrinkage=str(shrinkage),
            min_battles=min_battles,
        )
    bt_cv = fit.agreement[(fit.agreement["method"] == "bt") & (fit.agreement["shrinkage"] == "cv")]
    prior_sd = float(bt_cv["prior_sd"].iloc[0]) if len(bt_cv) else None
    return {
        "created": _now(),
        "origin": "fit",
        "fit_created": fit.manifest.get("created"),
        "n_battles": int(fit.manifest.get("n_battles", fit.leaderboards["bt"]["n_battles"])),
        "models": sorted(m["model"] for m in fit.leaderboards["bt"]["models"]),
        "leaderboards": fit.leaderboards,
        "correlations": correlations,
        "user_alpha": _alpha_from_sd(prior_sd),
        "min_battles": min_battles,
        "topics": fit.topics,
        "predictor_dir": None if fit.predictor_dir is None else str(fit.predictor_dir),
    }


def _correlations(analysis: UserAnalysis) -> dict[str, Any]:
    return correlations_document(
        analysis.spearman,
        analysis.ratings.n_battles,
        analysis.summary.to_dict(),
        method=analysis.ratings.method,
        shrinkage=analysis.ratings.shrinkage,
        min_battles=analysis.min_battles,
    )


def refit_snapshot(
    battles: pd.DataFrame,
    previous: dict[str, Any],
    *,
    rng: np.random.Generator | int | None = 0,
    min_votes: int | None = None,
    integrity: IntegrityConfig | None = None,
) -> dict[str, Any]:
    """A new snapshot fitted on ``battles``: aggregates, per-user agreement and shrinkage.

    Parameters
    ----------
    battles : pandas.DataFrame
        Every battle (the fit's and those ingested since), in a canonical battle frame.
    previous : dict
        The snapshot being replaced: its topics and predictor are kept.
    rng : numpy.random.Generator or int, optional
        Randomness of the Elo bootstrap and of the shrinkage search.
    min_votes : int, optional
        Also fit the public Bradley-Terry board (``public``): only models with this many
        votes ranked, fitted on the votes between them, the others provisional.
    integrity : IntegrityConfig, optional
        Screen the votes first (:func:`service.integrity.screen_battles`): the aggregates
        count only those kept, and the evidence is published as ``integrity``.
    """
    data = pairwise_from_battles(battles)
    public_data, evidence = data, None
    if integrity is not None:
        counted, evidence = screen_battles(battles, integrity)
        public_data = pairwise_from_battles(battles[counted], models=data.models)
    aggregates = fit_aggregates(public_data, rng=rng)
    correlations: dict[str, Any] = {}
    user_alpha = previous.get("user_alpha")
    if "user_id" in battles.columns and battles["user_id"].notna().any():
        codes, names = user_codes(battles)
        min_battles = int(previous.get("min_battles", 10))
        for analysis in fit_users(data, codes, names, aggregates, min_battles=min_battles, rng=rng):
            r = analysis.ratings
            correlations[f"{r.method}/{r.shrinkage}"] = _correlations(analysis)
            if (r.method, r.shrinkage) == ("bt", "cv"):
                user_alpha = _alpha_from_sd(r.prior_sd) or user_alpha
    return {
        **previous,
        "created": _now(),
        "origin": "refit",
        "n_battles": len(battles),
        "models": list(data.models),
        "leaderboards": {m: board.to_dict() for m, board in aggregates.items()},
        "public": None
        if min_votes is None
        else {
            "bt": fit_leaderboard(public_data, method="bt", rng=rng, min_votes=min_votes).to_dict()
        },
        "correlations": correlations or previous.get("correlations", {}),
        "user_alpha": user_alpha,
        "integrity": evidence,
    }
