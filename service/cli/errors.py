"""The error every ``plb`` command raises for bad usage or bad input."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """Bad usage or bad input: ``plb`` prints the message on one line and exits with 2."""
