"""What the sentence embeddings read of a query, and how queries are batched.

Shared by the MiniLM backends (:mod:`features.embeddings.minilm`,
:mod:`features.embeddings.minilm_onnx`): the word pieces read
(:data:`DEFAULT_MAX_TOKENS`), the part of a query read (:func:`select_text`), the
batches, longest first (:func:`length_batches`), and the loop that embeds them batch by
batch (:func:`embed_in_batches`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
from tqdm import tqdm

from ranking.progress import Progress, start

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_TEXT",
    "SERVING_BATCH_SIZE",
    "TEXTS",
    "embed_in_batches",
    "length_batches",
    "select_text",
]

#: Texts a batch of the PyTorch MiniLM backends when serving: a request's few queries,
#: longest first, in batches of 8 pad less than in one batch of all (20 new queries: about
#: 75 ms of CPU against 110 with the fit's 64 here); a fit's thousands, sorted by length,
#: pad little either way.
SERVING_BATCH_SIZE = 8

DEFAULT_MAX_TOKENS = 64
"""Word pieces read of each query by the MiniLM backends. On the 500 real Arena prompts
(``bench/features/topics_real.py``, ``run_real``) 64 finds a prompt's cluster mate clearly
more often than 32, at 1.5 times the cost; 128 and 256 find it no more often, and reading chosen
sentences instead of the head finds it less often. (Saved models keep the length they
were fitted with.)"""

TEXTS = ("head", "ends", "ask")
DEFAULT_TEXT = "head"
"""What the MiniLM backends read of a query (:func:`select_text`), measured in
``bench/features/topics_real.py`` (``run_real``) on real Arena prompts."""


_SENTENCE = re.compile(r"(?<=[.!?:])\s+|\n+")
_ASK = re.compile(
    r"^\W*(please\s+)?(write|explain|create|make|generate|give|tell|help|how|what|why|which|"
    r"who|can|could|would|implement|describe|list|summari[sz]e|translate|solve|find|show|"
    r"design|suggest|act|rewrite|convert|fix|provide|i need|i want|i'd like)\b",
    re.IGNORECASE,
)
_SENTENCE_WORDS = 24


def select_text(text: str, how: str = DEFAULT_TEXT) -> str:
    """The part of a query an embedding reads.

    ``"head"`` is the query itself (the backend then reads its first word pieces);
    ``"ends"`` its first and last sentences; ``"ask"`` its first sentence and its first
    and last questions or instructions ("How ...", "Write ...", "...?"), the first and
    last sentences where it has none. Sentences end at ``.``, ``!``, ``?``, ``:`` or a
    line break; each chosen one is cut at 24 words, so that a pasted page cannot fill
    the budget of word pieces. A query of one sentence is read whole.
    """
    if how not in TEXTS:
        raise ValueError(f"Argument 'text' must be one of {', '.join(TEXTS)}, not {how!r}.")
    if how == "head":
        return text
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) <= 1:
        return text
    chosen = [sentences[0], sentences[-1]]
    if how == "ask":
        asks = [s for s in sentences[1:] if s.endswith("?") or _ASK.match(s)]
        if asks:
            chosen = [sentences[0], asks[0], asks[-1]]
    parts = dict.fromkeys(" ".join(s.split()[:_SENTENCE_WORDS]) for s in chosen)
    return " ".join(parts)


def length_batches(read: Sequence[str], batch_size: int) -> list[npt.NDArray[np.intp]]:
    """Positions of the texts ``read`` in batches of ``batch_size``, longest first (ties
    by text), so that a batch's texts are of about one length and little is padded."""
    order = sorted(range(len(read)), key=lambda i: (-len(read[i]), read[i]))
    positions = np.asarray(order, dtype=np.intp)
    size = max(1, batch_size)
    return [positions[i : i + size] for i in range(0, positions.size, size)]


def embed_in_batches(
    documents: Sequence[str],
    encode: Callable[[list[str]], npt.ArrayLike],
    *,
    width: int,
    text: str,
    batch_size: int,
    verbose: bool = False,
    progress: Progress | None = None,
) -> npt.NDArray[np.float32]:
    """``(n, width)`` vectors of ``documents``: what ``encode`` gives for each batch of
    :func:`length_batches` of the text :func:`select_text` reads of them.

    ``verbose`` draws a bar on stderr; ``progress`` is told of the stage ``"embedding
    queries"``, in queries, a batch at a time.
    """
    read = [select_text(document, text) for document in documents]
    vectors = np.zeros((len(read), width), np.float32)
    batches = length_batches(read, batch_size)
    advance = start(progress, "embedding queries", len(read), "queries")
    for batch in tqdm(batches, disable=not verbose or len(batches) < 2, file=sys.stderr):
        vectors[batch] = encode([read[i] for i in batch])
        advance(batch.size)
    return vectors
