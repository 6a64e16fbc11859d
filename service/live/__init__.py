"""The live service in parts, behind one :class:`~service.live.engine.Engine`.

* :mod:`~service.live.engine`: the facade the routes call.
* :mod:`~service.live.versions`: the version held, published from the fit, polled.
* :mod:`~service.live.history`: every battle known, the fit's and the store's.
* :mod:`~service.live.reads`: boards, live Elo, segments, user boards, recommend.
* :mod:`~service.live.writes`: ingestion, the catalogue, personal refits, tokens.
* :mod:`~service.live.priors`: a voter's predicted prior, via the predictor's public API.
* :mod:`~service.live.refits`: refits on all battles and the background loop.
* :mod:`~service.live.errors`: what the API turns into 422, 404 and 409.

Published versions are :class:`~service.pipeline.snapshot.Snapshot` documents; a
version as readers use it is :class:`~service.live.served.Served`.

The names below are imported from their modules when first used (as ``ranking`` and
``features`` do), so that importing one light part, :mod:`~service.live.next_battle` for
``plb next-battle`` among them, does not load the engine and the topic model with it.
"""

from __future__ import annotations

from ranking.lazy import lazy_exports
from service.live.served import Served

# typing is not imported at run time: it would double the cost of importing the package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from service.live.engine import Engine
    from service.live.errors import InputError, NotAvailable
    from service.live.writes import MAX_USER_ID_CHARS

__all__ = ["MAX_USER_ID_CHARS", "Engine", "InputError", "NotAvailable", "Served"]

#: The module each lazily imported name lives in.
_HOMES: dict[str, str] = {
    "Engine": "engine",
    "InputError": "errors",
    "NotAvailable": "errors",
    "MAX_USER_ID_CHARS": "writes",
}

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
