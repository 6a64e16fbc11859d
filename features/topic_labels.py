"""Topic names a person would use, and whether a query is close to its topic at all.

A topic model describes each topic by its top words (:mod:`features.topic_words`), which
read as a list ("dinner, recipe, cook, meal"), not a name. :func:`name_topic` maps those
words onto a short curated list of names (:data:`TOPIC_NAMES`: "cooking", "programming",
"money and taxes", ...) by keyword overlap: each name's score is the summed weight of the
topic's words among the name's keywords (the k-th word weighs ``1 / sqrt(k)``),
and a name is given only when it holds at least :data:`MIN_NAME_SHARE` of the words'
weight and two of its keywords appear among the words (one when it is the first word).
A topic that no name fits is named by its first two words, "dinner and recipe".

Every query is given a topic, however far it is from all of them: a wedding toast falls
into the topic nearest it, cooking perhaps. :func:`topic_closeness` measures how close
each query is to its topic's centre (the cosine between its embedding and the topic's
centroid), and :func:`fits_topic` says whether the topic may be named for that query: it
is at least :func:`closeness_threshold` close (0.22 with MiniLM, about the 7th percentile
of the demo's training prompts; a tax question falls near 0.13), and its own words do
not name another topic alone (:func:`query_names`). Nothing here is downloaded or
fitted: the names come from the words the topic model already has, the closeness from
the embedding it already uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "CLOSENESS_BY_BACKEND",
    "MIN_CLOSENESS",
    "MIN_NAME_SHARE",
    "TOPIC_NAMES",
    "closeness_threshold",
    "fits_topic",
    "fitting_topics",
    "name_topic",
    "query_names",
    "topic_closeness",
]

#: Curated topic names, each with the words that signal it (lower case; a word of a topic
#: or query matches as written or as a singular, so "recipes" and "taxes" match).
TOPIC_NAMES: dict[str, frozenset[str]] = {
    name: frozenset(words.split())
    for name, words in {
        "programming": "code python function javascript java rust error bug script program "
        "compile debug class method variable loop array string list typescript golang api "
        "library implement exception stack runtime syntax refactor unit test git repo c++ app",
        "web development": "html css react website web frontend backend browser page server "
        "http node django flask vue angular endpoint dom",
        "computer systems": "linux docker kubernetes install command terminal shell network "
        "server windows macos ubuntu config deploy cluster container bash ssh filesystem",
        "data and machine learning": "data dataset model training neural learning regression "
        "pandas numpy accuracy feature classifier tensor pytorch gpu llm embedding",
        "databases and spreadsheets": "sql database table column query schema postgres "
        "mysql excel spreadsheet csv row sheet",
        "maths": "math maths equation solve integral probability proof calculate number "
        "algebra derivative matrix geometry compute prime theorem formula sum triangle "
        "fraction percent statistic",
        "science": "science physics chemistry biology quantum energy cell atom experiment molecule "
        "theory gravity evolution planet star light particle climate scientific",
        "creative writing": "story poem write character haiku lyric novel plot fiction rhyme "
        "verse fantasy dragon tale narrative scene chapter poetry toast speech",
        "business and email": "email business marketing customer company sale meeting client "
        "manager product strategy team startup brand proposal pitch colleague boss",
        "money and taxes": "tax money invest budget loan income finance stock saving bank "
        "mortgage salary credit debt retirement deduction",
        "health and fitness": "health workout diet exercise sleep symptom muscle weight fitness "
        "doctor pain protein run routine injury nutrition",
        "cooking": "recipe cook dinner meal ingredient bake food vegetarian kitchen dish "
        "breakfast lunch sauce oven",
        "travel": "travel trip city visit flight hotel itinerary country tour beach vacation stay "
        "destination neighborhood",
        "relationships and life": "relationship girlfriend boyfriend wedding love friend partner "
        "family marriage date parent kid advice feel",
        "language and translation": "translate translation english french spanish german "
        "grammar language word sentence meaning chinese japanese",
        "history": "history war century ancient empire king revolution historical",
        "law": "legal law contract court right lawyer policy regulation",
        "games and puzzles": "game puzzle chess riddle player play level card dice",
        "music": "music song chord guitar piano album band melody",
        "casual chat": "joke chat hello favorite fun bored weekend movie hobby talk today "
        "cheer feeling mood fact opinion overrated honest",
        "philosophy and ethics": "philosophy ethic moral meaning consciousness argument free",
        "education": "study exam student school learn teacher lesson course university",
    }.items()
}

#: Share of a topic's word weight a curated name must hold to name it.
MIN_NAME_SHARE = 0.15
#: Cosine between a query's embedding and its topic's centroid below which the topic is
#: not named for the query ("none of our topics fit closely"), for the MiniLM embeddings.
MIN_CLOSENESS = 0.22
#: The same by embedding backend: each near the 5th percentile of the demo's training
#: prompts' closeness to their own topic (MiniLM 0.25, static 0.51). TF-IDF's cosines do
#: not tell a far query (0.12-0.16) from a near one (5th percentile 0.10): nothing is
#: measured there (0), and only a query's own words (:func:`query_names`) tell.
CLOSENESS_BY_BACKEND: dict[str, float] = {
    "minilm": MIN_CLOSENESS,
    "minilm-int8": MIN_CLOSENESS,
    "minilm-onnx": MIN_CLOSENESS,
    "static": 0.5,
    "tfidf": 0.0,
}


def _forms(word: str) -> frozenset[str]:
    """The word in lower case, and as a singular where it may be a plural ("recipes",
    "taxes", "stories"): the forms that may match a keyword."""
    word = word.lower()
    forms = {word}
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])
        if word.endswith("es"):
            forms.add(word[:-2])
        if word.endswith("ies"):
            forms.add(word[:-3] + "y")
    return frozenset(forms)


_KEYS: dict[str, frozenset[str]] = {
    name: frozenset(w.lower() for w in words) for name, words in TOPIC_NAMES.items()
}


#: The names of each keyword: a query's names are those of its words' forms.
_NAMES_BY_KEY: dict[str, tuple[str, ...]] = {
    key: tuple(name for name, keys in _KEYS.items() if key in keys)
    for key in sorted(frozenset().union(*_KEYS.values()))
}


def _holds(keys: frozenset[str], word: str) -> bool:
    return not keys.isdisjoint(_forms(word))


def name_topic(words: Sequence[str]) -> str:
    """A name a person would use for a topic of these top words, best first.

    Parameters
    ----------
    words : sequence of str
        The topic's top words, best first (:attr:`features.topics.Topic.words`).

    Returns
    -------
    str
        A name of :data:`TOPIC_NAMES` where one fits (module docstring); else the first
        two words ("dinner and recipe"); "other questions" without words.

    Notes
    -----
    Memoised by the top words: a served explanation names its fit's topics at every
    request, and the names of a fit's topics never change.
    """
    return _name_of(tuple(words[:10]))


@lru_cache(maxsize=1024)
def _name_of(top: tuple[str, ...]) -> str:
    """:func:`name_topic` of a topic's first ten words."""
    if not top:
        return "other questions"
    weights = 1.0 / np.sqrt(np.arange(1, len(top) + 1))  # the first word weighs most
    total = float(weights.sum())
    best, best_score, best_hits = "", 0.0, 0
    for name, keys in _KEYS.items():
        hits = [i for i, w in enumerate(top) if _holds(keys, w)]
        score = float(weights[hits].sum()) if hits else 0.0
        if score > best_score:
            best, best_score, best_hits = name, score, len(hits)
    first_fits = best != "" and _holds(_KEYS[best], top[0])
    if best and best_score >= MIN_NAME_SHARE * total and (best_hits >= 2 or first_fits):
        return best
    return " and ".join(top[:2])


def topic_closeness(
    topic_model: Any, queries: Sequence[str], topics: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """How close each query is to its topic: the cosine of its embedding and the topic's
    centroid.

    Parameters
    ----------
    topic_model : features.topics.TopicModel
        A fitted topic model (``embedder_``, ``centroids_``).
    queries : sequence of str
        The queries.
    topics : array_like of int
        ``(len(queries),)`` each query's topic, as the profiler read it.

    Returns
    -------
    ndarray
        ``(len(queries),)`` cosines in [-1, 1]; 1 for every query where the model keeps
        no centroids (nothing to measure, so every topic is named as before).
    """
    from features.query_vectors import distinct_vectors

    texts = list(queries)
    assigned = np.asarray(topics, dtype=np.intp).reshape(-1)
    if assigned.size != len(texts):
        raise ValueError(
            f"Argument 'topics' must have one entry per query ({len(texts)}), not {assigned.size}."
        )
    centroids = getattr(topic_model, "centroids_", None)
    if not texts or centroids is None or not len(centroids):
        return np.ones(len(texts))
    vectors, inverse, _ = distinct_vectors(topic_model.embedder_, texts)
    unit = np.asarray(vectors, dtype=np.float64)[inverse]
    unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    centres = np.asarray(centroids, dtype=np.float64)[assigned]
    return np.asarray(np.einsum("ij,ij->i", unit, centres))


def query_names(query: str) -> set[str]:
    """The curated names whose keywords the query's own words hold."""
    from features.stopwords import topic_words

    forms = frozenset().union(*(_forms(w) for w in topic_words(query)))
    return {name for form in forms for name in _NAMES_BY_KEY.get(form, ())}


def closeness_threshold(topic_model: Any) -> float:
    """The closeness below which a query does not fit its topic, for the topic model's
    embedding backend (:data:`CLOSENESS_BY_BACKEND`; :data:`MIN_CLOSENESS` for any other)."""
    name = str(getattr(getattr(topic_model, "embedder_", None), "name", ""))
    return CLOSENESS_BY_BACKEND.get(name, MIN_CLOSENESS)


def fits_topic(
    queries: Sequence[str],
    closeness: npt.ArrayLike,
    names: Sequence[str],
    threshold: float = MIN_CLOSENESS,
) -> npt.NDArray[np.bool_]:
    """Whether each query fits its topic well enough to name the topic for it.

    A query fits when it is at least ``threshold`` close to its topic's centroid, and
    its own words do not point to another curated name alone: "a wedding toast for my
    friend" holds keywords of "relationships and life" and none of "cooking", so it does
    not fit a cooking topic however close its embedding falls.

    Parameters
    ----------
    queries : sequence of str
        The queries.
    closeness : array_like
        ``(len(queries),)`` :func:`topic_closeness`.
    names : sequence of str
        ``(len(queries),)`` the name of each query's topic (:func:`name_topic`).
    threshold : float
        The least closeness that fits (:func:`closeness_threshold` of the topic model).
    """
    near = np.asarray(closeness, dtype=np.float64) >= threshold
    fits = np.zeros(len(queries), dtype=bool)
    for i, (query, name) in enumerate(zip(queries, names, strict=True)):
        if near[i]:
            own = query_names(query)
            fits[i] = not own or name in own or name not in TOPIC_NAMES
    return fits


def fitting_topics(
    profiler: Any,
    texts: Sequence[Sequence[str]] | None,
    names: Sequence[str],
    n_rows: int,
) -> list[set[int] | None]:
    """Per person, the topics most of whose queries fit them (:func:`fits_topic`).

    Parameters
    ----------
    profiler : features.profile.UserProfiler
        The fitted profiler whose topics the people's profiles hold.
    texts : sequence of sequence of str, optional
        Each person's queries; None when not known.
    names : sequence of str
        The name of each topic (:func:`name_topic`), by topic id.
    n_rows : int
        The number of people.

    Returns
    -------
    list of set of int, or of None
        For each person, the ids of the topics that at least half of their queries in
        the topic fit; None for every person without ``texts`` (not measured). Every
        person's queries are read in one call of the profiler (its caches know them)
        and of the topic model's embedder.
    """
    if texts is None:
        return [None] * n_rows
    if len(texts) != n_rows:
        raise ValueError(f"Argument 'texts' must have {n_rows} entries, not {len(texts)}.")
    flat = [str(q) for queries in texts for q in queries]
    if not flat:
        return [set() for _ in range(n_rows)]
    topics, _ = profiler.topics_and_context(flat)
    topics = np.asarray(topics, dtype=np.intp)
    model = profiler.topic_model_
    closeness = topic_closeness(model, flat, topics)
    fits = fits_topic(flat, closeness, [names[t] for t in topics], closeness_threshold(model))
    fitting: list[set[int] | None] = []
    start = 0
    for queries in texts:
        rows = slice(start, start + len(queries))
        start += len(queries)
        mine, good = topics[rows], fits[rows]
        fitting.append({int(t) for t in np.unique(mine) if good[mine == t].mean() >= 0.5})
    return fitting
