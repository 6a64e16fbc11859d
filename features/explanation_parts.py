"""What an explanation is made of: the parts :mod:`features.explanation` computes and
:mod:`features.explanation_text` says in words (docs/SPEC.md section 5's ``explanation``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ranking.types import FloatArray

__all__ = [
    "AnswerTaste",
    "Explanation",
    "ModelParts",
    "QueryParts",
    "Scope",
    "StyleTrait",
    "Taste",
    "TasteSource",
    "TopicShare",
]

#: What an explanation is for: the person on all their prompts, or one prompt.
Scope = Literal["person", "prompt"]
#: Whose taste in answers a board reads: the person's own coefficients, or everyone's
#: (where per-person taste does not predict votes better: :mod:`ranking.personal_style`).
TasteSource = Literal["person", "everyone"]


@dataclass(frozen=True)
class TopicShare:
    """A topic of the user's queries: ``share`` of theirs, ``population`` of everyone's.

    ``label`` is the topic's first top words, ``name`` what a person would call it
    (:func:`features.topic_labels.name_topic`), and ``fits`` whether most of the user's
    queries in it are close enough to it to name it (:func:`features.topic_labels.fits_topic`):
    a query far from every topic is still given the nearest one.
    """

    topic: int
    label: str
    share: float
    population: float
    name: str = ""
    fits: bool = True


@dataclass(frozen=True)
class StyleTrait:
    """A style feature where the user stands out: ``z`` training users' sds from their mean;
    ``sentence`` says it of the user in words ("you write long sentences")."""

    feature: str
    label: str
    z: float
    sentence: str = ""


@dataclass(frozen=True)
class AnswerTaste:
    """A person's taste for one style feature of answers, in Elo points per ``unit``.

    ``points`` is what the feature's ``unit`` ("per doubling of length") adds to an
    answer's odds with the person, ``lower`` and ``upper`` its interval, ``everyone``
    the aggregate's; ``distinct`` whether the person's departure from everyone's is told
    apart (its interval excludes zero), and only then does ``sentence`` say it.
    """

    feature: str
    unit: str
    points: float
    lower: float
    upper: float
    everyone: float
    distinct: bool
    sentence: str = ""


@dataclass(frozen=True)
class Taste:
    """What a person's votes say of their taste in answers.

    ``source`` is ``"person"`` where their own coefficients are used, ``"everyone"``
    where per-person taste did not predict votes better than everyone's and everyone's is
    used; ``features`` one entry per answer style feature; ``n_votes`` the votes it was
    read from; ``confidence`` the intervals' coverage.
    """

    source: TasteSource
    features: tuple[AnswerTaste, ...]
    n_votes: int
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """The ``taste`` of docs/SPEC.md section 5, JSON-ready."""
        return {
            "source": self.source,
            "features": [asdict(t) for t in self.features],
            "n_votes": self.n_votes,
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class QueryParts:
    """What one user's queries say, and how they move the prediction.

    Attributes
    ----------
    models : tuple of str
        The predictor's models, the order of the arrays.
    typical, topic, style : ndarray
        ``(n_models,)`` Elo points: the predictor's rating of someone whose queries say
        nothing, and what the user's topics and style add; they sum to the prediction.
    topics : tuple of TopicShare
    traits : tuple of StyleTrait
    n_queries : int
    """

    models: tuple[str, ...]
    typical: FloatArray
    topic: FloatArray
    style: FloatArray
    topics: tuple[TopicShare, ...]
    traits: tuple[StyleTrait, ...]
    n_queries: int

    @property
    def ratings(self) -> FloatArray:
        """The prediction from the queries alone: ``typical + topic + style``."""
        return self.typical + self.topic + self.style


@dataclass(frozen=True)
class ModelParts:
    """What moved one model from the aggregate, in Elo points.

    ``rating = aggregate + baseline + topic + style + votes``, the parts that are None
    left out (up to rounding): ``baseline``, ``topic`` and ``style`` are None where the
    ranking does not start from the prediction (a ``fitted`` board, or a model the
    predictor lacks); ``aggregate`` is None where the aggregate board does not rate the
    model, and ``baseline`` is then the predictor's whole rating of anyone.
    """

    model: str
    rating: float
    aggregate: float | None
    baseline: float | None
    topic: float | None
    style: float | None
    votes: float


@dataclass(frozen=True)
class Explanation:
    """Why this ranking: the user's topics and style traits, what moved the top models.

    ``scope`` is ``"person"`` (the person on all their prompts) or ``"prompt"`` (one
    prompt: ``topics`` is then the prompt's own topic, share 1); ``sentences`` say it all
    in plain words (:func:`features.explanation_text.explanation_sentences`); ``taste``
    is the person's taste in answers, None where the votes carry no answers.
    """

    topics: tuple[TopicShare, ...]
    style: tuple[StyleTrait, ...]
    models: tuple[ModelParts, ...]
    n_queries: int
    note: str | None = None
    scope: Scope = "person"
    sentences: tuple[str, ...] = ()
    taste: Taste | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``explanation`` of docs/SPEC.md section 5, JSON-ready."""
        return {
            "topics": [asdict(t) for t in self.topics],
            "style": [asdict(t) for t in self.style],
            "models": [asdict(m) for m in self.models],
            "n_queries": self.n_queries,
            "note": self.note,
            "scope": self.scope,
            "sentences": list(self.sentences),
            "taste": None if self.taste is None else self.taste.to_dict(),
        }
