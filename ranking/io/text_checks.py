"""What counts as storable text and numbers at the service's doors, and how a bad value is
shown (docs/SPEC.md section 5, "Text and numbers at the door").

One definition for the catalogue, ingest and recommend: :func:`text_problem` says what
is wrong with a string (too long, a lone surrogate, a control character), and
:func:`number_problem` with a number (an integer outside 64 bits, a float that is not
finite); :func:`short_repr` shows any value abbreviated, also integers too long for
``repr``.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PROMPT_CHARS",
    "NOT_TEXT",
    "is_text",
    "number_problem",
    "short_repr",
    "text_problem",
]

#: Longest model name, user id, battle id or label name.
MAX_NAME_CHARS = 256
#: Longest label value.
MAX_LABEL_CHARS = 1_000
#: Longest prompt (and query).
MAX_PROMPT_CHARS = 20_000
#: Longest answer of a model (``answer_a``, ``answer_b``).
MAX_ANSWER_CHARS = 100_000
#: Why a string holding a lone surrogate is refused.
NOT_TEXT = "is not valid Unicode text (it holds a lone surrogate)"

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_LINES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # tab, LF, CR allowed
_INT64 = 2**63


def is_text(text: str) -> bool:
    """Whether ``text`` is Unicode text (no lone surrogate: UTF-8 can encode it)."""
    return text.isascii() or _SURROGATE.search(text) is None


def text_problem(text: str, max_chars: int, *, lines: bool = False) -> str | None:
    """What is wrong with ``text`` as a stored value, or ``None``.

    Parameters
    ----------
    text : str
    max_chars : int
        Longest allowed.
    lines : bool, default False
        Free text (a prompt): tab, line feed and carriage return are allowed; other
        control characters never are.
    """
    if len(text) > max_chars:
        return f"is longer than {max_chars} characters ({len(text)})"
    if not is_text(text):
        return NOT_TEXT
    found = (_CONTROL_IN_LINES if lines else _CONTROL).search(text)
    if found is not None:
        return f"holds a control character (U+{ord(found.group()):04X} at {found.start()})"
    return None


def number_problem(value: Any) -> str | None:
    """What is wrong with a JSON number as a stored value, or ``None`` (not a number too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and not -_INT64 <= value < _INT64:
        return "is an integer outside the 64-bit range"
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number"
    return None


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)``, abbreviated to about ``limit`` characters (integers of any length)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 190:
        digits = int(value.bit_length() * math.log10(2)) + 1
        if value.bit_length() > 14_000:  # past int -> str's 4300-digit limit
            return f"<an integer of about {digits} digits>"
        text = str(value)
        return f"{text[:12]}...{text[-4:]} ({len(text.lstrip('-'))} digits)"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
