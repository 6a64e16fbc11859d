"""Request and response bodies, split by direction: ``...In`` arrive, ``...Public`` leave.

One module a resource, as the routers are: :mod:`.leaderboard` (the aggregate and public
boards), :mod:`.users` (a personal board), :mod:`.explanation` (why a personal ranking,
shared by users and recommend), :mod:`.recommend`, :mod:`.next_battle`, :mod:`.ingest`
(``POST /v1/battles``), :mod:`.credentials` (rotated tokens, share ids), :mod:`.admin`,
:mod:`.catalog` (models, topics, correlations, about, health) and :mod:`.errors` (the
error body and each route's ``responses=``). The routers import their bodies from here:
this package is the API's one list of them.
"""

from __future__ import annotations

from service.api.schemas.admin import (
    FlaggedVoterPublic,
    IntegrityPublic,
    ModelsIn,
    RefitPublic,
    RegisteredPublic,
    TokenPublic,
)
from service.api.schemas.catalog import (
    AboutIntegrityPublic,
    AboutPublic,
    CorrelationsPublic,
    HealthPublic,
    HistogramPublic,
    ModelCountPublic,
    ModelsPublic,
    TopicPublic,
    TopicsPublic,
)
from service.api.schemas.credentials import RevokedPublic, SharedBoardPublic, SharePublic
from service.api.schemas.errors import ERRORS, ErrorPublic, FieldErrorPublic, errors
from service.api.schemas.explanation import (
    ExplainedModelPublic,
    ExplanationPublic,
    StyleTraitPublic,
    TopicSharePublic,
)
from service.api.schemas.ingest import BattlesIn, IngestPublic, RejectedPublic
from service.api.schemas.leaderboard import (
    LeaderboardPublic,
    ModelRatingPublic,
    ProvisionalModelPublic,
    PublicBoardPublic,
    RankedModelPublic,
)
from service.api.schemas.next_battle import NextBattleIn, NextBattlePublic, PairPublic
from service.api.schemas.recommend import (
    PredictedModelPublic,
    PromptTopicPublic,
    RecommendIn,
    RecommendPublic,
)
from service.api.schemas.users import UserLeaderboardPublic

__all__ = [
    "ERRORS",
    "AboutIntegrityPublic",
    "AboutPublic",
    "BattlesIn",
    "CorrelationsPublic",
    "ErrorPublic",
    "ExplainedModelPublic",
    "ExplanationPublic",
    "FieldErrorPublic",
    "FlaggedVoterPublic",
    "HealthPublic",
    "HistogramPublic",
    "IngestPublic",
    "IntegrityPublic",
    "LeaderboardPublic",
    "ModelCountPublic",
    "ModelRatingPublic",
    "ModelsIn",
    "ModelsPublic",
    "NextBattleIn",
    "NextBattlePublic",
    "PairPublic",
    "PredictedModelPublic",
    "PromptTopicPublic",
    "ProvisionalModelPublic",
    "PublicBoardPublic",
    "RankedModelPublic",
    "RecommendIn",
    "RecommendPublic",
    "RefitPublic",
    "RegisteredPublic",
    "RejectedPublic",
    "RevokedPublic",
    "SharePublic",
    "SharedBoardPublic",
    "StyleTraitPublic",
    "TokenPublic",
    "TopicPublic",
    "TopicSharePublic",
    "TopicsPublic",
    "UserLeaderboardPublic",
    "errors",
]
