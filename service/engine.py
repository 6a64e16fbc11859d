"""The live service model: reads of one consistent version, ingestion, background refits.

The :class:`Engine` is everything the routes call; it knows the store and the fit
directory, and calls ``ranking`` and ``features`` for the numbers:

* **Reads** see one :class:`Served` version (a published snapshot, its aggregate
  ratings and its predictor), swapped whole when a new version is published, by this
  process or (polled every ``version_poll_s``) by another replica sharing the store.
* **A vote** (:meth:`Engine.ingest`) is stored together with its online Elo update in
  one atomic store step, and the voter's personal leaderboard is refitted before the
  call returns, so the voter's next read shows it. A vote naming a model outside the
  catalogue (the served fit's models and those registered, :meth:`Engine.register_models`)
  is rejected, unless the settings opt in to registering it.
* **Public boards** rank only the models with ``min_model_votes`` votes; the others are
  listed as ``provisional`` (:func:`ranking.leaderboard.split_provisional`). They count
  only the votes the integrity screen keeps (:mod:`service.integrity`): each user's
  first ``daily_vote_cap`` votes a day, none of a flagged voter's. Flagged voters are
  found by each refit, and at start-up on the fit's battles; between refits, the live
  Elo board applies the published version's flags and the cap to each new vote.
* **A refit** (:meth:`Engine.refit`, periodic in a background thread) fits the aggregate
  Bradley-Terry, per-user agreement and shrinkage (and, if asked, the predictor) on all
  battles, then publishes them as the next version; reads go on meanwhile.

A version as readers see it is built in :mod:`service.served`; a stored batch's Elo
update is :func:`service.votes.elo_update`.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ranking.frames import check_segment_size, filter_battles, pairwise_from_battles
from ranking.leaderboard import fit_leaderboard
from ranking.types import CENTER, Method
from ranking.validation import (
    RowError,
    battles_from_records,
    empty_battle_frame,
    to_battle_frame,
)
from service.integrity import IntegrityConfig, counted_mask, screen_battles
from service.personal import personal_leaderboard
from service.pipeline import build_predictor
from service.pipeline.artifacts import FitArtifacts
from service.pipeline.snapshot import refit_snapshot, snapshot_from_fit
from service.recommendation import recommendation, unknown_models
from service.served import (
    METHODS,
    LiveWindow,
    Served,
    live_elo_leaderboard,
    live_window,
    served_version,
)
from service.settings import Settings
from service.store import Store, StoreUnavailable
from service.tokens import user_token, verify_user_token
from service.votes import battle_documents, battle_frame, elo_update

__all__ = ["MAX_USER_ID_CHARS", "Engine", "InputError", "NotAvailable", "Served"]

log = logging.getLogger(__name__)

#: The longest user id: ``/v1/users/{user_id}/...`` reads no longer one, so none is stored.
MAX_USER_ID_CHARS = 256
#: The most of a user's latest prompts that their predicted prior is made from.
PRIOR_QUERIES = 50
#: Segment leaderboards (``?where=``) kept per process.
_SEGMENTS_KEPT = 32


class InputError(ValueError):
    """A request the engine cannot take (the API answers 422 with this message)."""


class NotAvailable(LookupError):
    """What was asked for does not exist in this fit (the API answers 404 or 409)."""


class Engine:
    """The service's model, reads and writes, over a store and a fit directory.

    Parameters
    ----------
    store : Store
        Where battles, the Elo state, user documents and versions live.
    fit : FitArtifacts
        The fit directory served (``plb fit``).
    settings : Settings
    """

    def __init__(self, store: Store, fit: FitArtifacts, settings: Settings) -> None:
        self.store = store
        self.fit = fit
        self.settings = settings
        self.integrity = IntegrityConfig(
            daily_cap=settings.daily_vote_cap,
            flag_voters=settings.flag_voters,
            level=settings.flag_level,
            min_votes=settings.flag_min_votes,
            brigade_share=settings.flag_brigade_share,
        )
        fit_battles = fit.read_battles()
        self._fit_battles = fit_battles if fit_battles is not None else empty_battle_frame()
        ids = self._fit_battles["battle_id"].dropna()
        self._fit_ids = frozenset(ids.astype(str))
        groups = self._fit_battles.groupby("user_id", observed=True, sort=False).indices
        self._fit_rows = {str(user): rows for user, rows in groups.items()}
        secret = settings.token_secret
        self._secret = secret.get_secret_value().encode() if secret else store.secret()
        self._predictors: dict[str, Any] = {}
        self._lock = threading.Lock()  # guards swapping self._served
        self._refit_lock = threading.Lock()  # one refit at a time in this process
        # Personal refits of one process in turn, so a slower refit that read fewer votes
        # never overwrites a later one.
        self._users_lock = threading.Lock()
        self._segments: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._live: tuple[tuple[int, int], LiveWindow] | None = None
        self._checked = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._publish_fit_if_new()
        self._served = self._load(*store.snapshot())
        if self._served.predictor is not None:  # load the embedding model now, not on a request
            self._served.predictor.predict_queries(["warm-up"])

    # -- versions --------------------------------------------------------------------------

    def _publish_fit_if_new(self) -> None:
        """Publish the fit as a version unless the store already serves this fit."""
        version, snapshot = self.store.snapshot()
        if snapshot is None or snapshot.get("fit_created") != self.fit.manifest.get("created"):
            snapshot = snapshot_from_fit(self.fit)
            snapshot["public"], snapshot["integrity"] = self._public_boards(snapshot)
            version = self.store.publish(snapshot)
            log.info("published the fit directory as version %d", version)
        elo = self.fit.leaderboards["elo"]["models"]
        self.store.init_elo({m["model"]: m["rating"] for m in elo})

    def _public_boards(
        self, snapshot: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The fit's public Bradley-Terry board and the integrity evidence, from the fit's
        battles (when they are known).

        The board is fitted again on the votes the integrity screen keeps, without those
        of models below ``min_model_votes``, when the screen left votes out or such models
        exist; else it is None (the fit's board is then split as it is). The fit's Elo
        board is served as fitted until the first refit.
        """
        if self._fit_battles.empty:
            return None, None
        least = self.settings.min_model_votes
        counted, evidence = screen_battles(self._fit_battles, self.integrity)
        rows = snapshot["leaderboards"]["bt"]["models"]
        if counted.all() and all(m["battles"] >= least for m in rows):
            return None, evidence
        data = pairwise_from_battles(self._fit_battles[counted], models=snapshot["models"])
        return {"bt": fit_leaderboard(data, method="bt", min_votes=least).to_dict()}, evidence

    def _predictor(self, path: str | None) -> Any | None:
        if path is None:
            return None
        if path not in self._predictors:
            from features.predictor import RatingPredictor  # heavy: only when served

            self._predictors[path] = RatingPredictor.load(path)
        return self._predictors[path]

    def _load(self, version: int, snapshot: dict[str, Any] | None) -> Served:
        if snapshot is None:
            raise RuntimeError("the store holds no published model version")
        predictor = self._predictor(snapshot.get("predictor_dir"))
        return served_version(version, snapshot, predictor, self.settings.min_model_votes)

    def served(self) -> Served:
        """The current version; checks the store for a newer one every ``version_poll_s``.

        While the store cannot be reached the version held is served: reads of the
        published version keep answering, and the check is made again after the next
        ``version_poll_s``.
        """
        now = time.monotonic()
        if now - self._checked >= self.settings.version_poll_s:
            self._checked = now
            try:
                newer = self.store.version() != self._served.version
                served = self._load(*self.store.snapshot()) if newer else None
            except StoreUnavailable as error:
                held = self._served.version
                log.warning("serving version %d: the store is unavailable (%s)", held, error)
                served = None
            if served is not None:
                with self._lock:
                    if served.version > self._served.version:
                        self._served = served
        return self._served

    # -- reads -----------------------------------------------------------------------------

    def leaderboard(
        self, method: Method = "bt", where: list[tuple[str, str]] | None = None
    ) -> dict[str, Any]:
        """The aggregate leaderboard document (SPEC section 3), plus ``version``.

        Bradley-Terry is the published version's; Elo is live, moved by every vote since
        (in the ratings and in each model's counts), with the interval widths of the
        version. ``where`` fits a segment leaderboard on all battles whose label columns
        match. Only models with ``min_model_votes`` votes are ranked; the others are
        listed under ``provisional``.
        """
        served = self.served()
        if where:
            document = self._segment(served, method, where)
        elif method == "elo":
            document = live_elo_leaderboard(served, self._live_window(served))
        else:
            document = dict((served.boards or {})[method])
        return {**document, "version": served.version}

    def _live_window(self, served: Served) -> LiveWindow:
        """The votes counted since ``served`` was published; kept until the next vote or
        version."""
        n_stored = self.store.n_battles()
        key = (served.version, n_stored)
        if self._live is not None and self._live[0] == key:
            return self._live[1]
        first = int(served.snapshot.get("store_battles", 0))
        since = self.store.battles()[first:] if n_stored > first else []
        window = live_window(served, self._counted(served, since), self.store.models())
        self._live = (key, window)
        return window

    def _counted(self, served: Served, battles: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The stored ``battles`` the aggregate counts: not a flagged voter's, and within
        the daily cap among each voter's battles."""
        cap = self.integrity.daily_cap
        if not battles or (cap <= 0 and not served.flagged):
            return battles
        voters = dict.fromkeys(b["user_id"] for b in battles if b.get("user_id") is not None)
        if not voters:
            return battles
        histories = [self.user_battles(str(u)) for u in voters]
        history = to_battle_frame(pd.concat(histories, ignore_index=True))
        kept = counted_mask(history, served.flagged, cap)
        ids = frozenset(history["battle_id"][kept].dropna().astype(str))
        return [b for b in battles if b.get("user_id") is None or b["battle_id"] in ids]

    def _segment(
        self, served: Served, method: Method, where: list[tuple[str, str]]
    ) -> dict[str, Any]:
        """A segment leaderboard, fitted on all battles; the last few are kept."""
        key = (served.version, self.store.n_battles(), method, tuple(where))
        if key in self._segments:
            return self._segments[key]
        named = " and ".join(f"{c}={v}" for c, v in where)
        everything = self.all_battles()
        counted = everything[counted_mask(everything, served.flagged, self.integrity.daily_cap)]
        try:
            battles = filter_battles(counted, where)
        except ValueError as error:  # not a label column, or a value of the wrong type
            raise InputError(f"where: {error}") from None
        if battles.empty:
            raise InputError(f"no battle matches {named}")
        try:
            check_segment_size(
                battles,
                min_votes=self.settings.segment_min_votes,
                min_users=self.settings.segment_min_users,
            )
        except ValueError as error:
            raise InputError(f"where {named}: {error}") from None
        data = pairwise_from_battles(battles)
        board = fit_leaderboard(data, method=method, min_votes=self.settings.min_model_votes)
        document = board.to_dict()
        self._segments[key] = document
        while len(self._segments) > _SEGMENTS_KEPT:
            self._segments.popitem(last=False)
        return document

    def all_battles(self) -> pd.DataFrame:
        """Every battle: the fit's, then those ingested since."""
        stored = battle_frame(self.store.battles())
        if stored.empty:
            return self._fit_battles
        return to_battle_frame(pd.concat([self._fit_battles, stored], ignore_index=True))

    def user_battles(self, user_id: str) -> pd.DataFrame:
        """One user's battles: the fit's, then those ingested since."""
        rows = self._fit_rows.get(user_id)
        parts = [] if rows is None else [self._fit_battles.iloc[rows]]
        stored = self.store.battles(user_id)
        if stored:
            parts.append(battle_frame(stored))
        if not parts:
            return empty_battle_frame()
        return parts[0] if len(parts) == 1 else to_battle_frame(pd.concat(parts, ignore_index=True))

    def stored_user_leaderboard(self, user_id: str, method: Method = "bt") -> dict[str, Any] | None:
        """One user's leaderboard when the store has it for the current version, else None.

        One store read: the fast path of :meth:`user_leaderboard`.
        """
        document = self.store.get_user(user_id, method)
        if document is not None and document.get("version") == self.served().version:
            return document
        return None

    def user_leaderboard(self, user_id: str, method: Method = "bt") -> dict[str, Any]:
        """One user's leaderboard, refitted when its version is older than the current one.

        Raises
        ------
        NotAvailable
            When the user has no battle.
        """
        document = self.stored_user_leaderboard(user_id, method)
        if document is not None:
            return document
        served = self.served()
        battles = self.user_battles(user_id)
        if battles.empty:
            raise NotAvailable(f"no battle of user {user_id!r} is known")
        return self._refit_users(served, {user_id: battles}, (method,))[user_id][method]

    def _refit_users(
        self,
        served: Served,
        battles: dict[str, pd.DataFrame],
        methods: tuple[Method, ...] = METHODS,
    ) -> dict[str, dict[str, dict[str, Any]]]:
        """Refit and store the personal leaderboards of some users; returns them."""
        priors = self._predicted_priors(served, battles) if "bt" in methods else {}
        documents: dict[str, dict[str, dict[str, Any]]] = {}
        for user_id, frame in battles.items():
            documents[user_id] = {}
            # a model voted on since the version (registered since) starts at the centre
            voted = set(frame["model_a"].astype(str)) | set(frame["model_b"].astype(str))
            extra = tuple(sorted(voted - set(served.models)))
            models = served.models + extra
            start = np.full(len(extra), CENTER)
            prior = priors.get(user_id)
            for method in methods:
                document = personal_leaderboard(
                    user_id,
                    frame,
                    models,
                    np.concatenate([served.aggregate[method], start]),
                    method=method,
                    prior=np.concatenate([prior, start])
                    if method == "bt" and prior is not None
                    else None,
                    alpha=served.snapshot.get("user_alpha"),
                )
                document["version"] = served.version
                self.store.put_user(user_id, method, document)
                documents[user_id][method] = document
        return documents

    def _predicted_priors(
        self, served: Served, battles: dict[str, pd.DataFrame]
    ) -> dict[str, np.ndarray]:
        """Each user's ratings predicted from their prompts, in the order of ``models``.

        Only a user's latest :data:`PRIOR_QUERIES` prompts are embedded: a profile is a
        mean over queries, steady long before that, and a vote must stay cheap for a
        user with thousands.
        """
        predictor = served.predictor
        if predictor is None:
            return {}
        frames = [f[["user_id", "prompt"]].dropna().tail(PRIOR_QUERIES) for f in battles.values()]
        prompts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        if prompts.empty:
            return {}
        prediction = predictor.predict(predictor.profiler_.transform(prompts))
        order = [
            list(predictor.models_).index(m) if m in predictor.models_ else -1
            for m in served.models
        ]
        if min(order) < 0:
            return {}  # the predictor predates a model: no prior until it is refitted
        return {
            str(user): prediction.ratings[row, order]
            for row, user in enumerate(prediction.user_ids)
        }

    def recommend(self, queries: list[str], votes: list[Any] | None = None) -> dict[str, Any]:
        """The recommend document for a user known by ``queries`` (and maybe ``votes``).

        Raises
        ------
        NotAvailable
            When the fit has no rating predictor.
        InputError
            When a vote is malformed or names a model the predictor does not know.
        """
        served = self.served()
        if served.predictor is None:
            raise NotAvailable(
                "this service's fit has no rating predictor (it was fitted without prompts)"
            )
        frame = None
        if votes:
            frame, errors, _ = battles_from_records(votes)
            if errors:
                raise InputError(f"votes[{errors[0].index}]: {errors[0].message}")
            unknown = unknown_models(frame, served.predictor.models_)
            if unknown:
                raise InputError(f"votes name model {unknown[0]!r}, which this fit does not know")
        document = recommendation(served.predictor, queries, frame, aggregate=served.ratings("bt"))
        return {**document, "version": served.version}

    def correlations(self, method: Method = "bt", shrinkage: str = "cv") -> dict[str, Any]:
        """The distribution of per-user Spearman against the aggregate."""
        served = self.served()
        key = f"{method}/{shrinkage}"
        document = served.snapshot.get("correlations", {}).get(key)
        if document is None:
            raise NotAvailable(f"no per-user agreement for {key} (the log has no user ids)")
        return {**document, "version": served.version}

    def models(self) -> dict[str, Any]:
        """The models of the current version with their battle counts."""
        served = self.served()
        rows = served.snapshot["leaderboards"]["bt"]["models"]
        models = [{"model": m["model"], "battles": m["battles"]} for m in rows]
        return {"models": sorted(models, key=lambda m: -m["battles"]), "version": served.version}

    def about(self) -> dict[str, Any]:
        """What the service serves: whether its fit is of a simulated arena, when it was
        made, and how many votes and voters its public boards leave out."""
        served = self.served()
        evidence = served.snapshot.get("integrity")
        integrity = None
        if evidence is not None:
            integrity = {
                "daily_cap": evidence["daily_cap"],
                "votes_counted": evidence["n_counted"],
                "votes_over_cap": evidence["n_capped"],
                "voters_flagged": len(evidence["flagged"]),
            }
        return {
            "simulated": self.fit.simulated,
            "fit_created": self.fit.manifest.get("created"),
            "integrity": integrity,
            "version": served.version,
        }

    def integrity_report(self) -> dict[str, Any]:
        """Who the current version's public boards leave out, and why
        (``GET /v1/admin/integrity``).

        Returns
        -------
        dict
            The version's integrity evidence (:func:`service.integrity.screen_battles`;
            ``null`` fields when the version was published without a screen), the live
            Elo of every stored vote with the defence off (``elo_every_vote``) and
            ``version``.
        """
        served = self.served()
        evidence = served.snapshot.get("integrity")
        return {
            "screened": evidence is not None,
            **(evidence or {"flagged": []}),
            "elo_every_vote": self.store.elo(),
            "version": served.version,
        }

    def topics(self) -> dict[str, Any]:
        """The topics of the users' queries.

        Raises
        ------
        NotAvailable
            When the fit has no topic model.
        """
        served = self.served()
        topics = served.snapshot.get("topics")
        if topics is None:
            raise NotAvailable("this service's fit has no topic model (no prompts in the log)")
        return {"topics": topics, "version": served.version}

    # -- tokens ----------------------------------------------------------------------------

    def token(self, user_id: str) -> str:
        """The read token of ``user_id``."""
        return user_token(self._secret, user_id)

    def token_matches(self, user_id: str, token: str | None) -> bool:
        """Whether ``token`` is the read token of ``user_id`` (constant time)."""
        return token is not None and verify_user_token(self._secret, user_id, token)

    # -- writes ----------------------------------------------------------------------------

    def ingest(self, records: list[Any]) -> dict[str, Any]:
        """Validate, store and apply a batch of battles (``POST /v1/battles``).

        Valid records are stored, with the Elo update, in one atomic store step; invalid
        ones are reported by index and nothing of them is stored. The personal
        leaderboards of the users who voted are refitted before this returns, also when
        their battles were already stored (a retry completes an ingest cut short).

        Returns
        -------
        dict
            ``accepted``, ``duplicates``, ``rejected`` (index and error of each bad record),
            ``tokens`` (read tokens of users whose first vote this was) and ``version``.
        """
        frame, errors, duplicates = self._validate(records)
        if not self.settings.auto_register_models:
            invalid = {e.index for e in errors}
            unknown = self._unknown_models(records, skip=invalid)
            if unknown:  # validate again without them: nothing of theirs is stored
                skipped = invalid | {e.index for e in unknown}
                kept = [i for i in range(len(records)) if i not in skipped]
                frame, _, duplicates = self._validate([records[i] for i in kept])
                errors = sorted(errors + unknown, key=lambda e: e.index)
        documents = battle_documents(frame)
        result = self.store.ingest(documents, elo_update)
        accepted = [documents[i] for i in result.accepted]
        served = self.served()
        # The voters of the battles already stored are refitted too: a batch sent again
        # because its answer never came may have been stored by a process that died, or
        # lost its store, before refitting them; the retry then completes it.
        users = dict.fromkeys(d["user_id"] for d in documents if d.get("user_id") is not None)
        if users:
            with self._users_lock:
                self._refit_users(served, {u: self.user_battles(u) for u in users})
        new_users = [u for u in result.new_users if u not in self._fit_rows]
        return {
            "accepted": len(accepted),
            "duplicates": duplicates + result.duplicates,
            "rejected": [e.to_dict() for e in errors],
            "tokens": {u: self.token(u) for u in new_users},
            "version": served.version,
        }

    def catalogue(self) -> frozenset[str]:
        """The models this deployment knows: the served version's and those registered."""
        return frozenset(self.served().models) | self.store.models()

    def _validate(self, records: list[Any]) -> tuple[pd.DataFrame, list[RowError], int]:
        """:func:`battles_from_records` with the service's known ids and limits."""
        return battles_from_records(
            records, known_ids=self._fit_ids, max_chars={"user_id": MAX_USER_ID_CHARS}
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

    def register_models(self, names: list[str]) -> dict[str, Any]:
        """Add models to the catalogue (``POST /v1/admin/models``).

        Returns
        -------
        dict
            ``added`` (the names that were new, in the order given) and ``known`` (those
            already in the catalogue).

        Raises
        ------
        InputError
            When a name is empty or not a string, naming its position and value.
        """
        for position, name in enumerate(names):
            if not isinstance(name, str) or not name.strip():
                raise InputError(f"models[{position}]: {name!r} is not a model name")
        served = frozenset(self.served().models)
        wanted = [n for n in dict.fromkeys(names) if n not in served]
        added = self.store.register_models(wanted) if wanted else ()
        return {
            "added": list(added),
            "known": [n for n in dict.fromkeys(names) if n not in added],
            "version": self.served().version,
        }

    def refit(self) -> int:
        """Refit on all battles and publish the result; returns the new version.

        Only one refit runs at a time in a process; reads go on meanwhile.
        """
        with self._refit_lock:
            served = self.served()
            n_stored = self.store.n_battles()
            battles = self.all_battles()
            started = time.monotonic()
            snapshot = refit_snapshot(
                battles,
                served.snapshot,
                rng=self.fit.config.seed,
                min_votes=self.settings.min_model_votes,
                integrity=self.integrity,
            )
            snapshot["store_battles"] = n_stored
            if self.settings.refit_predictor and "prompt" in battles.columns:
                snapshot["predictor_dir"] = self._refit_predictor(battles, served)
            version = self.store.publish(snapshot)
            loaded = self._load(version, snapshot)
            with self._lock:
                if loaded.version > self._served.version:
                    self._served = loaded
            log.info(
                "refit on %d battles published version %d in %.1f s",
                len(battles),
                version,
                time.monotonic() - started,
            )
            return version

    def _refit_predictor(self, battles: pd.DataFrame, served: Served) -> str | None:
        """Fit the pipeline's rating predictor afresh on ``battles``, with the topic
        settings and seed the served fit records; saved beside it, its folder returned."""
        if served.predictor is None:
            return None
        predictor, _ = build_predictor(self.fit.config)
        predictor.fit(battles, models=tuple(sorted(served.models)))
        root = self.settings.state_dir or (self.fit.root or Path(".")).parent
        path = Path(root) / f"predictor-{uuid.uuid4().hex[:12]}"
        predictor.save(path)
        return str(path)

    # -- background ------------------------------------------------------------------------

    def start_background(self) -> None:
        """Refit every ``refit_interval_s`` when votes arrived since the last refit."""
        if self.settings.refit_interval_s <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._refit_loop, name="plb-refit", daemon=True)
        self._thread.start()

    def _refit_loop(self) -> None:
        while not self._stop.wait(self.settings.refit_interval_s):
            try:
                stored = int(self.served().snapshot.get("store_battles", 0))
                if self.store.n_battles() != stored:
                    self.refit()
            except Exception:  # a failed refit keeps the current version; try again later
                log.exception("background refit failed")

    def close(self) -> None:
        """Stop the background refits and close the store."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.store.close()
