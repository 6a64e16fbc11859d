"""The service's settings, from ``PLB_*`` environment variables (pydantic-settings).

Nothing is read at import time: :func:`get_settings` builds the settings on first use and
caches them, and tests pass their own :class:`Settings` to ``create_app``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field, RedisDsn, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.live.rates import parse_networks, parse_rates

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """Everything the service can be told, each from ``PLB_<NAME>``.

    Attributes
    ----------
    fit_dir : Path, optional
        The fit directory of ``plb fit`` to serve (``PLB_FIT_DIR``).
    redis_url : RedisDsn, optional
        Keep battles, rankings and the model version in this Redis; several replicas can
        then share it, and their rate limits too. Without it, the embedded store at
        ``store_path`` is used.
    redis_timeout_s : float
        The longest the service waits for Redis to connect or to answer one command
        (store and rate limits); a hung Redis then answers 503 instead of hanging.
    store_path : Path
        The embedded store's file (SQLite).
    state_dir : Path, optional
        Where background refits write their models (the predictor); the fit directory's
        parent by default. Replicas must share it.
    ingest_key, admin_key : SecretStr, optional
        Keys for ``POST /v1/battles`` and for admin routes (and any user's leaderboard).
        Without an ingest key, ingestion is off.
    token_secret : SecretStr, optional
        Secret of the per-user read tokens (HMAC of the user id); by default a random
        secret kept in the store, shared by every replica that shares the store.
    cors_origins : list of str
        Origins allowed to call the API from a browser (``["*"]`` for any).
    refit_interval_s : float
        Seconds between background refits of the aggregate when new votes arrived;
        0 turns periodic refits off (``POST /v1/admin/refit`` still works).
    refit_predictor : bool
        Whether background refits also refit the rating predictor (slow: minutes).
    version_poll_s : float
        How often a replica checks the store for a model version published by another.
    max_queries : int
        The most queries ``POST /v1/recommend`` takes at once.
    embedding_cache : int
        Queries whose embedding, style statistics, topic and embedding components the
        served rating predictor keeps by text (recommend, the next battle and the priors
        of personal boards share them); 0 keeps none.
    max_battles : int
        The most battles one ``POST /v1/battles`` takes.
    max_body_bytes : int
        The largest request body accepted (413 above it).
    segment_min_votes, segment_min_users : int
        The fewest votes, and distinct voters, a ``?where=`` segment must hold to answer,
        so that no segment narrows to a few people.
    min_model_votes : int
        The fewest votes a model must have to be ranked on public boards (the aggregate
        leaderboard, the widget, the badge); below it the model is listed apart as
        ``provisional``. 0 ranks every model.
    daily_vote_cap : int
        The most votes of one user per UTC day counted into the aggregate boards, the
        earliest ones (FastChat's ``limit_user_votes``); the rest stay stored and count
        in that user's own leaderboard. 0 counts all. The day is the server's (when the
        vote was received), never the client's ``tstamp``; votes of the fit's own log
        are capped by their ``tstamp``.
    established_days : int
        A voter's votes count into the public boards only once the voter has voted on
        this many earlier UTC days (server time): the votes of a voter's first days
        count only in their own leaderboard, never in the public ones (not later either),
        so a burst of made-up voters moves no public board. Voters of the fit's own log
        count from the start. 0 counts every voter at once. Each day more delays a
        patient attacker a day and holds back more honest votes (benchmark T: 10% of
        honest REST votes at 1, 31% at 3).
    flag_voters : bool
        Whether refits test every user's votes against everyone else's and leave the
        users flagged as random clickers or brigaders out of the aggregate boards (their
        votes stay stored and in their own leaderboard; ``GET /v1/admin/integrity``
        lists them with the evidence).
    flag_level : float
        The false-discovery rate (Benjamini-Hochberg) of each of the two tests.
    flag_min_votes : int
        The fewest votes a user must have to be tested as a random clicker.
    flag_brigade_share : float
        The least share of wins one model must have in a user's votes for the brigade
        test to flag that user.
    flag_cohort_share : float
        The least share of wins one model must have in the votes of the voters who joined
        together (the same day, week or month of the server's clock) for the cohort test
        to flag those of them who voted it up. Lower than one voter's: one voter may
        have any taste, even the crowd's reversed; many newcomers who all vote one
        model up, each under every threshold of one voter, are a brigade.
    auto_register_models : bool
        Whether a vote naming a model outside the catalogue (the served fit's models
        and those registered through ``POST /v1/admin/models``) registers it; by default
        such a vote is rejected.
    rate_limit_per_address, rate_limit_per_key : str
        Requests allowed per client address and per API key or token, in the ``limits``
        notation (``"100/second;3000/minute"``); ``"off"`` for none. Replicas on one
        Redis count together; on the embedded store, or while Redis cannot count, each
        replica counts its own requests.
    trusted_proxies : str
        Addresses and networks (``"10.0.0.5, 10.1.0.0/16"``) of the reverse proxies whose
        ``X-Forwarded-For``, ``Forwarded`` and ``X-Real-IP`` headers name the client;
        ``"*"`` trusts every peer. Empty by default: no peer is trusted, not even this
        machine, and the rate limits and budgets count the connection's own address.
    header_timeout_s : float
        The longest a connection may take to send a request's headers (counted from the
        connection, or from the first byte after an answer); it is closed after that,
        with a 408 when some bytes came.
    body_timeout_s : float
        The longest a request's body may take to arrive once its headers came (408).
    max_header_bytes : int
        The most bytes of one request's headers (431 above it, and the connection closed).
    max_connections, max_connections_per_address : int
        The most open connections of ``plb serve``, and of one client address (the
        trusted proxies excepted); a connection over either is answered 503 and closed
        at once. 0 turns that cap off.
    anonymous_query_chars : int
        The most characters of text (queries, prompt and the votes' prompts) one request
        without a credential may send to ``POST /v1/recommend`` and ``POST
        /v1/next-battle`` (413 above it); each is embedded, the dearest work a stranger
        can ask for.
    anonymous_query_chars_per_address : str
        The characters of such text one client address may send in all, in the ``limits``
        notation (``"300000/minute"``); 429 above it; ``"off"`` for none. Counted with the
        rate limits (shared by the replicas on one Redis).
    """

    model_config = SettingsConfigDict(env_prefix="PLB_", extra="ignore")

    fit_dir: Path | None = None
    redis_url: RedisDsn | None = None
    redis_timeout_s: float = Field(default=2.0, gt=0.0, le=60.0)
    store_path: Path = Path("plb-store.sqlite")
    state_dir: Path | None = None
    ingest_key: SecretStr | None = None
    admin_key: SecretStr | None = None
    token_secret: SecretStr | None = None
    cors_origins: list[str] = Field(default_factory=list)
    refit_interval_s: float = Field(default=300.0, ge=0.0)
    refit_predictor: bool = False
    version_poll_s: float = Field(default=1.0, ge=0.0)
    max_queries: int = Field(default=200, ge=1)
    embedding_cache: int = Field(default=10_000, ge=0)
    max_battles: int = Field(default=10_000, ge=1)
    max_body_bytes: int = Field(default=16 * 2**20, ge=1024)
    segment_min_votes: int = Field(default=100, ge=1)
    segment_min_users: int = Field(default=20, ge=1)
    min_model_votes: int = Field(default=50, ge=0)
    auto_register_models: bool = False
    daily_vote_cap: int = Field(default=50, ge=0)
    established_days: int = Field(default=1, ge=0, le=365)
    flag_voters: bool = True
    flag_level: float = Field(default=0.01, gt=0.0, lt=0.5)
    flag_min_votes: int = Field(default=20, ge=1)
    flag_brigade_share: float = Field(default=0.9, gt=0.0, le=1.0)
    flag_cohort_share: float = Field(default=0.5, gt=0.0, le=1.0)
    rate_limit_per_address: str = "100/second;3000/minute"
    rate_limit_per_key: str = "1000/second"
    # bounded cost (issue 31): who may name the client, how long and how much a
    # connection may hold, what text a stranger's request may have embedded
    trusted_proxies: str = ""
    header_timeout_s: float = Field(default=10.0, gt=0.0, le=3600.0)
    body_timeout_s: float = Field(default=60.0, gt=0.0, le=3600.0)
    max_header_bytes: int = Field(default=64 * 2**10, ge=1024)
    max_connections: int = Field(default=1024, ge=0)
    max_connections_per_address: int = Field(default=64, ge=0)
    anonymous_query_chars: int = Field(default=50_000, ge=1)
    anonymous_query_chars_per_address: str = "300000/minute"

    @field_validator("ingest_key", "admin_key", "token_secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 16:
            raise ValueError("must be at least 16 characters long")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        parse_networks(value)  # a ValueError names the entry that is not an address
        return value

    @field_validator(
        "rate_limit_per_address", "rate_limit_per_key", "anonymous_query_chars_per_address"
    )
    @classmethod
    def _rates(cls, value: str) -> str:
        try:
            parse_rates(value)
        except ValueError:
            raise ValueError(
                f"{value!r} is not a rate limit such as '100/second;3000/minute' or 'off'"
            ) from None
        return value


@lru_cache
def get_settings() -> Settings:
    """The settings of this process, read from the environment once."""
    return Settings()
