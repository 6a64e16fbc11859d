"""``POST /v1/recommend``: a ranking from a few queries, sharpened by a few votes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, status

from service.api.deps import EngineDep, SettingsDep
from service.api.schemas import RecommendIn, RecommendPublic, errors

router = APIRouter(prefix="/v1", tags=["recommend"])

MAX_QUERY_CHARS = 20_000


@router.post(
    "/recommend", response_model=RecommendPublic, responses=errors(400, 404, 413, 422, 429, 503)
)
def recommend(body: RecommendIn, engine: EngineDep, settings: SettingsDep) -> dict[str, Any]:
    """Predict the ranking of a user known only by their queries (``source: predicted``);
    with their own votes, the prediction is the prior of their fit (``source: blended``)."""
    if len(body.queries) > settings.max_queries:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"queries: {len(body.queries)} queries, more than the {settings.max_queries} allowed",
        )
    for index, query in enumerate(body.queries):
        if not query.strip():
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT, f"queries[{index}]: is blank"
            )
        if len(query) > MAX_QUERY_CHARS:
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT,
                f"queries[{index}]: {len(query)} characters, more than {MAX_QUERY_CHARS}",
            )
        try:
            query.encode("utf-8")
        except UnicodeEncodeError as error:  # "\ud800" in JSON: no text to embed
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT,
                f"queries[{index}]: is not valid Unicode text (a lone surrogate, "
                f"{query[error.start]!r} at character {error.start})",
            ) from None
    if body.votes is not None and len(body.votes) > settings.max_battles:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"votes: {len(body.votes)} votes, more than the {settings.max_battles} allowed",
        )
    return engine.recommend(body.queries, body.votes)
