"""What the service's answers leave out: files beyond the web assets, and the referrer.

:class:`WebAssets` serves a folder's web assets only: the page's folder is a Python
package, whose source (``__init__.py``) and byte code are not for the public.
:class:`NoReferrer` sends ``Referrer-Policy: no-referrer`` on every response, so that a
page or a widget opened with ``?token=`` never hands its address to another site.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["WEB_ASSET_SUFFIXES", "NoReferrer", "WebAssets"]

#: The suffixes :class:`WebAssets` serves (compared in lower case); anything else is a 404.
WEB_ASSET_SUFFIXES = frozenset(
    {".html", ".js", ".css", ".map", ".svg", ".png", ".ico", ".jpg", ".jpeg", ".gif", ".webp"}
    | {".woff", ".woff2"}
)


class WebAssets(StaticFiles):
    """:class:`~starlette.staticfiles.StaticFiles` answering 404 for what is not a web asset:
    a file whose suffix is not in :data:`WEB_ASSET_SUFFIXES` (Python source, byte code,
    a file without a suffix), as for a file that does not exist."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        if PurePosixPath(path).suffix.lower() not in WEB_ASSET_SUFFIXES:
            raise HTTPException(status_code=404)
        return await super().get_response(path, scope)


class NoReferrer:
    """Add ``Referrer-Policy: no-referrer`` to every HTTP response (unless one is set)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if not any(name.lower() == b"referrer-policy" for name, _ in headers):
                    headers.append((b"referrer-policy", b"no-referrer"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_policy)
