"""The constant tables behind :mod:`features.style`: word lists, patterns, character classes.

Kept apart so that :mod:`features.style` reads as the computation. Words are matched as
whole words in any case and written here in lower-case ASCII; the character-class table
covers the Basic Multilingual Plane and is built on first use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from string import ascii_lowercase

import numpy as np
import numpy.typing as npt

from ranking.types import BoolArray, Int64Array

_WH_WORDS = (
    "how what why when where which who whom whose can could is are am do does did should "
    "would will was were"
).split()
_IMPERATIVE_VERBS = (
    "write explain give create list make summarize summarise translate generate describe "
    "tell help fix implement draft rewrite plan compute solve find suggest design convert "
    "compose outline refactor review recommend calculate prove continue sketch check show "
    "compare analyze analyse build provide name define edit improve proofread correct "
    "optimize optimise debug brainstorm propose prepare develop identify evaluate"
).split()
_PLEASE_WORDS = ["please", "pls", "plz", "kindly"]  # may come before an imperative
# Matched as whole words, in any case; written in lower-case ASCII.
POLITE_WORDS = (
    "please thank thanks thankful kindly appreciate appreciated appreciation grateful"
).split() + ["could you", "would you"]
CASUAL_WORDS = (
    "pls plz pleez thx thanx ty u ur lol lmao omg gonna wanna gotta hey hi idk btw cuz tldr tl;dr"
).split()
_LATEX_COMMANDS = (
    "frac dfrac sum prod int iint oint sqrt lim infty partial nabla cdot times div pm le leq "
    "ge geq neq approx equiv alpha beta gamma delta epsilon theta lambda mu sigma pi omega log "
    "ln sin cos tan exp mathbb mathrm mathbf mathcal begin end left right binom vec hat forall "
    "exists in subset subseteq cup cap"
)

# Every scan starts with a literal, which the regular-expression engine finds quickly; left
# word boundaries are checked afterwards, on the few matches.
INLINE_CODE = re.compile(r"`[^`\n\x00]+`")  # and no backtick either side
HEADER_OR_TABLE_LINE = re.compile(r"\n[ \t]*(?:#{1,6}[ \t]|\|)")  # on text with NUL -> \n
LIST_LINE = re.compile(r"\n[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]")  # idem
BOLD = re.compile(r"\*\*[^*\n\x00]+\*\*")
HTTP = re.compile(r"https?://")
WWW = re.compile(r"www\.")  # and not after a word character, "/" or "."
LATEX = re.compile(r"\\(?:" + _LATEX_COMMANDS.replace(" ", "|") + r")(?![A-Za-z])")
DOLLAR_MATH = re.compile(r"\$[^$\s\d][^$\n\x00]*\$")

# Character classes: bits of a table over the Basic Multilingual Plane, looked up for the
# few positions that need them; a one-byte summary of it is looked up for every character.
SPACE, ALPHA, UPPER, LOWER, DIGIT, WORD, _VOWEL, _E = (1 << k for k in range(8))
NONLATIN, CODE, MATH, EMOJI, TERM, CLOSER, CJK_STOP, QUESTION = (1 << k for k in range(8, 16))
BANG, NEWLINE, NONASCII = (1 << k for k in range(16, 19))
#: The classes counted from the positions of the (usually few) characters that have one.
SPARSE = (
    UPPER | DIGIT | NONLATIN | CODE | MATH | EMOJI | TERM | QUESTION | BANG | NEWLINE
) | NONASCII
#: The bits of the one-byte summary (``SPARSE`` stands for any of those classes).
_DENSE = ((SPACE, 1), (ALPHA, 2), (_VOWEL, 4), (_E, 8), (SPARSE, 16))
D_SPACE, D_ALPHA, D_VOWEL, D_E, D_SPARSE = (bit for _, bit in _DENSE)
_TERMINATORS = ".!?\u2026\u3002\uff01\uff1f\u061f\u0964\u203c\u2047"
_BMP_EMOJI = ((0x2600, 0x27BF), (0x231A, 0x231B), (0x23E9, 0x23FA), (0x2B50, 0x2B50))
FLESCH_RANGE = (-100.0, 121.22)
TICK, APOSTROPHE = ord("`"), ord("'")
MAX_CODED = 12  # letters of a word coded in a uint64, 5 bits each


@lru_cache(maxsize=1)
def char_tables() -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8]]:
    """Class bits of every BMP code point, and their one-byte summary (built on first use)."""
    chars = [chr(cp) for cp in range(0x10000)]
    table = np.zeros(0x10000, dtype=np.uint32)

    def flag(bit: int, test: Callable[[str], bool]) -> None:
        table[np.fromiter(map(test, chars), dtype=bool, count=len(chars))] |= bit

    flag(SPACE, str.isspace)
    flag(ALPHA, str.isalpha)
    flag(UPPER, str.isupper)
    flag(LOWER, str.islower)
    flag(DIGIT, str.isdecimal)
    flag(WORD, lambda ch: ch.isalnum() or ch == "_")
    flag(MATH, lambda ch: unicodedata.category(ch) == "Sm" and ch not in "<>|~")
    flag(NONLATIN, lambda ch: ch >= "\u0370" and ch.isalpha() and "LATIN" not in _name(ch))
    table[0] |= SPACE  # the separator between queries
    table[0x80:] |= NONASCII  # U+FFFF stands for everything beyond the BMP
    for group, bit in (
        ("aeiouyAEIOUY", _VOWEL),
        ("eE", _E),
        ("{}();=<>[]", CODE),
        ("^", MATH),
        (_TERMINATORS, TERM),
        ("\"')]}\u201d\u2019\u00bb", CLOSER),
        ("\u3002\uff01\uff1f", CJK_STOP),
        ("?\uff1f\u061f", QUESTION),
        ("!", BANG),
        ("\n", NEWLINE),
    ):
        table[[ord(ch) for ch in group]] |= bit
    for lo, hi in _BMP_EMOJI:
        table[lo : hi + 1] |= EMOJI
    dense = np.zeros(table.size, dtype=np.uint8)
    for bits, bit in _DENSE:
        dense[(table & bits) != 0] |= bit
    return table, dense


def _name(char: str) -> str:
    return unicodedata.name(char, "")


def word_code(word: str) -> int:
    """A lower-case a-z word of at most 12 letters as a number.

    See :meth:`features.style_scan.Runs.codes`.
    """
    return sum((ord(char) - 96) << (5 * j) for j, char in enumerate(word))


def _codes(words: Sequence[str]) -> npt.NDArray[np.uint64]:
    return np.array(sorted({word_code(word) for word in words}), dtype=np.uint64)


def letter_head(word: str) -> int:
    """The number of letters ``word`` starts with."""
    return len(word) - len(word.lstrip(ascii_lowercase))


def lookup_key(head: npt.ArrayLike, initial: npt.ArrayLike) -> Int64Array:
    """Index of (length of a run of letters, its lower-cased first letter) in a lookup."""
    return (np.minimum(head, 31) << 7) | np.minimum(initial, 127)


def word_lookup(words: Sequence[str]) -> BoolArray:
    """Which :func:`lookup_key` can start one of ``words``."""
    table = np.zeros(32 << 7, dtype=bool)
    table[[lookup_key(letter_head(word), ord(word[0])) for word in words]] = True
    return table


WH_CODES = _codes(_WH_WORDS)
IMPERATIVE_CODES = _codes(_IMPERATIVE_VERBS)
PLEASE_CODES = _codes(_PLEASE_WORDS)
POLITE_LOOKUP = word_lookup(POLITE_WORDS)
CASUAL_LOOKUP = word_lookup(CASUAL_WORDS)

# Requests about the answer's form: how long, and how structured. Matched like the polite
# words: whole words or phrases, any case; "no markdown" asks for plain text.
BREVITY_WORDS = [
    "keep it short", "keep it brief", "keep it simple", "be brief", "be concise", "briefly",
    "concise", "concisely", "in one sentence", "in a few words", "in a few sentences",
    "short answer", "tldr", "tl;dr", "just the answer", "no explanation",
]  # fmt: skip
DETAIL_WORDS = [
    "in detail", "in great detail", "in more detail", "in full detail", "detailed", "thorough",
    "thoroughly", "in depth", "in-depth", "comprehensive", "step by step", "step-by-step",
    "elaborate", "the more detail",
]  # fmt: skip
STRUCTURE_WORDS = [
    "bullet points", "bullet point", "bullet list", "bulleted list", "bullets", "in a table",
    "as a table", "into a table", "tabular", "numbered list", "use markdown", "in markdown",
    "with headings", "with headers", "as a list",
]  # fmt: skip
PLAIN_WORDS = [
    "no markdown", "plain text", "without markdown", "without formatting", "no bullet points",
    "no bullets", "no lists", "no formatting", "no headers", "no headings",
]  # fmt: skip
REQUESTS = {
    "brevity_request": (BREVITY_WORDS, word_lookup(BREVITY_WORDS)),
    "detail_request": (DETAIL_WORDS, word_lookup(DETAIL_WORDS)),
    "structure_request": (STRUCTURE_WORDS, word_lookup(STRUCTURE_WORDS)),
    "plain_request": (PLAIN_WORDS, word_lookup(PLAIN_WORDS)),
}
