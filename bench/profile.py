"""Where a request's time goes: ``python -m bench.profile [PATH ...]`` profiles dpscale's app in this process.

Each path is asked many times straight through the ASGI interface (no socket, no HTTP parsing:
what uvicorn costs is the same for every app the web bench compares), with cProfile on; the
routes that Starlette would run in its thread pool run inline here, so that the profile sees them.
It prints each path's time per request and the functions that cost the most, by their own time
and by their cumulated time.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from typing import Any

PATHS = (
    "/?lang=fr&devices=64&per_device_throughput=2000&efficiency=90%25",
    "/api/v1/scaling?devices=64&per_device_throughput=2000&efficiency=0.9",
    "/predict?lang=fr",
    "/api/v1/predict?devices=8&devices=64&devices=512&per_device_throughput=938&batch=256&params=1e8&intra=nvlink3",
)


def _scope(target: str) -> dict[str, Any]:
    path, _, query = target.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"accept-language", b"fr")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


def asker(app: Any, target: str) -> Callable[[], Any]:
    """A coroutine function that asks ``app`` for ``target`` once, and fails unless it answers 200."""
    scope = _scope(target)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def ask() -> None:
        status: list[int] = []

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(dict(scope), receive, send)
        if status != [200]:
            raise RuntimeError(f"{target}: {status}")

    return ask


def _inline_threads() -> None:
    """Starlette's thread pool replaced by a plain call: cProfile sees only the thread it runs in."""
    import anyio.to_thread

    async def run_sync(func: Callable[..., Any], *args: Any, **_: Any) -> Any:
        return func(*args)

    anyio.to_thread.run_sync = run_sync  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    from dpscale.web.app import create_app

    _inline_threads()
    app = create_app()
    count = 400
    for target in argv or PATHS:
        ask = asker(app, target)

        async def many(n: int, ask: Callable[[], Any] = ask) -> None:
            for _ in range(n):
                await ask()

        asyncio.run(many(50))  # warm-up: templates, caches
        start = time.perf_counter()
        asyncio.run(many(count))
        plain = (time.perf_counter() - start) / count
        profile = cProfile.Profile()
        profile.enable()
        asyncio.run(many(count))
        profile.disable()
        print(f"\n=== {target}: {plain * 1e6:.0f} us per request without the profiler")
        stats = pstats.Stats(profile).strip_dirs()
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
