"""``POST /v1/recommend``: a ranking from a few queries, sharpened by a few votes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request, status

from ranking.io.text_checks import text_problem
from service.api.budget import charge_queries, text_chars
from service.api.deps import BearerDep, EngineDep, SettingsDep, can_read_user
from service.api.schemas import RecommendIn, RecommendPublic, errors
from service.live.per_prompt import check_text, recommend_for
from service.live.recommendation import vote_prompts

router = APIRouter(prefix="/v1", tags=["recommend"])

MAX_QUERY_CHARS = 20_000


@router.post(
    "/recommend",
    response_model=RecommendPublic,
    responses=errors(400, 401, 403, 404, 413, 422, 429, 503),
    # anyone may ask; a bearer token is optional (a user's, with their user_id)
    openapi_extra={"security": [{}]},
)
def recommend(
    body: RecommendIn,
    engine: EngineDep,
    settings: SettingsDep,
    request: Request,
    bearer: BearerDep = None,
) -> dict[str, Any]:
    """Predict the ranking of a user known only by their queries (``source: predicted``);
    with their own votes, the prediction is the prior of their fit (``source: blended``).

    With a ``prompt``, the ranking is for that prompt and this person (``scope:
    prompt``); with ``user_id`` (and that user's token), their stored votes join.
    Without a credential, the text of one request and of one address is bounded
    (:mod:`service.api.budget`: 413, 429)."""
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
        problem = text_problem(query, MAX_QUERY_CHARS, lines=True)  # control characters
        if problem is not None:
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT, f"queries[{index}]: {problem}"
            )
    if not body.queries and body.user_id is None:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "queries: at least 1 query is needed, not 0 ('queries': []), unless a user_id "
            "is given with that user's token (their stored prompts then stand for queries)",
        )
    if body.votes is not None and len(body.votes) > settings.max_battles:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"votes: {len(body.votes)} votes, more than the {settings.max_battles} allowed",
        )
    if body.prompt is not None:
        check_text("prompt", body.prompt, MAX_QUERY_CHARS)
    if body.user_id is not None:
        can_read_user(engine, settings, body.user_id, body.token, bearer)
    chars = text_chars(body.queries, body.prompt, body.votes)
    charge_queries(request, settings, bearer, body.user_id, chars)
    if body.prompt is None and body.user_id is None:
        return engine.reads.recommend(body.queries, body.votes)
    stored = None
    if body.user_id is not None:
        stored = engine.history.user_battles(body.user_id)
        if not body.queries and not vote_prompts(stored):
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT,
                f"queries: none given, and user {body.user_id!r} has no stored prompt "
                "to stand for them",
            )
    return recommend_for(
        engine.versions.served(), body.queries, body.votes, prompt=body.prompt, stored=stored
    )
