"""How answers travel: static files cached by their content's version, and HEAD answered as GET is.

- A static file's URL carries a digest of its content (:func:`static_url`, what the templates call
  ``static()``): a browser may keep it a year, since another content has another URL. A URL
  without it (or with an old one) is revalidated each time, by ETag and Last-Modified.
- ``HEAD`` is answered with the headers ``GET`` would give, and no body (FastAPI's routes answer
  only the methods they are given, so the API would answer 405).
- Answers of :data:`GZIP_MINIMUM` bytes or more are gzipped for a client that takes it
  (Starlette's middleware).
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from starlette.datastructures import QueryParams
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["FOREVER", "GZIP_LEVEL", "GZIP_MINIMUM", "STATIC", "Delivery", "VersionedStatic", "static_url"]

STATIC = Path(__file__).parent / "static"
FOREVER = "public, max-age=31536000, immutable"  # a URL whose content never changes
REVALIDATE = "no-cache"  # kept, but asked again (304 when unchanged) before each use
# Smaller answers (the API's JSON, an error) fit in one TCP segment of ~1.4 kB whatever their
# encoding: compressing them saves no round trip and costs a step on every request.
GZIP_MINIMUM = 1400
# zlib's default: a page of 27 kB in 0.4 ms, 4× smaller; level 9 (Starlette's default) gains <1 %
# for 30 % more time. Answers of 128 KiB or more (Swagger's bundle) are compressed in a thread.
GZIP_LEVEL = 6


@functools.cache
def _digest(path: str) -> str:
    """The first characters of the digest of the file at ``path``: once per file and process."""
    with open(path, "rb") as f:
        return hashlib.blake2b(f.read(), digest_size=6).hexdigest()


def static_url(name: str) -> str:
    """The URL of static file ``name`` (``dpscale.css``, ``vendor/swagger-ui/swagger-ui.css``) with its version."""
    return f"/static/{name}?v={_digest(str(STATIC / name))}"


class VersionedStatic(StaticFiles):
    """Static files with a ``Cache-Control`` that fits their URL: a year for the current version, else revalidate."""

    def file_response(
        self, full_path: str | os.PathLike[str], stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        version = QueryParams(scope.get("query_string", b"")).get("v")
        current = version is not None and version == _digest(str(full_path))
        response.headers["cache-control"] = FOREVER if current else REVALIDATE
        return response


class Delivery:
    """Compression for clients that take it, and ``HEAD`` answered as ``GET`` is, without the body.

    A client that does not ask for gzip goes straight to the application, without the middleware's
    look at every answer. ``HEAD`` gets ``GET``'s status and headers, its length included.
    """

    def __init__(self, app: ASGIApp, *, minimum_size: int = GZIP_MINIMUM, compresslevel: int = GZIP_LEVEL) -> None:
        self.app = app
        self.gzip = GZipMiddleware(app, minimum_size=minimum_size, compresslevel=compresslevel)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        inner = self.gzip if _takes_gzip(scope) else self.app
        if scope["method"] != "HEAD":
            await inner(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # a streamed body: only its end is sent, empty
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await inner({**scope, "method": "GET"}, receive, headers_only)


def _takes_gzip(scope: Scope) -> bool:
    for name, value in scope["headers"]:  # noqa: SIM110 - a generator costs a request more than the look itself
        if name == b"accept-encoding" and b"gzip" in value.lower():
            return True
    return False
