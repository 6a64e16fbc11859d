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
     "integrity": <evidence> or null,  # service.pipeline.integrity.screen_battles: who is left out
     "topics": [...] or null, "predictor_dir": str or null, "fit_created": str}

The aggregate and public boards count only the votes the integrity screen keeps; the
per-user agreement figures use every user's own votes. The live service also records
``"store_battles"`` (the store's battles counted by a refit) and the fit's
``"min_battles"``. :class:`Snapshot` is the document typed, read from and written to the
store with :meth:`Snapshot.from_dict` and :meth:`Snapshot.to_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ranking.analysis import UserAnalysis
from ranking.io.frames import pairwise_from_battles, user_codes
from ranking.io.repeat_codes import RepeatCap, cap_battles
from ranking.leaderboard import fit_leaderboard, read_leaderboard
from ranking.pairwise import ELO_PER_NAT
from ranking.types import Leaderboard
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.integrity import IntegrityConfig, screen_battles
from service.pipeline.steps import fit_aggregates, fit_users

__all__ = [
    "HISTOGRAM_EDGES",
    "Snapshot",
    "correlations_document",
    "refit_snapshot",
    "snapshot_from_fit",
]

#: Bins of the per-user Spearman histogram: twenty of width 0.1 over [-1, 1].
HISTOGRAM_EDGES = np.round(np.linspace(-1.0, 1.0, 21), 2)


#: The document's keys, in the order the service writes them.
_KEYS = (
    "created",
    "origin",
    "fit_created",
    "n_battles",
    "models",
    "leaderboards",
    "correlations",
    "user_alpha",
    "min_battles",
    "topics",
    "predictor_dir",
    "public",
    "integrity",
    "store_battles",
)
#: Keys left out of the document while their value is None (older documents lack them).
_OPTIONAL = frozenset({"min_battles", "store_battles"})


@dataclass(frozen=True)
class Snapshot:
    """One published model version: the document of this module's layout, typed.

    Attributes
    ----------
    models : tuple of str
        The models of the version, sorted.
    leaderboards : dict
        ``"bt"`` and ``"elo"`` to the aggregate leaderboard document.
    created : str or None
        When the version was made (ISO time).
    origin : {"fit", "refit"} or None
        Made from the fit directory, or by a refit on all battles.
    fit_created : str or None
        The ``created`` of the fit directory's manifest.
    n_battles : int
        The battles the version was fitted on.
    correlations : dict
        ``"method/shrinkage"`` to the per-user agreement document.
    user_alpha : float or None
        Prior precision of a user's Bradley-Terry deviation (nats^-2).
    min_battles : int or None
        The fewest votes of a user counted in the agreement figures.
    topics : list or None
        The topics of the users' queries.
    predictor_dir : str or None
        The folder of the version's rating predictor.
    public : dict or None
        ``"bt"`` to the public board fitted among models with ``min_votes`` votes.
    integrity : dict or None
        The integrity evidence (:func:`service.pipeline.integrity.screen_battles`).
    store_battles : int or None
        How many of the store's battles the version counts (None: none, a fit's).
    extra : dict
        Keys of the document outside this layout, kept as they are.
    absent : frozenset of str
        Keys of this layout the document read lacked: written back only once given a
        value other than their default, so a document read and written is unchanged.
    """

    models: tuple[str, ...]
    leaderboards: Mapping[str, dict[str, Any]]
    created: str | None = None
    origin: str | None = None
    fit_created: str | None = None
    n_battles: int = 0
    correlations: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    user_alpha: float | None = None
    min_battles: int | None = None
    topics: list[dict[str, Any]] | None = None
    predictor_dir: str | None = None
    public: Mapping[str, dict[str, Any]] | None = None
    integrity: dict[str, Any] | None = None
    store_battles: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def board(self, method: str) -> Leaderboard:
        """The aggregate leaderboard of ``method``, typed."""
        return read_leaderboard(self.leaderboards[method])

    @property
    def counted_battles(self) -> int:
        """How many of the store's battles the version counts (0 for a fit's)."""
        return int(self.store_battles or 0)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document published to the store (:meth:`from_dict` reads it back)."""
        document: dict[str, Any] = {}
        for key in _KEYS:
            value = getattr(self, key)
            if value is None and key in _OPTIONAL:
                continue
            if key in self.absent and value == _DEFAULTS[key]:
                continue
            document[key] = list(value) if key == "models" else value
        return {**document, **self.extra}

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Snapshot:
        """The snapshot of a published ``document``; a key it lacks takes its default.

        Raises
        ------
        ValueError
            When the document has no ``models`` or ``leaderboards``.
        """
        for key in ("models", "leaderboards"):
            if key not in document:
                raise ValueError(f"the snapshot document has no {key!r}")
        known = {k: document[k] for k in _KEYS if k in document}
        known["models"] = tuple(known["models"])
        extra = {k: v for k, v in document.items() if k not in known}
        absent = frozenset(k for k in _KEYS if k not in document)
        return cls(**known, extra=extra, absent=absent)


#: Each key's value in a snapshot given none (``models`` and ``leaderboards`` are required).
_DEFAULTS: dict[str, Any] = {k: getattr(Snapshot((), {}), k) for k in _KEYS}


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
        The users summary of docs/SPEC.md section 3.
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
    repeat_cap: RepeatCap = None,
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
        Screen the votes first (:func:`service.pipeline.integrity.screen_battles`): the aggregates
        count only those kept, and the evidence is published as ``integrity``.
    repeat_cap : int, "auto" or None
        The aggregates keep at most this many votes of one prompt (the fit's
        ``FitConfig.repeat_cap``, :func:`ranking.io.repeat_codes.cap_battles`, seeded by
        ``rng`` where it is an int); None counts every vote.
    """
    data = pairwise_from_battles(battles)
    public_data, evidence = data, None
    if integrity is not None:
        counted, evidence = screen_battles(battles, integrity)
        public_data = pairwise_from_battles(battles[counted], models=data.models)
    if repeat_cap is not None:
        public = battles if integrity is None else battles[counted]
        seed = rng if isinstance(rng, int) else 0
        kept, effect = cap_battles(public, repeat_cap, rng=seed)
        if effect is not None and effect.n_repeated:
            public_data = pairwise_from_battles(kept, models=data.models)
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
