"""Where the service keeps battles, the online Elo state, user documents and snapshots.

One small interface, :class:`~service.store.base.Store`, with two implementations:
:class:`~service.store.embedded.EmbeddedStore` (SQLite in a local file, the default) and
:class:`~service.store.redis_store.RedisStore` (shared by replicas). :func:`open_store`
picks one from the settings.
"""

from __future__ import annotations

import os

from service.store.base import Store
from service.store.embedded import EmbeddedStore
from service.store.redis_store import RedisStore

__all__ = ["open_store"]


def open_store(
    *,
    redis_url: str | None = None,
    path: str | os.PathLike[str] | None = None,
    namespace: str = "plb",
    redis_timeout_s: float = 2.0,
) -> Store:
    """Open the configured store: Redis when ``redis_url`` is given, else SQLite at ``path``.

    Parameters
    ----------
    redis_url : str, optional
        A ``redis://``, ``rediss://`` or ``unix://`` URL; selects :class:`RedisStore`.
    path : str or os.PathLike, optional
        The SQLite file of an :class:`EmbeddedStore` (parent directories are created);
        required when ``redis_url`` is not given, refused when it is.
    namespace : str, default "plb"
        Key prefix in Redis; unused by the embedded store.
    redis_timeout_s : float, default 2.0
        The longest to wait for Redis to connect or answer a command.

    Returns
    -------
    Store

    Raises
    ------
    ValueError
        When both or neither of ``redis_url`` and ``path`` are given, or ``redis_url`` is
        not a Redis URL.
    StoreUnavailable
        When the SQLite file cannot be opened or is not a store of ours.
    """
    if redis_url is not None and path is not None:
        raise ValueError(
            "Give either 'redis_url' or 'path', not both "
            f"(got redis_url={redis_url!r} and path={os.fspath(path)!r})."
        )
    if redis_url is not None:
        if not isinstance(redis_url, str) or not redis_url.strip():
            raise ValueError(f"Argument 'redis_url' must be a non-empty URL, not {redis_url!r}")
        return RedisStore(redis_url, namespace=namespace, timeout_s=redis_timeout_s)
    if path is None:
        raise ValueError(
            "Give 'redis_url' (a Redis store) or 'path' (the embedded SQLite file); got neither."
        )
    return EmbeddedStore(path)
