"""The web calculator (FastAPI + Jinja2): pages in French and English and a JSON API.

Thin by design: read the query string, call the core, render. Inputs live in the URL, so every
result can be shared; the page works without JavaScript (a GET form) and, with it, updates as
the user types by fetching the same results fragment the server renders.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from babel.core import negotiate_locale
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dpscale import scaling
from dpscale._version import __version__
from dpscale.errors import InvalidInput
from dpscale.format import format_number, format_percent, format_speedup
from dpscale.i18n import LANGUAGES, Lang, translation
from dpscale.parse import parse_count, parse_efficiency, parse_number

HERE = Path(__file__).parent
MAX_QUERY = 2048  # characters; longer query strings get 414
# Bounds the API states in its schema, so that every schema-valid request gets an answer
# (far beyond any real cluster: a million devices, 10¹² samples/s each).
MAX_DEVICES = 10**6
MAX_THROUGHPUT = 1e12

SEED = {"devices": "64", "per_device_throughput": "2 000", "efficiency": "90 %", "unit": "samples/s"}
SEED_EN = {"devices": "64", "per_device_throughput": "2,000", "efficiency": "90%", "unit": "samples/s"}

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class ScalingOut(BaseModel):
    devices: int
    per_device_throughput: float
    efficiency: float
    ideal_throughput: float
    actual_throughput: float
    speedup: float
    lost_throughput: float
    unit: str


class FieldError(BaseModel):
    field: str
    message: str


class ErrorsOut(BaseModel):
    errors: list[FieldError]


class SecurityHeaders:
    """Adds the security headers to every response and refuses over-long query strings."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if len(scope.get("query_string", b"")) > MAX_QUERY:
            body = b'{"errors":[{"field":"query","message":"query string too long (at most 2048 characters)"}]}'
            response = Response(body, status_code=414, media_type="application/json")
            await self._send_with_headers(response, scope, receive, send)
            return
        await self._send_with_headers(self.app, scope, receive, send)

    async def _send_with_headers(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                ]
                message["headers"] = headers
            await send(message)

        await app(scope, receive, send_wrapper)


@dataclass(frozen=True)
class Form:
    """What the user typed, the language it is read in, and what came of it."""

    lang: Lang
    values: dict[str, str]
    errors: dict[str, str]
    result: scaling.Scaling | None


def choose_lang(request: Request, lang: str | None) -> Lang:
    """?lang= first, then Accept-Language, then French (the seed's language)."""
    if lang in LANGUAGES:
        return lang
    header = request.headers.get("accept-language", "")
    preferred = [part.split(";")[0].strip().replace("-", "_") for part in header.split(",") if part.strip()]
    chosen = negotiate_locale(preferred, list(LANGUAGES), sep="_") if preferred else None
    if chosen is None and preferred:
        chosen = negotiate_locale([p.split("_")[0] for p in preferred], list(LANGUAGES), sep="_")
    return chosen if chosen in LANGUAGES else "fr"


def read_form(lang: Lang, query: dict[str, str]) -> Form:
    given = any(k in query for k in ("devices", "per_device_throughput", "efficiency"))
    values = {k: query.get(k, "") for k in SEED} if given else dict(SEED if lang == "fr" else SEED_EN)
    values["unit"] = values["unit"] or "samples/s"
    errors: dict[str, str] = {}
    parsed: dict[str, Any] = {}
    readers: dict[str, Callable[[str], float]] = {
        "devices": lambda t: parse_count(t, lang, field="devices"),
        "per_device_throughput": lambda t: parse_number(t, lang, field="per_device_throughput"),
        "efficiency": lambda t: parse_efficiency(t, lang),
    }
    for field, read in readers.items():
        text = values[field]
        if not text.strip():
            errors[field] = "empty"
            continue
        try:
            parsed[field] = read(text)
        except InvalidInput as exc:
            errors[field] = exc.message
    result = None
    if not errors:
        try:
            result = scaling.scale(**parsed, unit=values["unit"])
        except InvalidInput as exc:
            errors[exc.field] = exc.message
    return Form(lang, values, errors, result)


@functools.lru_cache(maxsize=256)
def _chart_svg(result: scaling.Scaling, lang: Lang) -> str:
    from dpscale.charts import scaling_chart, to_svg

    return to_svg(scaling_chart(result, lang), lang=lang)


def _env(lang: Lang) -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        auto_reload=False,  # templates ship with the package; no stat() per request
        autoescape=select_autoescape(default=True, default_for_string=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_translations(translation(lang), newstyle=True)  # type: ignore[attr-defined]
    return env


def create_app() -> FastAPI:
    """The ASGI application."""
    app = FastAPI(
        title="dpscale",
        version=__version__,
        description="Data-parallel scaling: ideal and actual throughput, speedup.",
        docs_url=None,
        redoc_url=None,
    )
    envs = {lang: _env(lang) for lang in LANGUAGES}  # one per language: requests run in threads
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.add_middleware(SecurityHeaders)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("query", "body")]
            given = err.get("input")
            message = f"got {given!r}; {err.get('msg', 'invalid value')}" if given is not None else err.get("msg", "")
            errors.append({"field": ".".join(loc) or "request", "message": message})
        return JSONResponse({"errors": errors}, status_code=422)

    @app.exception_handler(InvalidInput)
    async def _invalid(request: Request, exc: InvalidInput) -> JSONResponse:
        return JSONResponse({"errors": [{"field": exc.field, "message": exc.message}]}, status_code=422)

    @app.get(
        "/api/v1/scaling",
        response_model=ScalingOut,
        responses={422: {"model": ErrorsOut, "description": "A value out of range or unreadable"}},
        summary="Ideal and actual throughput and speedup",
    )
    async def api_scaling(
        devices: Annotated[int, Query(ge=1, le=MAX_DEVICES, description="d, number of devices (whole, ≥ 1)")],
        per_device_throughput: Annotated[
            float, Query(gt=0, le=MAX_THROUGHPUT, description="v, one device's throughput alone (> 0)")
        ],
        efficiency: Annotated[float, Query(gt=0, le=1, description="E, scaling efficiency as a fraction (0 < E ≤ 1)")],
        unit: Annotated[
            str, Query(min_length=1, max_length=40, pattern=r"\S", description="throughput unit label")
        ] = "samples/s",
    ) -> dict[str, Any]:
        return scaling.scale(devices, per_device_throughput, efficiency, unit=unit).to_dict()

    def render(name: str, request: Request, lang: str | None, **extra: Any) -> HTMLResponse:
        chosen = choose_lang(request, lang)
        form = read_form(chosen, dict(request.query_params))
        page = (
            envs[chosen]
            .get_template(name)
            .render(
                form=form,
                lang=chosen,
                other_lang="en" if chosen == "fr" else "fr",
                switch_url="?" + urlencode({**form.values, "lang": "en" if chosen == "fr" else "fr"}),
                chart_url="/chart/scaling.svg?" + urlencode({**form.values, "lang": chosen}),
                num=lambda x: format_number(x, chosen),
                pct=lambda x: format_percent(x, chosen),
                times=lambda x: format_speedup(x, chosen),
                version=__version__,
                **extra,
            )
        )
        return HTMLResponse(page, headers={"content-language": chosen, "vary": "accept-language"})

    @app.get("/chart/scaling.svg", include_in_schema=False)
    def chart(request: Request, lang: str | None = None) -> Response:
        chosen = choose_lang(request, lang)
        form = read_form(chosen, dict(request.query_params))
        if form.result is None:
            errors = [{"field": k, "message": v} for k, v in form.errors.items()]
            return JSONResponse({"errors": errors}, status_code=422)
        svg = _chart_svg(form.result, chosen)
        return Response(svg, media_type="image/svg+xml", headers={"cache-control": "public, max-age=3600"})

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(envs["en"].get_template("docs.html").render())

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index(request: Request, lang: str | None = None) -> HTMLResponse:
        return render("scaling.html", request, lang)

    @app.get("/fragment/scaling", response_class=HTMLResponse, include_in_schema=False)
    async def fragment(request: Request, lang: str | None = None) -> HTMLResponse:
        return render("scaling_fragment.html", request, lang)

    return app


app = create_app()
