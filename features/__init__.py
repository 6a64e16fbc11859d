"""Query features: topics, writing style, user profiles, and ratings predicted from them.

``topics`` (BERTopic with injected sub-models over the offline backends of
``embeddings``), ``style`` (per-query writing statistics), ``profile`` (one vector per
user), ``predictor`` (a new user's ratings from their queries, sharpened by their votes)
and ``regression`` (the study's regression of ratings on profiles). Every estimator
follows the scikit-learn API. The entry points are re-exported here and imported on
first use: ``import features`` loads neither scikit-learn nor PyTorch, and no embedding
network loads before a topic model is fitted or used.
"""

from __future__ import annotations

from ranking.lazy import lazy_exports

# typing is not imported at run time: it would double the cost of importing the package.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from features.prediction import Prediction
    from features.predictor import RatingPredictor
    from features.profile import UserProfiler
    from features.regression import ProfileRegressor
    from features.style import STYLE_FEATURES, StyleFeaturizer, style_features
    from features.topics import Topic, TopicModel
    from features.user_profiles import UserProfiles

__all__ = [
    "STYLE_FEATURES",
    "Prediction",
    "ProfileRegressor",
    "RatingPredictor",
    "StyleFeaturizer",
    "Topic",
    "TopicModel",
    "UserProfiler",
    "UserProfiles",
    "style_features",
]

#: The module each public name lives in, imported when the name is first asked for.
_HOMES: dict[str, str] = {
    "Prediction": "prediction",
    "RatingPredictor": "predictor",
    "UserProfiler": "profile",
    "UserProfiles": "user_profiles",
    "ProfileRegressor": "regression",
    "STYLE_FEATURES": "style",
    "StyleFeaturizer": "style",
    "style_features": "style",
    "Topic": "topics",
    "TopicModel": "topics",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
