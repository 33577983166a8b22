"""The web calculator (FastAPI + Jinja2): pages in French and English and a JSON API.

Thin by design: read the query string, call the core, render. Inputs live in the URL, so every
result can be shared; the page works without JavaScript (a GET form) and, with it, updates as
the user types by fetching the same results fragment the server renders.

This module wires the parts: the guard (security.py) around everything, the API (api.py), the
pages (pages.py), their charts and exports (chart_routes.py), the page and API that explain trace
files (explain_page.py; its uploads run as jobs, explain_jobs.py), the static files and how answers
travel (delivery.py: gzip, HEAD, caching), and one error shape, ``{"errors": [{"field", "message"}]}``.
Nothing is built at import: :func:`create_app` makes an application (``dpscale serve`` calls it)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from dpscale._version import __version__
from dpscale.errors import InvalidInput, show_value
from dpscale.web.api import api_router
from dpscale.web.chart_routes import chart_router
from dpscale.web.delivery import STATIC, Delivery, VersionedStatic
from dpscale.web.explain_page import explain_router
from dpscale.web.pages import PageApp, page_router
from dpscale.web.security import BODY_SECONDS, Guard
from dpscale.web.templating import missing_page

__all__ = ["GuardedApp", "Pages", "create_app"]


class GuardedApp(FastAPI):
    """FastAPI with :class:`~dpscale.web.security.Guard` outside everything, the 500 page included, and the pages
    in front of FastAPI's own layers (:class:`Pages`)."""

    body_seconds = BODY_SECONDS
    pages: Mapping[str, ASGIApp] = {}  # each page's GET by its path (create_app gives them)

    def build_middleware_stack(self) -> ASGIApp:
        pages = Pages(self.pages, self._around_a_page, super().build_middleware_stack())
        return Guard(pages, body_seconds=self.body_seconds)

    def _around_a_page(self, page: ASGIApp) -> ASGIApp:
        """``page`` inside what FastAPI's stack puts around a route, but for the layers only the API needs: the 500
        page, the application's middleware (gzip and HEAD, and any added), its exception handlers."""
        error_handler, handlers = None, {}
        for key, value in self.exception_handlers.items():  # as Starlette and FastAPI split them
            if key in (500, Exception):
                error_handler = value
            else:
                handlers[key] = value
        app: ASGIApp = ExceptionMiddleware(page, handlers=handlers, debug=self.debug)
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return ServerErrorMiddleware(app, handler=error_handler, debug=self.debug)


class Pages:
    """A page's GET (or HEAD) reached by its path, ahead of what the API needs and a page does not: FastAPI's body
    limit, its exit stack for uploaded files and its router, which tries route after route. They cost a page about
    a twentieth of its time on the wire (``make bench``, side by side: 0.387× to 0.406× bare Starlette).

    Anything else goes to ``app`` (FastAPI's stack), as does a page asked under a root path, which the router
    reads, or while FastAPI's telemetry observes the request: its router names the route of a span, and its
    middleware records an exception's type before the 500 page is sent.
    """

    def __init__(self, pages: Mapping[str, ASGIApp], around: Callable[[ASGIApp], ASGIApp], app: ASGIApp) -> None:
        self.pages = pages
        self.shown = around(self._page)  # the layers a page goes through, around the page its path names
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in _READ
            and scope["path"] in self.pages
            and not scope.get("root_path")
            and scope.get("fastapi.telemetry") is None
        ):
            await self.shown(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.pages[scope["path"]](scope, receive, send)


_READ = frozenset({"GET", "HEAD"})


def _not_finite(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


def create_app(*, body_seconds: float = BODY_SECONDS) -> FastAPI:
    """The ASGI application; a request body must arrive within ``body_seconds``."""
    app = GuardedApp(
        title="dpscale",
        version=__version__,
        description="Data-parallel scaling: ideal and actual throughput, speedup.",
        docs_url=None,
        redoc_url=None,
    )
    app.body_seconds = body_seconds
    app.add_middleware(Delivery)  # gzip for clients that take it; HEAD as GET without the body
    # The routes are the application's own rather than routers included: an included router matches a request's
    # path twice (once to say it matches, once to pick the route), through a wrapper of each route, every time.
    framework = len(app.router.routes)  # FastAPI's own (/openapi.json)
    for add_routes in (api_router, page_router, chart_router):
        add_routes(app.router)
    app.mount("/static", VersionedStatic(directory=STATIC), name="static")  # after the routes asked more often
    explain = explain_router()
    added = app.router.routes[framework:]
    ours = [*added, *explain.routes]
    # The router tries each route in turn (about 0.6 µs each): the API first (a page's GET is answered in front of
    # the router, by Pages), and FastAPI's own /openapi.json, asked once by a docs page, last.
    app.router.routes[:] = [*added, *app.router.routes[:framework]]
    # In the router too: under a root path, a page is routed there.
    app.pages = {
        route.path: route.endpoint
        for route in added
        if isinstance(route, Route) and isinstance(route.endpoint, PageApp)
    }

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        undecodable = False
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("query", "body")]
            given = err.get("input")
            reason = err.get("msg", "invalid value")
            # pydantic reads "nan" and "inf" in a query, and NaN and Infinity in a JSON body, then a bound fails
            if (isinstance(given, str) and _not_finite(given)) or (
                isinstance(given, float) and not math.isfinite(given)
            ):
                reason = "expected a finite number"
            message = f"got {show_value(given)}; {reason}" if given is not None else err.get("msg", "")
            if err.get("type") == "missing" and loc:  # a body's key not sent: its input is the whole body, not said
                message = f"{reason}: the key was not sent" if isinstance(given, dict) else reason
            if err.get("type") == "json_invalid":  # not JSON at all: the body cannot be decoded (400), said where
                undecodable, at = True, loc[0] if loc else "0"
                message, loc = f"the body is not JSON: {err.get('ctx', {}).get('error', reason)} at character {at}", []
            elif loc == [] and isinstance(given, bytes):  # a body sent as another type than JSON
                message = f"got {show_value(given)}; expected a JSON object, sent with Content-Type: application/json"
            elif loc == [] and err.get("type") == "missing":
                message = "the body is empty; expected a JSON object"
            errors.append({"field": ".".join(loc) or "request", "message": message})
        return JSONResponse({"errors": errors}, status_code=400 if undecodable else 422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        path = request.url.path
        if exc.status_code == 404 and not path.startswith("/api/") and "text/html" in request.headers.get("accept", ""):
            page = missing_page(path, request.query_params.get("lang"), request.headers.get("accept-language", ""))
            return HTMLResponse(page, status_code=404)
        headers = exc.headers
        if exc.status_code == 405 and headers:  # Allow: every method the path answers (/predict: GET, POST)
            methods = {
                method
                for route in ours
                if isinstance(route, Route) and route.path_regex.match(path)
                for method in route.methods or ()
                if method != "HEAD"  # answered wherever GET is (delivery.py), as the API's routes never said
            }
            if methods:
                headers = {**headers, "Allow": ", ".join(sorted(methods))}
        if 400 <= exc.status_code < 500:  # the same shape as every other error
            message = f"no such path: {show_value(path)}" if exc.status_code == 404 else str(exc.detail)
            body = {"errors": [{"field": "request", "message": message}]}
            return JSONResponse(body, status_code=exc.status_code, headers=headers)
        return await http_exception_handler(request, exc)

    @app.exception_handler(InvalidInput)
    async def _invalid(request: Request, exc: InvalidInput) -> JSONResponse:
        # The field is named beside the message, as pydantic's are: not again inside it, unless it is
        # a place in words (a file and its line), which the message then says in full.
        message = exc.localized("en", named=not isinstance(exc.place, str))
        return JSONResponse({"errors": [{"field": exc.field, "message": message}]}, status_code=422)

    app.include_router(explain)
    return app
