"""What writers do: ingest votes, keep the model catalogue, refit personal boards.

A vote (:meth:`Writes.ingest`) is stored together with its online Elo update in one
atomic store step, and the voter's personal leaderboard is refitted before the call
returns, so the voter's next read shows it. A vote naming a model outside the catalogue
(the served fit's models and those registered, :meth:`Writes.register_models`) is
rejected, unless the settings opt in to registering it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ranking.io.text_checks import MAX_NAME_CHARS, is_text, short_repr, text_problem
from ranking.io.validation import RowError, battles_from_records
from ranking.personal_style.results import StylePrior
from ranking.types import CENTER, Method
from ranking.windows import format_instant, window_mask
from service.live.context import LiveContext, LivePart
from service.live.errors import InputError, NotAvailable
from service.live.personal import fit_taste_prior, personal_leaderboard
from service.live.priors import predicted_priors_and_parts
from service.live.results import Ingested, Registered, Rejected
from service.live.served import METHODS, Served
from service.live.versions import Versions
from service.live.votes import battle_documents, elo_update
from service.pipeline.integrity import RECEIVED
from service.store.base import Store

__all__ = ["MAX_USER_ID_CHARS", "Writes", "drop_names_not_text", "server_time"]

log = logging.getLogger(__name__)

#: The longest user id: ``/v1/users/{user_id}/...`` reads no longer one, so none is stored.
MAX_USER_ID_CHARS = 256

#: A user's boards by method, of each user refitted.
UserBoards = dict[str, dict[str, dict[str, Any]]]


def drop_names_not_text(store: Store) -> list[str]:
    """Drop from the catalogue the model names that are not Unicode text, logging a warning.

    A name holding a lone surrogate (JSON ``"\\ud800"``) cannot be encoded in an answer;
    versions before issue 31 stored one when an admin registered it, and every ingest
    and Elo read failed from then on. The service starts without them (docs/SPEC.md
    section 5); their votes, if any, stay stored.

    Returns
    -------
    list of str
        The names dropped (none, almost always).
    """
    bad = [name for name in store.elo() if not is_text(name)]
    if bad:

        def update(state: dict[str, float], battles: list[dict[str, Any]]) -> dict[str, float]:
            return {name: rating for name, rating in state.items() if is_text(name)}

        store.ingest([], update)
        shown = ", ".join(short_repr(name) for name in bad)
        log.warning(
            "%s: dropped %d model name(s) that are not valid Unicode text from the "
            "catalogue (stored by an older version): %s",
            store,
            len(bad),
            shown,
        )
    return bad


def server_time() -> float:
    """The unix time stamped on each vote as ``received``: the server's clock."""
    return time.time()


class Writes(LivePart):
    """The write side of the engine: votes, the catalogue, personal boards.

    Parameters
    ----------
    context : LiveContext
    versions : Versions
    token : callable
        A user's current read token (:meth:`Credentials.token
        <service.live.credentials.Credentials.token>`), handed to new voters.
    """

    def __init__(
        self, context: LiveContext, versions: Versions, token: Callable[[str], str]
    ) -> None:
        super().__init__(context)
        self.versions = versions
        self._token = token
        # Personal refits of one process in turn, so a slower refit that read fewer votes
        # never overwrites a later one.
        self._users_lock = threading.Lock()
        # Each person's taste in answers, learnt from the fit's votes on first use.
        self._taste: tuple[StylePrior | None] | None = None

    # -- votes -----------------------------------------------------------------------------

    def ingest(self, records: list[Any]) -> Ingested:
        """Validate, store and apply a batch of battles (``POST /v1/battles``).

        Valid records are stored, with the Elo update, in one atomic store step; invalid
        ones are reported by index and nothing of them is stored. Each stored battle
        carries ``received``, the server's unix time of the call (one a record sends is
        replaced: the server's clock decides). The personal
        leaderboards of the users who voted are refitted before this returns, also when
        their battles were already stored (a retry completes an ingest cut short).

        Returns
        -------
        Ingested
            ``accepted``, ``duplicates``, ``rejected`` (index and error of each bad record),
            ``tokens`` (the current read tokens of users whose first vote this was, one
            rotated before it included) and ``version``.
        """
        frame, errors, duplicates = self._validate(records)
        invalid = {e.index for e in errors}
        refused = (
            [] if self.settings.auto_register_models else self._unknown_models(records, invalid)
        )
        if refused:  # validate again without them: nothing of theirs is stored
            skipped = invalid | {e.index for e in refused}
            kept = [i for i in range(len(records)) if i not in skipped]
            frame, _, duplicates = self._validate([records[i] for i in kept])
            errors = sorted(errors + refused, key=lambda e: e.index)
        documents = battle_documents(frame)
        # the cap and the standing count this, never the tstamp; a client's own received
        # (a battle exported from a service, sent again) is replaced
        received = server_time()
        for document in documents:
            document[RECEIVED] = received
        result = self.store.ingest(documents, elo_update)
        accepted = [documents[i] for i in result.accepted]
        served = self.versions.served()
        # The voters of the battles already stored are refitted too: a batch sent again
        # because its answer never came may have been stored by a process that died, or
        # lost its store, before refitting them; the retry then completes it.
        users = dict.fromkeys(d["user_id"] for d in documents if d.get("user_id") is not None)
        if users:
            with self._users_lock:
                self.refit_users(served, {u: self.history.user_battles(u) for u in users})
        new_users = [u for u in result.new_users if not self.history.in_fit(u)]
        return Ingested(
            accepted=len(accepted),
            duplicates=duplicates + result.duplicates,
            rejected=[Rejected(e.index, e.message) for e in errors],
            tokens={u: self._token(u) for u in new_users},
            version=served.version,
        )

    def _validate(self, records: list[Any]) -> tuple[pd.DataFrame, list[RowError], int]:
        """:func:`battles_from_records` with the service's known ids and limits."""
        return battles_from_records(
            records,
            known_ids=self.history.fit_ids,
            max_chars={"user_id": MAX_USER_ID_CHARS},
            strict_text=True,
        )

    def _unknown_models(self, records: list[Any], skip: set[int]) -> list[RowError]:
        """One error for each valid record (not in ``skip``) naming a model outside the
        catalogue."""
        known = self.catalogue()
        errors = []
        for index, record in enumerate(records):
            if index in skip or not isinstance(record, dict):
                continue
            for field in ("model_a", "model_b"):
                name = record.get(field)
                if isinstance(name, str) and name.strip() and name not in known:
                    errors.append(
                        RowError(
                            index,
                            field,
                            name,
                            "is not a registered model (an admin registers models with "
                            "POST /v1/admin/models)",
                        )
                    )
                    break
        return errors

    # -- the catalogue ---------------------------------------------------------------------

    def catalogue(self) -> frozenset[str]:
        """The models this deployment knows: the served version's and those registered."""
        return frozenset(self.versions.served().models) | self.store.models()

    def register_models(self, names: list[str]) -> Registered:
        """Add models to the catalogue (``POST /v1/admin/models``).

        Returns
        -------
        Registered
            ``added`` (the names that were new, in the order given), ``known`` (those
            already in the catalogue) and ``version``.

        Raises
        ------
        InputError
            When a name is empty, not a string or not storable text (too long, a control
            character, a lone surrogate), naming its position and value; nothing is added.
        """
        for position, name in enumerate(names):
            if not isinstance(name, str) or not name.strip():
                raise InputError(f"models[{position}]: {short_repr(name)} is not a model name")
            problem = text_problem(name, MAX_NAME_CHARS)
            if problem is not None:
                raise InputError(f"models[{position}]: value {short_repr(name)} {problem}")
        served = frozenset(self.versions.served().models)
        wanted = [n for n in dict.fromkeys(names) if n not in served]
        added = self.store.register_models(wanted) if wanted else ()
        return Registered(
            added=list(added),
            known=[n for n in dict.fromkeys(names) if n not in added],
            version=self.versions.served().version,
        )

    # -- personal boards -------------------------------------------------------------------

    def user_leaderboard(
        self,
        user_id: str,
        method: Method = "bt",
        window: tuple[float | None, float | None] | None = None,
    ) -> dict[str, Any]:
        """One user's leaderboard refitted on the current version (and stored).

        With ``window`` (``since``, ``until``, unix seconds, either None), the board of the
        user's votes in ``[since, until)``, shrunk toward the same prior, with ``window``
        in the answer; it is not stored.

        Raises
        ------
        NotAvailable
            When the user has no battle.
        InputError
            When a window is asked of votes without ``tstamp``, or holds none of theirs.
        """
        served = self.versions.served()
        battles = self.history.user_battles(user_id)
        if battles.empty:
            raise NotAvailable(f"no battle of user {user_id!r} is known")
        if window is not None and window != (None, None):
            return self._windowed(served, user_id, battles, method, window)
        return self.refit_users(served, {user_id: battles}, (method,))[user_id][method]

    def _windowed(
        self,
        served: Served,
        user_id: str,
        battles: pd.DataFrame,
        method: Method,
        window: tuple[float | None, float | None],
    ) -> dict[str, Any]:
        """The board of the user's votes in ``window``, not stored."""
        since, until = window
        option = "since" if since is not None else "until"
        if "tstamp" not in battles.columns or battles["tstamp"].isna().all():
            raise InputError(
                f"{option}: this user's votes carry no tstamp, so they cannot be windowed"
            )
        stamps = battles["tstamp"].to_numpy(dtype=np.float64, na_value=np.nan)
        kept = battles.loc[window_mask(stamps, since, until)]
        if kept.empty:
            raise InputError(f"{option}: none of this user's votes falls in that window")
        boards = self.refit_users(served, {user_id: kept}, (method,), store=False)
        ends = {"since": since, "until": until}
        document = boards[user_id][method]
        document["window"] = {k: format_instant(v) for k, v in ends.items() if v is not None}
        return document

    def taste_prior(self) -> StylePrior | None:
        """How people's taste in answers varies, learnt from the fit's votes with answers
        (:func:`service.live.personal.fit_taste_prior`, once); None where the fit has no
        style-controlled board or no user ids."""
        if self._taste is None:
            try:
                fitted = fit_taste_prior(self.history.fit_battles, self.fit.style_control)
            except (ValueError, RuntimeError) as exc:  # the boards go on without a taste
                log.warning("no taste in answers on personal boards: %s", exc)
                fitted = None
            self._taste = (fitted,)
        return self._taste[0]

    def refit_users(
        self,
        served: Served,
        battles: dict[str, pd.DataFrame],
        methods: tuple[Method, ...] = METHODS,
        *,
        store: bool = True,
    ) -> UserBoards:
        """Refit and store the personal leaderboards of some users; returns them.

        Parameters
        ----------
        served : Served
            The version the boards are shrunk toward (and stamped with).
        battles : dict
            User to their battles.
        methods : tuple of {"bt", "elo"}
            The boards refitted; a Bradley-Terry one starts from the user's predicted
            prior when the version has a predictor.
        store : bool
            Whether to store them (a board of a time window is not).
        """
        # A provisional model (too few votes to rank publicly, e.g. a model an attacker
        # registered and voted up once) is no one's prior: it is on a user's board only
        # when the user voted on it, starting at the centre like a model registered since.
        provisional = served.provisional
        ranked = tuple(m for m in served.models if m not in provisional)
        position = {m: j for j, m in enumerate(served.models)}
        index = np.array([position[m] for m in ranked], dtype=np.intp)
        predicted = predicted_priors_and_parts(served.predictor, ranked, battles)
        documents: UserBoards = {}
        for user_id, frame in battles.items():
            documents[user_id] = {}
            voted = set(frame["model_a"].astype(str)) | set(frame["model_b"].astype(str))
            extra = tuple(sorted(voted - set(ranked)))
            models = ranked + extra
            start = np.full(len(extra), CENTER)
            prior, queries = predicted.get(user_id, (None, None))
            for method in methods:
                document = personal_leaderboard(
                    user_id,
                    frame,
                    models,
                    np.concatenate([served.aggregate[method][index], start]),
                    method=method,
                    prior=np.concatenate([prior, start])
                    if method == "bt" and prior is not None
                    else None,
                    alpha=served.snapshot.user_alpha,
                    queries=queries,
                    taste_prior=self.taste_prior(),
                )
                document["version"] = served.version
                if store:
                    self.store.put_user(user_id, method, document)
                documents[user_id][method] = document
        return documents
