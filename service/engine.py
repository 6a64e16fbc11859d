"""The live service model: the :class:`Engine` the routes call (:mod:`service.live`).

Kept as the name the API and the tests import; the parts live in :mod:`service.live`.
"""

from __future__ import annotations

from service.live import MAX_USER_ID_CHARS, Engine, InputError, NotAvailable, Served

__all__ = ["MAX_USER_ID_CHARS", "Engine", "InputError", "NotAvailable", "Served"]
