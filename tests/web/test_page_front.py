"""A page's GET is reached by its path in front of FastAPI's layers (app.Pages), and answers as it would through them:
the same page, gzip and HEAD, the security headers, a 500 page for an error and the handlers for the others."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dpscale.errors import InvalidInput
from dpscale.web.app import create_app
from dpscale.web.forms import CALCULATORS
from dpscale.web.pages import PageApp

PAGES = [calc.path for calc in CALCULATORS.values()] + [f"/fragment/{name}" for name in CALCULATORS]
ASKED = [
    "/?lang=fr&devices=64&per_device_throughput=2000&efficiency=90%25",
    "/?lang=en&devices=0",  # an error beside its field
    "/batch?lang=en",
    "/fragment/scaling?lang=en&devices=128",
    "/predict?lang=fr",
    "/fit",  # the language from Accept-Language
]


def _routed(app: FastAPI) -> list[str]:
    """The paths the application's router is asked from now on."""
    seen: list[str] = []
    inner = app.router.middleware_stack

    async def spy(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(scope["path"])
        await inner(scope, receive, send)

    app.router.middleware_stack = spy  # type: ignore[method-assign]
    return seen


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient, TestClient]]:
    """The application as it is made, and one whose pages go through FastAPI's layers and its router."""
    through = create_app()
    through.pages = {}  # type: ignore[attr-defined]
    with TestClient(create_app()) as front, TestClient(through) as routed:
        yield front, routed


def test_every_page_and_fragment_is_in_front_and_nothing_else() -> None:
    app = create_app()
    assert sorted(app.pages) == sorted(PAGES)  # type: ignore[attr-defined]
    assert all(isinstance(page, PageApp) for page in app.pages.values())  # type: ignore[attr-defined]


def test_a_page_is_not_routed_but_the_api_a_post_and_a_root_path_are() -> None:
    app = create_app()
    seen = _routed(app)
    with TestClient(app) as client:
        assert client.get("/?lang=en").status_code == 200
        assert client.head("/plan?lang=fr").status_code == 200
        assert client.get("/fragment/batch?lang=en").status_code == 200
        assert seen == []
        assert client.get("/api/v1/scaling?devices=8&per_device_throughput=10&efficiency=0.5").status_code == 200
        assert client.post("/fragment/scaling", data={"devices": "8"}).status_code == 200
        assert client.get("/batch/").status_code == 200  # not a page's path: the router redirects it to one
    # Under a root path the router reads the path without it: /fragment/batch under /fragment is the batch page.
    with TestClient(app, root_path="/fragment") as client:
        answer = client.get("/fragment/batch?lang=en")
        assert answer.status_code == 200
        assert answer.text.startswith("<!doctype html>")  # not the fragment
    assert seen == ["/api/v1/scaling", "/fragment/scaling", "/batch/", "/fragment/batch"]


def _same(a: Any, b: Any) -> None:
    assert a.status_code == b.status_code
    headers = {key: value for key, value in a.headers.items() if key != "date"}
    assert headers == {key: value for key, value in b.headers.items() if key != "date"}
    assert a.content == b.content


@pytest.mark.parametrize("asked", ASKED)
def test_a_page_in_front_is_the_page_through_the_router(clients: tuple[TestClient, TestClient], asked: str) -> None:
    front, routed = clients
    for headers in ({"accept-language": "fr"}, {"accept-encoding": "gzip"}):
        _same(front.get(asked, headers=headers), routed.get(asked, headers=headers))
    _same(front.head(asked), routed.head(asked))
    assert front.head(asked).content == b""
    assert front.get(asked, headers={"accept-encoding": "gzip"}).headers["content-encoding"] == "gzip"


@pytest.mark.parametrize("error", [RuntimeError("broken"), InvalidInput("devices", 0, "a count")])
def test_an_error_in_a_page_meets_the_applications_handlers(
    clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def fails(*args: Any) -> Any:
        raise error

    for client in clients:
        for route in client.app.router.routes:  # type: ignore[attr-defined]
            if isinstance(getattr(route, "endpoint", None), PageApp) and route.path in ("/batch", "/fragment/batch"):
                monkeypatch.setattr(route.endpoint, "render", fails)
    quiet = [TestClient(client.app, raise_server_exceptions=False) for client in clients]
    for path in ("/batch?lang=en", "/fragment/batch"):
        answers = [client.get(path) for client in quiet]
        _same(*answers)
        assert answers[0].status_code == (500 if isinstance(error, RuntimeError) else 422)
        assert "frame-ancestors 'none'" in answers[0].headers["content-security-policy"]


def test_a_middleware_added_to_the_application_meets_the_pages_too() -> None:
    app = create_app()

    class Stamp:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            async def stamped(message: Any) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message["headers"], (b"x-stamp", b"1")]
                await send(message)

            await self.inner(scope, receive, stamped)

    app.add_middleware(Stamp)
    seen = _routed(app)
    with TestClient(app) as client:
        for path in ("/?lang=en", "/fragment/batch", "/api/v1/scaling?devices=8&per_device_throughput=10&efficiency=1"):
            assert client.get(path).headers["x-stamp"] == "1", path
    assert seen == ["/api/v1/scaling"]


def test_a_request_that_fastapis_telemetry_observes_is_routed() -> None:
    """Its router names a span's route: a page observed goes through it (the scope key is FastAPI's own)."""
    app = create_app()
    seen = _routed(app)
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/batch",
        "raw_path": b"/batch",
        "query_string": b"lang=en",
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 1),
    }
    stack = app.build_middleware_stack()

    async def both() -> None:
        for telemetry in (None, object()):
            await stack({**scope, "app": app, "fastapi.telemetry": telemetry}, receive, send)

    # A loop of its own, in a thread of its own: whatever loop the suite may leave running here is not ours.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, both()).result()
    assert seen == ["/batch"]
    assert [m["status"] for m in sent if m["type"] == "http.response.start"] == [200, 200]


@pytest.mark.parametrize("path", PAGES)
def test_a_page_that_computes_is_rendered_off_the_event_loop(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """A few multiplications (the scaling, the batch) are answered on the event loop; any other page is rendered in
    the thread pool, so that it holds up no other request."""
    app = create_app()
    page = app.pages[path]  # type: ignore[attr-defined]
    on_the_loop: list[bool] = []
    render = page.render

    def watched(*args: Any) -> Any:
        try:
            asyncio.get_running_loop()
            on_the_loop.append(True)
        except RuntimeError:  # a thread of the pool runs no loop
            on_the_loop.append(False)
        return render(*args)

    monkeypatch.setattr(page, "render", watched)
    with TestClient(app) as client:
        assert client.get(path, params={"lang": "en"}).status_code == 200
    cheap = path in ("/", "/batch", "/fragment/scaling", "/fragment/batch")
    assert on_the_loop == [cheap]
