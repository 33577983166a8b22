"""What every HTTP exchange goes through: the limits on what one request may send, and the headers.

The guard wraps the whole application, error pages included (a 500 carries the same headers as a
200). It refuses, before the application sees them:

- a query string over :data:`MAX_QUERY` characters (414),
- a body over :data:`MAX_BODY` bytes (413), whether announced by ``content-length`` or sent in
  chunks; a body is read whole, up to the limit, before the application runs,
- a body that does not arrive within :data:`BODY_SECONDS` (408; ``dpscale serve --request-timeout``
  sets it), so that a client trickling bytes holds no request open for long.

Trace files sent to be explained (a POST to one of :data:`UPLOADS`) are the one exception: they
may reach :data:`MAX_UPLOAD` bytes, so they are not held whole but handed to the route as they
come (which spools them to disk); past the limit, or when the next piece takes longer than
:data:`BODY_SECONDS` or the whole longer than :data:`UPLOAD_SECONDS`, the route is cut off and
the guard answers 413 or 408 in its place.

Every refusal is JSON of the API's error shape, ``{"errors": [{"field", "message"}]}``, except
that a browser asking for a page (``Accept: text/html``) is told why in a page in its language,
with the limit, rather than shown JSON. Every refusal ends the connection (``Connection: close``);
one sent while the client is still sending its body is not lost to a reset, as the server reads
away the rest for a bounded time and size before it closes (:mod:`dpscale.web.server`).
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "API_CSP",
    "BODY_SECONDS",
    "CSP",
    "MAX_BODY",
    "MAX_QUERY",
    "MAX_SIZES",
    "MAX_UPLOAD",
    "UPLOADS",
    "UPLOAD_SECONDS",
    "Guard",
    "body_limit",
    "refusal",
]

MAX_QUERY = 2048  # characters of a query string
MAX_BODY = 1 << 20  # bytes of a request body: 10 000 measured points are ~0.5 MB of JSON
BODY_SECONDS = 10.0  # for a whole body to arrive once its headers have
MAX_SIZES = 64  # device counts one prediction (page, chart or API call) may ask for
MAX_UPLOAD = 64 << 20  # bytes of trace files posted to be explained: a few ranks' gzipped traces
UPLOAD_SECONDS = 120.0  # for a whole upload to arrive (64 MiB at about 4 Mbit/s)
UPLOADS = frozenset({"/explain", "/api/v1/explain"})  # where a POST's body is an upload of traces
_UNREADABLE = 1 << 62  # a content-length that is not a number: refused as too large, its size unsaid

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
# The API's answers are data that no browser renders as a document: nothing may load or frame them
# (OWASP's REST Security Cheat Sheet gives this policy for APIs).
API_CSP = "default-src 'none'; frame-ancestors 'none'"
API = "/api/"  # where the API's answers are


def _headers(csp: str, *, document: bool) -> list[tuple[bytes, bytes]]:
    """The security headers of an answer; ``document``: a page, which a browser renders, follows links from and may
    be asked to frame. An API's answer has neither a Referrer-Policy (JSON has no links to follow: OWASP's REST
    cheat sheet lists the header among those that serve HTML) nor an X-Frame-Options: its CSP says
    ``frame-ancestors 'none'``, which obsoletes that header (CSP Level 2: a browser that has both enforces
    frame-ancestors and ignores X-Frame-Options), and JSON shows nothing to click through. A page keeps it, for
    browsers older than CSP Level 2. Each header costs every answer: h11 checks it."""
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-content-type-options", b"nosniff"),
        *([(b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY")] if document else []),
    ]


HEADERS, API_HEADERS = _headers(CSP, document=True), _headers(API_CSP, document=False)


def refusal(status: int, field: str, message: str) -> tuple[int, bytes]:
    """A status and the JSON body that says why, in the API's error shape."""
    return status, json.dumps({"errors": [{"field": field, "message": message}]}).encode()


def _too_large(limit: int) -> tuple[int, bytes]:
    return refusal(413, "body", f"request body too large: at most {limit} bytes ({limit >> 20} MiB)")


TOO_LONG_QUERY = refusal(414, "query", f"query string too long: at most {MAX_QUERY} characters")
TOO_LARGE_BODY = _too_large(MAX_BODY)


def body_limit(scope: Scope) -> int:
    """How many bytes the body of this request may hold: :data:`MAX_UPLOAD` for an upload, else :data:`MAX_BODY`."""
    return MAX_UPLOAD if _upload(scope) else MAX_BODY


def _upload(scope: Scope) -> bool:
    return scope.get("method") == "POST" and scope.get("path") in UPLOADS


class Guard:
    """Limits on each request and the security headers on each response (see the module's text)."""

    def __init__(self, app: ASGIApp, *, body_seconds: float = BODY_SECONDS) -> None:
        self.app = app
        self.body_seconds = body_seconds
        self.too_slow = refusal(408, "body", f"request body not received within {body_seconds:g} s")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        headers = API_HEADERS if scope["path"].startswith(API) else HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *headers]
            await send(message)

        query_length = len(scope.get("query_string", b""))
        if query_length > MAX_QUERY:
            await _answer(send_with_headers, TOO_LONG_QUERY, scope, query_length)
            return
        length, encoding = _body_headers(scope)
        upload = _upload(scope)
        if length is None and encoding is None and not upload:  # no body (a GET): nothing more to bound
            await self.app(scope, receive, send_with_headers)
            return
        limit = MAX_UPLOAD if upload else MAX_BODY
        declared = None if length is None else _length(length)
        if declared is not None and declared > limit:
            size = None if declared == _UNREADABLE else declared
            await _answer(send_with_headers, _too_large(limit), scope, size, limit)
            return
        if upload:
            await self._stream(scope, receive, send_with_headers, limit)
            return
        if declared or b"chunked" in (encoding or b"").lower():
            try:
                async with asyncio.timeout(self.body_seconds):
                    body = await _read_body(receive)
            except TimeoutError:
                await _answer(send_with_headers, self.too_slow)
                return
            except _Gone:  # nobody to answer
                return
            if body is None:
                await _answer(send_with_headers, TOO_LARGE_BODY, scope, None)
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send_with_headers)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """Run the route on a body passed on as it arrives, cut off past ``limit`` bytes or too slow.

        The route then sees the client as gone (``http.disconnect``); whatever it answers is dropped
        and the guard answers 413 or 408 instead.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + UPLOAD_SECONDS
        received = 0
        whole = False
        refused: tuple[int, bytes] | None = None
        started = False
        gone = False  # the client left: nobody to answer, nothing to report

        async def counted() -> Message:
            nonlocal received, whole, refused, gone
            if whole or refused is not None:
                return await receive()  # after the body: a disconnect, when it comes
            try:
                async with asyncio.timeout_at(min(loop.time() + self.body_seconds, deadline)):
                    message = await receive()
            except TimeoutError:
                waited = self.body_seconds if loop.time() < deadline else UPLOAD_SECONDS
                refused = refusal(408, "body", f"request body not received within {waited:g} s")
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = _too_large(limit)
                    return {"type": "http.disconnect"}
                whole = not message.get("more_body", False)
            else:
                gone = True
            return message

        async def answer(message: Message) -> None:
            nonlocal started
            if refused is None or started:
                started = started or message["type"] == "http.response.start"
                await send(message)

        try:
            await self.app(scope, counted, answer)
        except Exception:
            if refused is None and not gone:
                raise
        if refused is not None and not started:
            await _answer(send, refused, scope, None, limit)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value)
    return None


def _body_headers(scope: Scope) -> tuple[bytes | None, bytes | None]:
    """The request's ``content-length`` and ``transfer-encoding`` (the first of each), in one look at its headers."""
    length = encoding = None
    for key, value in scope.get("headers", ()):
        if key == b"content-length" and length is None:
            length = bytes(value)
        elif key == b"transfer-encoding" and encoding is None:
            encoding = bytes(value)
    return length, encoding


def _length(value: bytes) -> int:
    """A ``content-length``'s number of bytes; :data:`_UNREADABLE` where it is not a number."""
    text = value.strip()
    return int(text) if text.isdigit() and len(text) < 20 else _UNREADABLE


async def _read_body(receive: Receive) -> bytes | None:
    """The whole body, or None as soon as it passes :data:`MAX_BODY`."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


class _Gone(Exception):
    """The client went away before its body was whole."""


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()  # what comes after the body: a disconnect
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _answer(
    send: Send, answer: tuple[int, bytes], scope: Scope | None = None, size: int | None = None, limit: int = MAX_BODY
) -> None:
    status, body = answer
    kind = b"application/json"
    if scope is not None and status in (413, 414) and b"text/html" in (_header(scope, b"accept") or b""):
        from dpscale.web.templating import refusal_page  # a browser: a page that says why, in its language

        query = parse_qs(scope.get("query_string", b"")[:MAX_QUERY].decode("latin-1"))
        language = (_header(scope, b"accept-language") or b"").decode("latin-1")
        body = refusal_page(
            status,
            query.get("lang", [None])[0],
            language,
            size,
            max_body=limit,
            max_query=MAX_QUERY,
            upload=_upload(scope),
        )
        kind = b"text/html; charset=utf-8"
    # The connection ends after a refusal, once what the client is still sending has been read away.
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
