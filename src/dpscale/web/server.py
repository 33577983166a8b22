"""Serving the app with uvicorn: the listening socket, and how long a client may keep a connection.

uvicorn closes a connection left idle after a response (its keep-alive timeout), but not one that
never sends a whole request: a client that connects and says nothing, or sends half a request
line, holds its connection open forever. :class:`DeadlineProtocol` gives every request a deadline
from the moment the connection is made or the previous response ends; a body still arriving after
its headers gets the same time (:class:`dpscale.web.security.Guard`).

**Lingering close.** The guard answers some requests before their body has arrived (a 413 for a
body announced too large or past its limit, a 408 for one too slow), with ``Connection: close``.
uvicorn then closes the socket at once, while the client is still sending; the kernel answers the
data that keeps coming, and the unread data it drops, with a reset, and a client that reads only
once it has sent everything (Python's urllib, most scripts) loses the answer it was sent. So, as
nginx does, a connection whose answer is complete while its request's body is not is not closed
but half-closed: the answer goes out followed by end-of-stream (``write_eof``), and whatever the
client still sends is read and thrown away, never parsed nor kept, until the client closes its
end, or :data:`LINGER_BYTES` have come, or the request deadline (``request_seconds``) has passed
again, whichever is first; then the connection is closed. This is done by handing uvicorn a
transport whose ``close`` lingers first (:class:`_LingeringTransport`), since uvicorn closes the
connection itself right after writing such an answer; a second ``close`` (the server shutting
down) closes at once. A lingering connection costs a socket and a timer, and one read per piece
that arrives, on the event loop: it holds up no other request.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any, cast

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from dpscale.errors import N_, InvalidInput

__all__ = [
    "KEEP_ALIVE_SECONDS",
    "LINGER_BYTES",
    "REQUEST_SECONDS",
    "DeadlineProtocol",
    "check_request_seconds",
    "listen",
    "serve",
]

REQUEST_SECONDS = 10.0  # for a whole request line and headers to arrive
KEEP_ALIVE_SECONDS = 5  # an idle connection after a response
LINGER_BYTES = 128 << 20  # of a body answered before it arrived, read and thrown away: twice the largest upload


class DeadlineProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request does not arrive in time.

    A connection answered before its request's body has arrived lingers before it closes (see the
    module's text).
    """

    request_seconds = REQUEST_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._socket: asyncio.Transport = None  # type: ignore[assignment]  # the transport itself
        self._lingering: asyncio.TimerHandle | None = None  # closes the connection at the end of its lingering
        self._discarded = 0  # bytes read and thrown away while lingering

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._socket = transport
        super().connection_made(cast(asyncio.Transport, _LingeringTransport(transport, self)))
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._lingering is not None:  # the rest of a body already answered: thrown away
            self._discarded += len(data)
            if self._discarded > LINGER_BYTES:
                self._socket.close()
            return
        super().data_received(data)
        if self._waiting_for_request():
            self._arm(keep=True)  # part of a request: the deadline set when it was awaited still runs
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._lingering is None:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._lingering is not None:
            self._lingering.cancel()
        super().connection_lost(exc)

    def close_connection(self) -> None:
        """Close the connection, lingering first if the client is still sending a body already answered."""
        answered_early = (
            self.cycle is not None and self.cycle.response_complete and self.conn.their_state is h11.SEND_BODY
        )
        if self._lingering is not None or not answered_early or self._socket.is_closing():
            self._socket.close()
            return
        self._disarm()
        self._lingering = self.loop.call_later(self.request_seconds, self._socket.close)
        if self._socket.can_write_eof():
            self._socket.write_eof()  # once the answer is written: the client reads it, then end-of-stream
        self._socket.resume_reading()  # it may have been paused while the body waited to be read

    def is_lingering(self) -> bool:
        return self._lingering is not None

    def _waiting_for_request(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self, *, keep: bool = False) -> None:
        if keep and self._deadline is not None:
            return
        self._disarm()
        self._deadline = self.loop.call_later(self.request_seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self._waiting_for_request() and not self.transport.is_closing():
            self.transport.close()


class _LingeringTransport:
    """The transport as uvicorn sees it: its ``close`` is the protocol's, which may linger first."""

    def __init__(self, transport: asyncio.Transport, protocol: DeadlineProtocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def close(self) -> None:
        self._protocol.close_connection()

    def is_closing(self) -> bool:  # a lingering connection takes no more requests
        return self._protocol.is_lingering() or self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def check_request_seconds(seconds: float) -> float:
    """The time a client has to send a request: from 0.1 s to an hour."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0.1 <= seconds <= 3600:
        raise InvalidInput("request_timeout", seconds, "a number of seconds from 0.1 to 3600")
    return float(seconds)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, or InvalidInput saying why not (port taken, no such address)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidInput("port", port, "a port number from 0 to 65535 (0: any free port)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):
        raise InvalidInput("host", host, "an address of this machine, such as 127.0.0.1 or ::1") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)  # clients queue from now on, before the server has started
    except OSError as exc:
        sock.close()
        raise InvalidInput(
            "port", port, N_("a port free on %(host)s (%(reason)s)"), params={"host": host, "reason": exc.strerror}
        ) from None
    return sock


def serve(sock: socket.socket, *, request_seconds: float = REQUEST_SECONDS) -> None:
    """Serve the web app on ``sock`` until interrupted."""
    from dpscale.web.app import create_app

    seconds = check_request_seconds(request_seconds)
    protocol = type("Protocol", (DeadlineProtocol,), {"request_seconds": seconds})
    config = uvicorn.Config(
        create_app(body_seconds=seconds),
        http=protocol,
        log_level="warning",
        server_header=False,  # say nothing of what runs behind
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        limit_concurrency=1000,  # past this many connections, a 503 rather than memory running out
    )
    uvicorn.Server(config).run(sockets=[sock])
