"""What the live service answers when a request cannot be served as asked."""

from __future__ import annotations

__all__ = ["InputError", "NotAvailable"]


class InputError(ValueError):
    """A request the engine cannot take (the API answers 422 with this message)."""


class NotAvailable(LookupError):
    """What was asked for does not exist in this fit (the API answers 404 or 409)."""
