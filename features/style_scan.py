"""The queries of :mod:`features.style` as one array of code points, and runs in it.

:class:`Corpus` holds every query between two NULs with each code point's class bits
(letter, digit, space, ...); :class:`Runs` are maximal runs of a class (words,
numbers, lines). All of :func:`features.style.style_features` is vectorised over them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from features.style_tables import (
    ALPHA,
    APOSTROPHE,
    D_ALPHA,
    EMOJI,
    MAX_CODED,
    NONLATIN,
    TICK,
    WORD,
    char_tables,
    letter_head,
    lookup_key,
)
from ranking.types import BoolArray, Int64Array

__all__ = ["Corpus", "Runs"]


class Corpus:
    """The queries as one array of code points, each query between two NULs.

    ``starts[i]`` is where query ``i`` begins and ``ends[i]`` its closing NUL; positions
    are indices into ``cp`` (and ``text``).
    """

    def __init__(self, items: list[str]) -> None:
        n = len(items)
        text = "\x00".join(items)
        if text.count("\x00") != n - 1:
            text = "\x00".join(q.replace("\x00", " ") for q in items)
        self.text = "\x00" + text + "\x00"
        self.cp = np.frombuffer(self.text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        self.lengths = np.fromiter(map(len, items), dtype=np.int64, count=n)
        self.starts = np.ones(n, dtype=np.int64)
        np.cumsum(self.lengths[:-1] + 1, out=self.starts[1:])
        self.starts[1:] += 1
        self.ends = self.starts + self.lengths
        self.n = n
        self.astral = int(self.cp.max()) > 0xFFFF
        dense = char_tables()[1]
        self.dense = dense[np.minimum(self.cp, 0xFFFF) if self.astral else self.cp]
        if self.astral:  # CJK ideographs beyond the BMP are letters
            self.dense[(self.cp >= 0x20000) & (self.cp <= 0x3FFFF)] |= D_ALPHA
        self.fences, self.in_code = self._fenced_code()

    def _fenced_code(self) -> tuple[Int64Array, BoolArray | None]:
        """Positions of the triple-backtick fences, and which characters they enclose."""
        if "```" not in self.text:
            return np.zeros(0, dtype=np.int64), None
        tick = self.cp == TICK
        opens = np.flatnonzero(tick[1:-2] & tick[2:-1] & tick[3:] & ~tick[:-3]) + 1
        doc = self.doc_of(opens)
        opening = (np.arange(opens.size) - np.searchsorted(doc, doc)) % 2 == 0
        closes = np.where(opening, -1, opens + 3)  # the end of each closing fence
        ends = np.r_[closes[1:], -1][opening]  # an opening fence's close is the next fence
        ends = np.where(ends >= 0, ends, self.ends[doc[opening]])
        delta = np.zeros(self.cp.size + 1, dtype=np.int8)
        delta[opens[opening]] = 1
        delta[ends] = -1
        return opens, np.cumsum(delta[:-1], dtype=np.int8) > 0

    def has(self, bit: int) -> BoolArray:
        """Per character: whether its one-byte summary has ``bit`` (a ``_D_*``)."""
        return (self.dense & bit) != 0

    def classes(self, positions: Int64Array) -> npt.NDArray[np.uint32]:
        """The class bits of the characters at ``positions``."""
        table = char_tables()[0]
        if not self.astral:
            return table[self.cp[positions]]
        cp = self.cp[positions]
        flags = table[np.minimum(cp, 0xFFFF)]
        flags[(cp >= 0x1F000) & (cp <= 0x1FAFF)] |= EMOJI
        flags[(cp >= 0x20000) & (cp <= 0x3FFFF)] |= ALPHA | NONLATIN | WORD
        return flags

    def doc_of(self, positions: Int64Array) -> Int64Array:
        """The query of each of ``positions`` (inside queries or on their closing NUL)."""
        return np.searchsorted(self.starts, positions, side="right") - 1

    def count_at(self, positions: Int64Array) -> Int64Array:
        """Per query: how many of ``positions`` fall in it."""
        return np.bincount(self.doc_of(positions), minlength=self.n).astype(np.int64)

    def outside_code(self, positions: Int64Array) -> Int64Array:
        """The ``positions`` that are not in fenced code."""
        return positions if self.in_code is None else positions[~self.in_code[positions]]

    def scan(self, pattern: re.Pattern[str], text: str | None = None) -> Int64Array:
        """``(k, 2)`` spans of the matches of ``pattern`` that end outside fenced code."""
        found = [m.span() for m in pattern.finditer(self.text if text is None else text)]
        spans = np.array(found, dtype=np.int64).reshape(-1, 2)
        return spans if self.in_code is None else spans[~self.in_code[spans[:, 1] - 1]]

    def after_word(self, positions: Int64Array) -> BoolArray:
        """Whether the character before each position is a word character or apostrophe."""
        before = positions - 1
        return ((self.classes(before) & WORD) != 0) | (self.cp[before] == APOSTROPHE)


@lru_cache(maxsize=1024)
def _word_key(word: str) -> int:
    """The :func:`lookup_key` of a keyword of :meth:`Runs.keywords`."""
    return int(lookup_key(letter_head(word), ord(word[0])))


class Runs:
    """The maximal runs of characters in ``mask`` (never the NULs), query by query.

    Query ``i`` holds runs ``lo[i]`` to ``hi[i] - 1``.
    """

    def __init__(self, c: Corpus, mask: BoolArray) -> None:
        self.corpus = c
        edge = np.zeros_like(mask)
        np.greater(mask[1:], mask[:-1], out=edge[1:])
        self.starts = np.flatnonzero(edge)
        np.greater(mask[:-1], mask[1:], out=edge[:-1])
        edge[-1] = False
        self.lengths = np.flatnonzero(edge) - self.starts + 1
        self.lo = np.searchsorted(self.starts, c.starts)
        self.hi = np.searchsorted(self.starts, c.ends)
        self.count = self.hi - self.lo

    def total(self, values: Int64Array) -> Int64Array:
        """Per query: the sum of ``values``, one per run."""
        cumulative = np.zeros(values.size + 1, dtype=np.int64)
        np.cumsum(values, out=cumulative[1:])
        return cumulative[self.hi] - cumulative[self.lo]

    def first(self) -> Int64Array:
        """Per query: where its first run starts, or -1."""
        j = np.minimum(self.lo, self.starts.size - 1)
        return np.where(self.count > 0, self.starts[j] if self.starts.size else -1, -1)

    def last_end(self) -> Int64Array:
        """Per query: the position of the last character of its last run, or -1."""
        j = np.maximum(self.hi - 1, 0)
        last = (self.starts[j] + self.lengths[j] - 1) if self.starts.size else j
        return np.where(self.count > 0, last, -1)

    def codes(self, which: Int64Array) -> npt.NDArray[np.uint64]:
        """Runs ``which`` (letters; -1 for none) as :func:`word_code` numbers, in any case.

        0 for none, a run longer than 12 letters, one with a letter beyond a-z, or one
        followed by a digit or underscore (not a whole word).
        """
        if self.starts.size == 0:
            return np.zeros(which.size, dtype=np.uint64)
        cp, safe = self.corpus.cp, np.maximum(which, 0)
        starts, lengths = self.starts[safe], np.where(which >= 0, self.lengths[safe], 0)
        code = np.zeros(which.size, dtype=np.uint64)
        ok = (lengths > 0) & (lengths <= MAX_CODED)
        ok &= (self.corpus.classes(starts + lengths) & WORD) == 0
        for j in range(int(lengths[ok].max(initial=0))):
            at = np.flatnonzero(ok & (lengths > j))
            letter = (cp[starts[at] + j] | 0x20).astype(np.int64) - 96
            ok[at[(letter < 1) | (letter > 26)]] = False
            code[at] |= np.clip(letter, 0, 31).astype(np.uint64) << np.uint64(5 * j)
        code[~ok] = 0
        return code

    def keywords(self, words: Sequence[str], lookup: BoolArray) -> Int64Array:
        """Start positions of ``words`` as whole words in any case, outside fenced code.

        For runs of letters. A word is lower-case ASCII, perhaps with a space or ";" after
        its first letters; ``lookup`` is :func:`word_lookup` of ``words``.
        """
        c = self.corpus
        keys = lookup_key(self.lengths, c.cp[self.starts] | 0x20)
        some = np.flatnonzero(lookup[keys])
        starts, keys = self.starts[some], keys[some]
        present = set(keys.tolist())
        hits = [np.zeros(0, dtype=np.int64)]
        for word in words:
            key = _word_key(word)
            if key not in present:  # most words start no run of these queries
                continue
            at = starts[keys == key]
            for j, char in enumerate(word[1:], 1):  # each kept match ended on a non-NUL
                code = c.cp[at + j]
                at = at[(code | 0x20 if char.isalpha() else code) == ord(char)]
                if not at.size:
                    break
            if at.size:
                hits.append(at[~c.after_word(at + len(word) + 1) & ~c.after_word(at)])
        return c.outside_code(np.concatenate(hits))
