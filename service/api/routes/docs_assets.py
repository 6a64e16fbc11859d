"""``GET /docs/assets/redoc.standalone.js``: ReDoc as ``fastapi-offline`` ships it, less its
one request to another site.

ReDoc draws the Redocly logo beside "API docs by Redocly" in its menu, always, from
``https://cdn.redoc.ly`` (no option turns it off). The page's policy blocked it, and
Chromium then logged a policy error on every visit to ``/redoc``; this route answers the
bundle with that address replaced by an empty image written inline (:data:`NO_LOGO`), so
that the page asks nothing of another origin. Every other file of ``/docs/assets/`` is
served as it is, by the mount.
"""

from __future__ import annotations

from functools import lru_cache

from fastapi import APIRouter, Response

from service.web import DOCS_ASSETS_DIR

__all__ = ["NO_LOGO", "REDOC_LOGO", "redoc_bundle", "router"]

#: The address ReDoc loads its logo from.
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
#: What it loads instead: an SVG of no size, inline (``img-src data:`` of the page).
NO_LOGO = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='0' height='0'/%3E"

router = APIRouter(tags=["web"])


@lru_cache(maxsize=1)
def redoc_bundle() -> bytes:
    """ReDoc's standalone bundle with the logo's address replaced by :data:`NO_LOGO`.

    Raises
    ------
    RuntimeError
        When the bundle no longer holds the address (another version of ReDoc): the
        replacement would silently do nothing.
    """
    source = (DOCS_ASSETS_DIR / "redoc.standalone.js").read_text(encoding="utf-8")
    if REDOC_LOGO not in source:
        raise RuntimeError(f"redoc.standalone.js no longer loads {REDOC_LOGO}: check /redoc")
    return source.replace(REDOC_LOGO, NO_LOGO).encode("utf-8")


@router.get("/docs/assets/redoc.standalone.js", include_in_schema=False)
def redoc_script() -> Response:
    """ReDoc's bundle, loading nothing from another site (:func:`redoc_bundle`)."""
    return Response(
        redoc_bundle(),
        media_type="text/javascript; charset=utf-8",
        headers={"Cache-Control": "no-cache"},
    )
