"""What a fit of people's taste in answers gives: each user's style coefficients
(:class:`UserStyle`), the prior they are shrunk with (:class:`StylePrior`), the held-out
gain of per-user taste over the aggregate's (:class:`HeldOutGain`), and the settings they
share (:mod:`ranking.personal_style` describes the model)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ranking.pairwise import ELO_PER_NAT
from ranking.types import BoolArray, FloatArray

__all__ = [
    "HeldOutGain",
    "MIN_GAIN_SE",
    "STYLE_ALPHA_METHODS",
    "StyleAlphaMethod",
    "StylePrior",
    "UserStyle",
]

StyleAlphaMethod = Literal["cv", "evidence", "later"]
#: The ways :func:`user_style_alpha` learns the prior precision: those of the ratings
#: (:data:`ranking.shrinkage.ALPHA_METHODS`), and each user's earlier votes judged by
#: their later ones (as :func:`ranking.shrinkage.later_votes_alpha`).
STYLE_ALPHA_METHODS: tuple[StyleAlphaMethod, ...] = ("cv", "evidence", "later")
#: Standard errors by which the per-user coefficients must beat the aggregate's on
#: held-out votes to be used (the fallback rule of :mod:`ranking.personal_style`).
MIN_GAIN_SE = 2.0


@dataclass(frozen=True)
class HeldOutGain:
    """Held-out log-loss of per-user style against the aggregate's, on the same votes.

    Attributes
    ----------
    per_user, aggregate : float
        Mean log-loss per held-out vote (natural log, ties as 0.5).
    gain : float
        ``aggregate - per_user``: positive where the per-user coefficients predict better.
    se : float
        Standard error of ``gain``, clustered by user.
    n_votes : int
        Votes scored.
    """

    per_user: float
    aggregate: float
    gain: float
    se: float
    n_votes: int


@dataclass(frozen=True)
class UserStyle:
    """Every user's style coefficients, natural-log units per unit of each covariate.

    Attributes
    ----------
    features : tuple of str
        The covariates' names, the column order.
    coefficients : ndarray
        ``(U, p)`` each user's coefficients: the posterior mean, or the aggregate's where
        ``personal`` is False.
    lower, upper : ndarray
        ``(U, p)`` the posterior's ``confidence`` interval of each coefficient.
    aggregate : ndarray
        ``(p,)`` the aggregate's coefficients every user is shrunk toward.
    distinct : ndarray of bool
        ``(U, p)`` whether the interval of the user's departure from the aggregate
        excludes zero (never where ``personal`` is False).
    n_battles : ndarray of int
        ``(U,)`` votes of each user.
    alpha : float
        The prior precision used.
    personal : bool
        Whether per-user coefficients are used (the fallback rule).
    held_out : HeldOutGain or None
        What decided ``personal``; None where ``alpha`` was given rather than learnt.
    confidence : float
        Coverage of the intervals.
    """

    features: tuple[str, ...]
    coefficients: FloatArray
    lower: FloatArray
    upper: FloatArray
    aggregate: FloatArray
    distinct: BoolArray
    n_battles: npt.NDArray[np.int64]
    alpha: float
    personal: bool
    held_out: HeldOutGain | None
    confidence: float = 0.95

    @property
    def prior_sd(self) -> float:
        """Learnt standard deviation of a user's departure from the aggregate, natural-log
        units per unit of covariate."""
        return 1.0 / math.sqrt(self.alpha)

    def prior(
        self,
        covariance: npt.ArrayLike | None = None,
        scaling: str = "",
        models: tuple[str, ...] = (),
        typical: npt.ArrayLike | None = None,
    ) -> StylePrior:
        """The :class:`StylePrior` that fits one more user as these users were fitted;
        ``covariance`` is the aggregate's (zeros where not given), ``scaling`` how the
        covariates were made, ``typical`` the ``models``' typical answers where the taste
        was fitted on departures from them."""
        p = self.aggregate.size
        cov = np.zeros((p, p)) if covariance is None else np.asarray(covariance, dtype=np.float64)
        usual = None if typical is None else np.asarray(typical, dtype=np.float64).reshape(-1, p)
        return StylePrior(
            self.features,
            self.aggregate,
            cov.reshape(p, p),
            self.alpha,
            self.personal,
            scaling,
            models,
            usual,
        )

    def points(self, per_unit: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Coefficients and intervals in Elo points for a move of ``per_unit`` covariate
        units (``(p,)``, e.g. the covariate of an answer twice as long): ``(U, p)`` each."""
        unit = np.asarray(per_unit, dtype=np.float64) * ELO_PER_NAT
        return self.coefficients * unit, self.lower * unit, self.upper * unit


@dataclass(frozen=True)
class StylePrior:
    """What a fit of all users learnt, to fit one more user's taste later (a personal
    board refitted after a vote) the same way.

    Attributes
    ----------
    features : tuple of str
        The covariates' names.
    aggregate : ndarray
        ``(p,)`` the aggregate's coefficients, natural log per covariate unit.
    covariance : ndarray
        ``(p, p)`` their covariance.
    alpha : float
        The learnt prior precision of a user's departure.
    personal : bool
        Whether per-user taste is used at all (the fallback rule).
    scaling : str
        How the covariates were made from the answers (the aggregate fit's, e.g.
        ``"mixed"``: :func:`features.answer_style.style_differences`); empty where not
        recorded.
    models : tuple of str
        The models of ``typical``.
    typical : ndarray or None
        ``(len(models), p)`` each model's typical answer against the average answer, where
        the users' taste was fitted on their votes' departures from the two models'
        typical answers (None: on the covariates themselves).
    """

    features: tuple[str, ...]
    aggregate: FloatArray
    covariance: FloatArray
    alpha: float
    personal: bool
    scaling: str = ""
    models: tuple[str, ...] = ()
    typical: FloatArray | None = None

    def typical_of(self, models: Sequence[str]) -> FloatArray:
        """``(len(models), p)`` the typical answers of ``models``, by name (zeros for a
        model this prior lacks, or everywhere without ``typical``)."""
        out = np.zeros((len(models), self.aggregate.size))
        if self.typical is not None:
            row = {m: j for j, m in enumerate(self.models)}
            for i, model in enumerate(models):
                if model in row:
                    out[i] = self.typical[row[model]]
        return out

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, for a fit directory."""
        return {
            "features": list(self.features),
            "aggregate": self.aggregate.tolist(),
            "covariance": self.covariance.tolist(),
            "alpha": self.alpha,
            "personal": self.personal,
            "scaling": self.scaling,
            "models": list(self.models),
            "typical": None if self.typical is None else self.typical.tolist(),
        }

    @classmethod
    def from_dict(cls, document: dict[str, object]) -> StylePrior:
        """The prior :meth:`to_dict` wrote."""
        features = tuple(str(f) for f in document["features"])  # type: ignore[attr-defined]
        p = len(features)
        return cls(
            features,
            np.asarray(document["aggregate"], dtype=np.float64).reshape(p),
            np.asarray(document["covariance"], dtype=np.float64).reshape(p, p),
            float(document["alpha"]),  # type: ignore[arg-type]
            bool(document["personal"]),
            str(document.get("scaling", "")),
            tuple(str(m) for m in document.get("models", ())),  # type: ignore[attr-defined]
            None
            if document.get("typical") is None
            else np.asarray(document["typical"], dtype=np.float64).reshape(-1, p),
        )
