"""What the anomalous-voter tests found (:func:`ranking.integrity.voters.detect_anomalous_voters`):
one :class:`FlaggedVoter` a flagged user, in one :class:`IntegrityReport`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ranking.types import BoolArray, FloatArray, IntArray

__all__ = ["FlaggedVoter", "IntegrityReport", "Test"]

#: The test that flagged a voter.
Test = Literal["random", "brigade", "cohort"]

_NAN = float("nan")


@dataclass(frozen=True)
class FlaggedVoter:
    """One flagged user and the evidence against them.

    Attributes
    ----------
    user : int
        Index of the user (into the ``users`` codes and ``user_names``).
    user_id : str
        The user's name.
    test : {"random", "brigade", "cohort"}
        Which test flagged them (the stronger one, when several did).
    statistic : float
        For ``random``: the user's self-consistency slope (``m`` is typical, 0 is coin
        flipping; see also ``strength``). For ``brigade``: the model's win share in the
        user's votes; for ``cohort``: in the votes of the user's cohort.
    expected : float
        For ``random``: the honest users' typical slope ``m``. For ``brigade`` (and
        ``cohort``): the win share the population predicts for that model in the user's
        (the cohort's) votes.
    p_value : float
        The test's p-value (before the multiple-testing control; for ``random``, the
        smaller of the slope's and the strength's, doubled).
    n_votes : int
        The user's votes (for ``brigade``: the user's votes with that model; for
        ``cohort``: the cohort's votes with that model).
    model : str or None
        The model voted up, for ``brigade``.
    strength, expected_strength : float
        For ``random``: the user's preference strength per vote and the honest users'
        typical one (NaN for ``brigade``).
    """

    user: int
    user_id: str
    test: Test
    statistic: float
    expected: float
    p_value: float
    n_votes: int
    model: str | None = None
    strength: float = _NAN
    expected_strength: float = _NAN


@dataclass(frozen=True)
class IntegrityReport:
    """What :func:`detect_anomalous_voters` found.

    Attributes
    ----------
    flagged : tuple of FlaggedVoter
        One per flagged user, by user index.
    flagged_users : ndarray of bool
        ``(n_users,)`` true for a flagged user.
    slope, slope_se : ndarray
        ``(n_users,)`` each user's self-consistency slope (outcomes on their own
        leave-one-vote-out log-odds) and its standard error (NaN without votes).
    honest_slope : tuple of float
        ``(m, tau)``: centre and spread of the honest users' slopes.
    level : float
        The Benjamini-Hochberg level of each test family.
    user_alpha : float
        Prior precision of the personal fits (natural-log units; NaN when not fitted).
    strength, strength_se : ndarray or None
        ``(n_users,)`` each user's preference strength per vote
        (:func:`ranking.consistency.preference_strength`) and its standard error.
    honest_strength : tuple of float
        Centre and spread of the honest users' preference strengths.
    random_p : ndarray or None
        ``(n_users,)`` each user's p-value of the random test (1 where not tested).
    """

    flagged: tuple[FlaggedVoter, ...]
    flagged_users: BoolArray
    slope: FloatArray
    slope_se: FloatArray
    honest_slope: tuple[float, float]
    level: float
    user_alpha: float = float("nan")
    strength: FloatArray | None = None
    strength_se: FloatArray | None = None
    honest_strength: tuple[float, float] = (float("nan"), float("nan"))
    random_p: FloatArray | None = None

    def vote_mask(self, users: IntArray) -> BoolArray:
        """``(n,)`` true for the votes to count in the aggregate (not a flagged user's)."""
        users = np.asarray(users, dtype=np.intp)
        keep = np.ones(users.shape, dtype=bool)
        known = users >= 0
        keep[known] = ~self.flagged_users[users[known]]
        return keep
