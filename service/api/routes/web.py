"""``GET /`` (the web page), ``/widget/...`` (the embeddable widget and badge), and the API
documentation pages ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc).

The app mounts their files: ``/static`` (:data:`service.web.WEB_DIR`) and ``/docs/assets``
(:data:`service.web.DOCS_ASSETS_DIR`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Response
from fastapi.responses import FileResponse

from service.api.deps import BearerDep, EngineDep, SettingsDep, TokenQuery, UserId, can_read_user
from service.api.routes.credentials import ShareId
from service.api.schemas import errors
from service.live.credentials import MAX_SHARE_ID_CHARS
from service.live.engine import Engine
from service.live.errors import NotAvailable
from service.live.writes import MAX_USER_ID_CHARS
from service.web import WEB_DIR, badge_words, render_badge

router = APIRouter(tags=["web"])

#: The colours of a card or badge: ``auto`` follows the reader's colour scheme (the card;
#: a badge, an image, is drawn light then). A value outside these is a 422 naming ``theme``.
Theme = Annotated[
    Literal["light", "dark", "auto"] | None,
    Query(description="light, dark or auto (the reader's colour scheme); light by default"),
]

#: The page and the widget load only their own scripts and styles, and talk only to us.
_PAGE_POLICY = "default-src 'self'; img-src 'self' data:; frame-ancestors 'self'"
#: The widget is meant to be framed by any site.
_WIDGET_POLICY = "default-src 'self'; img-src 'self' data:; frame-ancestors *"
#: Swagger UI, as measured in Chromium: its stylesheet draws icons from ``data:`` SVGs, and
#: that is all it needs beyond our own files (no inline script or style).
_SWAGGER_POLICY = "default-src 'self'; img-src 'self' data:; frame-ancestors 'self'"
#: ReDoc, as measured in Chromium: it injects ``<style>`` elements (styled-components) and
#: runs its search in a worker made from a ``blob:`` URL. The Redocly logo it loads from
#: cdn.redoc.ly stays blocked (it then hides the image): nothing leaves the machine.
_REDOC_POLICY = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; worker-src blob:; "
    "img-src 'self' data:; frame-ancestors 'self'"
)


def _page(name: str, policy: str) -> FileResponse:
    return FileResponse(
        WEB_DIR / name,
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": policy, "Cache-Control": "no-cache"},
    )


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    """The web page: the aggregate leaderboard beside yours."""
    return _page("index.html", _PAGE_POLICY)


@router.get("/docs", include_in_schema=False)
def swagger_ui() -> FileResponse:
    """The API documentation in Swagger UI, from this origin only."""
    return _page("docs.html", _SWAGGER_POLICY)


@router.get("/redoc", include_in_schema=False)
def redoc() -> FileResponse:
    """The API documentation in ReDoc, from this origin only."""
    return _page("redoc.html", _REDOC_POLICY)


@router.get("/widget/leaderboard", include_in_schema=False)
def widget_leaderboard(theme: Theme = None) -> FileResponse:
    """The iframe-able widget of the aggregate top models."""
    return _page("widget.html", _WIDGET_POLICY)


@router.get("/widget/shared/{share_id}", include_in_schema=False)
def widget_shared(share_id: ShareId, theme: Theme = None) -> FileResponse:
    """The iframe-able widget of one user's top models, read with their share id."""
    return _page("widget.html", _WIDGET_POLICY)


@router.get("/widget/user/{user_id}", include_in_schema=False)
def widget_user(user_id: UserId, theme: Theme = None) -> FileResponse:
    """The address of a personal widget before share ids: the card says to use one (a read
    token never goes into a page's address)."""
    return _page("widget.html", _WIDGET_POLICY)


@router.get("/widget/embed.js", include_in_schema=False)
def widget_embed_script() -> FileResponse:
    """The host page's helper beside the widget's iframe: its theme and its height."""
    return FileResponse(
        WEB_DIR / "embed.js",
        media_type="text/javascript; charset=utf-8",
        # loaded by other sites' pages, as a script: no CSP of ours applies to it there
        headers={"Cache-Control": "no-cache", "Cross-Origin-Resource-Policy": "cross-origin"},
    )


@router.get(
    "/widget/badge.svg",
    response_class=Response,
    responses={
        200: {
            "content": {"image/svg+xml": {"schema": {"type": "string"}}},
            "description": "an SVG badge",
        },
        **errors(401, 403, 404, 422, 429, 503),
    },
    # the aggregate's badge needs no credential: the bearer requirement is optional
    openapi_extra={"security": [{}]},
)
def badge(
    engine: EngineDep,
    settings: SettingsDep,
    bearer: BearerDep,
    user_id: Annotated[str | None, Query(min_length=1, max_length=MAX_USER_ID_CHARS)] = None,
    token: TokenQuery = None,
    method: Literal["bt", "elo"] = "bt",
    theme: Theme = None,
    share: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_SHARE_ID_CHARS,
            description="a share id (POST /v1/users/{user_id}/share): that user's badge",
        ),
    ] = None,
) -> Response:
    """An SVG badge: everyone's best model, or with a share id (or a user and their token)
    theirs; "best" only when the odds support it (:func:`service.web.badge_words`)."""
    if share is not None:
        if user_id is not None or token is not None:
            raise HTTPException(422, "give a share id, or a user_id and token, not both")
        engine.shared_leaderboard(share, method)  # 404 once revoked
        owner = engine.credentials.share_owner(share)
        board = _user_board(engine, owner, method) if owner is not None else {"models": []}
        personal = True
    elif user_id is None:
        board = engine.reads.leaderboard(method)
        personal = False
    else:
        can_read_user(engine, settings, user_id, token, bearer)
        board = _user_board(engine, user_id, method)
        personal = True
    label, message = badge_words(board["models"], personal=personal)
    return Response(
        render_badge(label, message, theme=theme or "light"),
        media_type="image/svg+xml",
        headers={"Cache-Control": "no-cache", "Content-Security-Policy": "default-src 'none'"},
    )


def _user_board(engine: Engine, user_id: str, method: Literal["bt", "elo"]) -> Mapping[str, Any]:
    """A user's board for their badge; 404 where they have none."""
    try:
        board: Mapping[str, Any] = engine.user_leaderboard(user_id, method)
    except NotAvailable as error:
        raise HTTPException(404, str(error)) from None
    return board
