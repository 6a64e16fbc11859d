"""What a fit is told: :class:`FitConfig`, and the grid of methods and shrinkages.

The one place that says which ratings a fit makes (:data:`GRID`: Bradley-Terry and Elo,
each with and without learnt shrinkage) and with which options (:class:`FitConfig`, the
options of ``plb fit`` with its defaults). ``plb fit``, the Dask fit, the service's
refit and the demo all read them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from ranking.types import Method
from ranking.users import Shrinkage

__all__ = ["CONFIDENCE", "ELO_ROUNDS", "GRID", "METHODS", "SHRINKAGES", "FitConfig"]

#: The rating methods of every fit, in the order they are fitted and written.
METHODS: tuple[Method, ...] = ("bt", "elo")
#: Every user's ratings with learnt shrinkage towards the aggregate, and without.
SHRINKAGES: tuple[Shrinkage, ...] = ("cv", "none")
#: ``(method, shrinkage)`` of each per-user fit: ``bt/cv, bt/none, elo/cv, elo/none``.
GRID: tuple[tuple[Method, Shrinkage], ...] = tuple((m, s) for m in METHODS for s in SHRINKAGES)

#: Bootstrap rounds of the aggregate Elo board, and the confidence of the aggregate
#: boards' intervals: what every fit asks of :func:`ranking.leaderboard.fit_leaderboard`
#: (:func:`~service.pipeline.steps.fit_aggregates`), on one machine or on a cluster.
ELO_ROUNDS: int = 100
CONFIDENCE: float = 0.95


@dataclass(frozen=True)
class FitConfig:
    """The options of a fit: those of ``plb fit``, with the same defaults.

    Attributes
    ----------
    min_battles : int
        Summarise agreement over users with at least this many votes.
    fraction : float
        Share of each user's latest votes held out for the evaluation, in (0, 1).
    truth : str, optional
        The ``truth.json`` of ``plb simulate``: the evaluation then also scores each
        user's ranking against their true one.
    features : bool
        Fit the topic model, the users' query profiles and the rating predictor when the
        log has prompts.
    embedding : str, optional
        The topic model's embedding backend; its default when None
        (:func:`features.embeddings.default_embedding`).
    n_topics : int
        Topics of the topic model.
    seed : int
        Seed of every random step (bootstrap, shrinkage search, split, topic model).
    skip_invalid : bool
        Skip malformed rows of the logs instead of rejecting them (the Dask path reads
        the logs on its workers).
    repeat_cap : int, "auto" or None
        The public boards keep at most this many votes of one prompt, a seeded sample of
        those repeated more (:mod:`ranking.repeats`); ``"auto"`` (the default) for
        :func:`ranking.repeats.auto_cap` of the log, None for no cap. Only logs with
        prompts are capped; each person's own ratings keep all their votes.
    """

    min_battles: int = 10
    fraction: float = 0.2
    truth: str | None = None
    features: bool = True
    embedding: str | None = None
    n_topics: int = 10
    seed: int = 0
    skip_invalid: bool = False
    repeat_cap: int | Literal["auto"] | None = "auto"

    def __post_init__(self) -> None:
        for name in ("min_battles", "n_topics"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"Argument {name!r} must be an integer of at least 1, not {value!r}."
                )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"Argument 'seed' must be a non-negative integer, not {self.seed!r}.")
        if not (math.isfinite(self.fraction) and 0.0 < self.fraction < 1.0):
            raise ValueError(f"Argument 'fraction' must be in (0, 1), not {self.fraction!r}.")
        cap = self.repeat_cap
        if cap not in ("auto", None) and (
            isinstance(cap, bool) or not isinstance(cap, int) or cap < 1
        ):
            raise ValueError(
                f"Argument 'repeat_cap' must be an integer of at least 1, 'auto' or None, "
                f"not {cap!r}."
            )

    @classmethod
    def recorded(
        cls, manifest: dict[str, Any], topic_params: dict[str, Any] | None = None
    ) -> FitConfig:
        """The configuration a fit directory records: its manifest, and its topic model's
        parameters (``topics/topics.json``) for the topic settings.

        Options a fit directory does not record keep their defaults.
        """
        params = topic_params or {}
        return cls(
            min_battles=int(manifest.get("min_battles", cls.min_battles)),
            truth=manifest.get("truth"),
            features=bool(manifest.get("features", cls.features)),
            embedding=params.get("embedding", cls.embedding),
            n_topics=int(params.get("n_topics", cls.n_topics)),
            seed=int(manifest.get("seed", cls.seed)),
            repeat_cap=(manifest.get("repeats") or {}).get("option", cls.repeat_cap),
        )
