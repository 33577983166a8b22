"""``dpscale serve``: the web calculator on this machine."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from dpscale.errors import MissingExtra

__all__ = ["register", "serve"]


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    request_timeout: Annotated[
        float, typer.Option("--request-timeout", help="Seconds a client has to send a whole request.")
    ] = 10.0,
) -> None:
    """Start the web calculator (French and English pages, JSON API at /api/v1, docs at /docs)."""
    try:
        from dpscale.web import server
    except ImportError as exc:
        raise MissingExtra("dpscale serve", "web") from exc
    server.check_request_seconds(request_timeout)
    sock = server.listen(host, port)
    bound = sock.getsockname()[1]
    print(f"dpscale: serving on http://{host}:{bound}/ (Ctrl-C to stop)", file=sys.stderr)
    server.serve(sock, request_seconds=request_timeout)


def register(app: typer.Typer) -> None:
    """Add ``dpscale serve`` to ``app``."""
    app.command()(serve)
