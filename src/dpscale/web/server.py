"""Serving the app with uvicorn: the listening socket, and how long a client may keep a connection.

uvicorn closes a connection left idle after a response (its keep-alive timeout), but not one that
never sends a whole request: a client that connects and says nothing, or sends half a request
line, holds its connection open forever. :class:`DeadlineProtocol` gives every request a deadline
from the moment the connection is made or the previous response ends; a body still arriving after
its headers gets the same time (:class:`dpscale.web.security.Guard`).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from dpscale.errors import N_, InvalidInput

__all__ = ["KEEP_ALIVE_SECONDS", "REQUEST_SECONDS", "DeadlineProtocol", "check_request_seconds", "listen", "serve"]

REQUEST_SECONDS = 10.0  # for a whole request line and headers to arrive
KEEP_ALIVE_SECONDS = 5  # an idle connection after a response


class DeadlineProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request does not arrive in time."""

    request_seconds = REQUEST_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._waiting_for_request():
            self._arm(keep=True)  # part of a request: the deadline set when it was awaited still runs
        else:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

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
