"""The simulated world's fixed tables and its models (see :mod:`data.simulate`).

:data:`TOPIC_WORLD` gives each topic of :data:`data.prompts.TOPICS` its population share,
position on the technical <-> creative axis, difficulty and style modifier;
:func:`model_names` names the models; :func:`draw_models` draws their quality, per-topic
strengths, style traits and popularity from the knobs of
:class:`data.truth.SimulationParams`.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.special import ndtri

from data.truth import SimulationParams

__all__ = ["MODEL_NAMES", "TOPIC_WORLD", "draw_models", "model_names"]

_FloatArray = npt.NDArray[np.float64]

# topic: (population share, technical axis, difficulty, style modifier per STYLE_TRAITS)
TOPIC_WORLD: dict[str, tuple[float, float, float, tuple[float, float, float]]] = {
    "coding": (0.20, 1.0, 0.5, (0.0, 0.0, 0.6)),
    "math": (0.09, 0.9, 0.8, (0.1, 0.0, 0.3)),
    "creative_writing": (0.13, -1.0, -0.2, (0.3, -0.2, -0.4)),
    "business": (0.12, -0.3, -0.3, (0.0, 0.6, 0.2)),
    "science": (0.11, 0.5, 0.2, (0.2, 0.2, 0.1)),
    "health": (0.08, 0.1, 0.0, (0.1, 0.2, 0.0)),
    "travel_food": (0.11, -0.6, -0.6, (0.0, -0.2, 0.2)),
    "chat": (0.16, -0.8, -0.8, (-0.6, -0.6, -0.6)),
}
MODEL_NAMES = (
    "helios-2-ultra", "nimbus-pro-1.5", "orca-70b-chat", "quill-3-large", "cobalt-coder-34b",
    "lyra-mini", "atlas-instruct-13b", "vesper-8x7b", "kestrel-2-flash", "sage-1.2",
    "tempo-7b-chat", "meridian-large-2", "pico-3b", "zephyrine-9b", "solace-v4",
    "ember-mini-0.9", "basalt-40b", "marlin-2-turbo", "corvid-33b", "aster-4-mini",
)  # fmt: skip


def model_names(n: int) -> list[str]:
    """The first ``n`` names of :data:`MODEL_NAMES`, suffixed ``-r2``, ``-r3`` ... past it."""
    pool = len(MODEL_NAMES)
    return [MODEL_NAMES[i % pool] + ("" if i < pool else f"-r{i // pool + 1}") for i in range(n)]


def draw_models(
    gen: np.random.Generator,
    p: SimulationParams,
    n_models: int,
    technical: _FloatArray,
    share: _FloatArray,
) -> tuple[_FloatArray, _FloatArray, _FloatArray, _FloatArray]:
    """Draw the models: ``(quality (k,), strength (k, T), traits (k, 3), popularity (k,))``.

    ``technical`` and ``share`` are the topics' axis positions and population shares
    (summing to 1). Quality is stratified and the realised spreads are pinned to the
    parameters, so that the heterogeneity of a 15-model world depends on the knobs rather
    than on the draw; popularity is correlated with quality.
    """
    n_topics = len(share)
    strata = (gen.permutation(n_models) + gen.random(n_models)) / n_models
    quality = p.quality_sd * ndtri(np.clip(strata, 1e-12, 1 - 1e-12))
    axis = gen.normal(size=(n_models, 1)) * technical
    strength = p.topic_sd * (
        math.sqrt(p.topic_factor) * axis
        + math.sqrt(1 - p.topic_factor) * gen.normal(size=(n_models, n_topics))
    )
    strength -= (strength @ share)[:, None]
    strength *= p.topic_sd / max(float(np.sqrt((strength**2 @ share).mean())), 1e-12)
    trait_cov = np.array([[1.0, 0.2, 0.5], [0.2, 1.0, 0.3], [0.5, 0.3, 1.0]])
    traits = gen.normal(size=(n_models, 3)) @ np.linalg.cholesky(trait_cov).T
    traits = (traits - traits.mean(axis=0)) / np.maximum(traits.std(axis=0), 1e-12)
    z_quality = quality / max(float(quality.std()), 1e-12)
    log_pop = p.popularity_sd * (
        p.popularity_quality * z_quality
        + math.sqrt(1 - p.popularity_quality**2) * gen.normal(size=n_models)
    )
    popularity = np.exp(log_pop - log_pop.max())
    popularity /= popularity.sum()
    return quality, strength, traits, popularity
