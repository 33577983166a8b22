"""The pages: a calculator per path in French and English, its live-update fragment, its charts.

Each page reads its form from the query string (dpscale.web.forms), calls the core and renders
templates/. A page that computes runs in the thread pool, so it holds up no other request; a page of a few
multiplications (the scaling, the batch) is answered on the event loop.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, NamedTuple
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, Template
from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from dpscale._version import __version__
from dpscale.charts import SCHEDULE_FRAME, scaling_chart_top, schedule_chart_height
from dpscale.collectives.names import bus_factor
from dpscale.format import (
    format_duration,
    format_gigabytes_per_second,
    format_memory,
    format_milliseconds,
    format_money,
    format_number,
    format_percent,
    format_points,
    format_r2,
    format_speedup,
)
from dpscale.i18n import LANGUAGES, Lang
from dpscale.predict.table import levers_title, prediction_table
from dpscale.predict.wording import lever_text, prediction_notes
from dpscale.web import export
from dpscale.web.chart_routes import PHONE_WIDTH, chart_uri
from dpscale.web.forms import CALCULATORS, Calculator, Form, read_form
from dpscale.web.jinja_compiler import macro_text
from dpscale.web.language import choose_lang
from dpscale.web.security import MAX_BODY, MAX_QUERY
from dpscale.web.templating import environment

__all__ = [
    "Frame",
    "PageApp",
    "Speech",
    "frame",
    "page_environment",
    "page_router",
    "render_fragment",
    "render_page",
    "speeches",
]


def _schedule_height(stages: int) -> int:
    return SCHEDULE_FRAME + schedule_chart_height(stages)


def _short_query(values: Mapping[str, str]) -> str:
    """``values`` as a query string that a link may carry: the longest values left out until it fits.

    Measurements pasted into /fit are posted, not linked; the short inputs stay shareable.
    """
    kept = dict(values)
    text = export.query_string(kept)
    while len(text) > MAX_QUERY - 64 and kept:  # room for the path's own parameters
        del kept[max(kept, key=lambda k: len(kept[k]))]
        text = export.query_string(kept)
    return text


def _taken(calc: Calculator, form: Form, query: str, request: Request) -> export.Takeaway | None:
    """What the page offers to take away, when it has a result."""
    if form.result is None or calc.definition is None:
        return None
    return export.takeaway(calc.name, calc.definition.inputs, form, query, _base_url(request), posted=calc.posted)


def _base_url(request: Request) -> str:
    """``str(request.base_url)``, from what it is made of: the scheme, the Host header, the server's address and
    the root path (a few per server, each written once)."""
    scope = request.scope
    host = next((value for key, value in scope["headers"] if key == b"host"), None)
    server = scope.get("server")
    root = scope.get("app_root_path", scope.get("root_path", ""))
    return _base_of(scope.get("scheme", "http"), host, None if server is None else tuple(server), root)


@functools.lru_cache(maxsize=64)
def _base_of(scheme: str, host: bytes | None, server: tuple[str, int] | None, root: str) -> str:
    headers = [] if host is None else [(b"host", host)]
    made = {"type": "http", "scheme": scheme, "server": server, "root_path": root, "headers": headers}
    return str(Request({**made, "path": "/", "query_string": b""}).base_url)


async def _posted(request: Request) -> dict[str, str]:
    """The form's fields sent in the body (``application/x-www-form-urlencoded``), the guard having bounded it.

    A dependency, so that the page that uses them stays ``def`` and runs in the thread pool.
    """
    body = (await request.body()).decode("utf-8", errors="replace")
    return dict(parse_qsl(body, keep_blank_values=True))


Posted = Annotated[dict[str, str], Depends(_posted)]


def _helpers(chosen: Lang) -> dict[str, Any]:
    """What every template of a page may call, bound to the page's language: the environment's globals,
    so that a template imported without the request's context (the parts each request renders) is
    made once, not once per request. The numbers' writers keep what they wrote: a page writes the
    same few numbers several times (the worked example repeats the results)."""
    return {
        "lang": chosen,
        "other_lang": "en" if chosen == "fr" else "fr",
        "num": _kept(lambda x, decimals=3: format_number(x, chosen, decimals=decimals)),
        "pct": _kept(lambda x, decimals=1: format_percent(x, chosen, decimals=decimals)),
        "times": _kept(lambda x: format_speedup(x, chosen)),
        "dur": lambda x: format_duration(x, chosen),
        "money": lambda x, currency: format_money(x, currency, chosen),
        "ms": lambda x: format_milliseconds(x, chosen),
        "gib": lambda x: format_memory(x, chosen),
        "gbps": lambda x: format_gigabytes_per_second(x, chosen, decimals=1),
        "bus_factor": bus_factor,
        "prediction_notes": lambda p: prediction_notes(p, chosen),
        "levers_title": lambda p: levers_title(p, chosen),
        "prediction_table": lambda p: prediction_table(p, chosen),  # the rows the terminal prints
        "points": lambda x: format_points(x, chosen),
        "r2": lambda x: format_r2(x, chosen),
        "chart_top": scaling_chart_top,
        "schedule_height": _schedule_height,
        "lever_text": lambda name: lever_text(name, chosen),
        "version": __version__,
        "max_query": MAX_QUERY,
        "max_body": MAX_BODY,
        "phone_width": PHONE_WIDTH,
    }


def _kept(write: Callable[..., str]) -> Callable[..., str]:
    """``write`` remembering its last few thousand answers (a value that cannot be a key is written each time)."""
    kept = functools.lru_cache(maxsize=4096, typed=True)(write)

    def cached(*args: Any) -> str:
        try:
            return kept(*args)
        except TypeError:  # unhashable: an array, a list
            return write(*args)

    return cached


@functools.cache
def page_environment(lang: Lang) -> Environment:
    """The pages' environment of ``lang``: :func:`~dpscale.web.templating.environment` with the helpers."""
    env = environment(lang)
    helpers = _helpers(lang)
    env.globals.update(helpers)
    # The numbers' writers are filters too (``x | num``): a filter is bound as the template compiles, where a
    # function's call is looked up and inspected on each call.
    env.filters.update({name: helpers[name] for name in ("num", "pct", "times")})
    return env


def frame(name: str, lang: Lang) -> tuple[str, ...]:
    """Calculator ``name``'s page in ``lang`` as no input changes it (the heading, the explanation, the
    formula, the FAQ, the legal notice): rendered once per language when the application is made.

    Where the template calls ``slot(part)``, each request fills in its part: the items at odd places
    name the part, those between are the page's own text. Nothing is kept by query string: each
    request reads and computes.
    """
    marker = Markup("<!--dpscale:slot:%s-->").__mod__  # a part's name: a word of the template's own
    page = page_environment(lang).get_template(f"{name}.html").render(calc=CALCULATORS[name], form=None, slot=marker)
    return tuple(_SLOT.split(page))


_SLOT = re.compile(r"<!--dpscale:slot:(\w+)-->")


class Frame(NamedTuple):
    """A :func:`frame` as a page is sent: its own text in UTF-8, the parts (their names) between."""

    texts: tuple[bytes, ...]
    parts: tuple[str, ...]


def _encoded(made: tuple[str, ...]) -> Frame:
    return Frame(tuple(text.encode() for text in made[::2]), made[1::2])


class Speech(NamedTuple):
    """What the pages of one language are rendered with, made once per application (:func:`speeches`): each
    calculator's frame, encoded once (a request encodes only its parts), the macros of its parts and of the
    take-away, and the live update's template."""

    frames: dict[str, Frame]
    parts: dict[str, Any]  # each calculator's _<name>_parts.html, as a module: its macros take the request's form
    takeaway: Any
    fragment: Template


def speeches() -> dict[Lang, Speech]:
    """Every language's :class:`Speech`: its frames rendered, its templates loaded (``page_router`` calls it)."""
    made = {}
    for lang in LANGUAGES:
        env = page_environment(lang)
        made[lang] = Speech(
            {name: _encoded(frame(name, lang)) for name in CALCULATORS},
            {name: env.get_template(f"_{name}_parts.html").module for name in CALCULATORS},
            env.get_template("_takeaway.html").module,
            env.get_template("fragment.html"),
        )
    return made


def _with(values: Mapping[str, str], encoded: str, extra: tuple[tuple[str, str], ...]) -> str:
    """The query string of ``{**values, **dict(extra)}``, from ``encoded``, that of ``values`` alone: written once
    per request, it is in every link the page makes."""
    if not encoded or any(name in values for name, _ in extra):
        return export.query_string({**values, **dict(extra)})
    return f"{encoded}&{_extra(extra)}"


@functools.lru_cache(maxsize=16)
def _extra(pairs: tuple[tuple[str, str], ...]) -> str:
    """What a page adds to its values' query (``lang=fr``, ``lang=en&from=fr``): the same few pairs for every
    request of a language, written once."""
    return export.query_string(pairs)


class _Asked(NamedTuple):
    """What a page or fragment request asks: its language, its form read and computed, the query string of
    the form's values, the query a link to its result carries (and whether it fits in one), and what it
    offers to take away; whether its language was chosen from the browser's Accept-Language (no ``lang``)."""

    lang: Lang
    form: Form
    encoded: str
    query: str
    linked: bool
    taken: export.Takeaway | None
    negotiated: bool


def _asked(calc: Calculator, request: Request, posted: Mapping[str, str] | None) -> _Asked:
    given = export.query_values(request.scope["query_string"])
    asked_lang = given.get("lang")
    if posted:
        known = {*calc.fields, "lang", "from"}
        given.update((k, v) for k, v in posted.items() if k in known)
    asked_lang = asked_lang or given.get("lang")
    chosen = asked_lang if asked_lang in LANGUAGES else choose_lang(request, asked_lang)
    negotiated = chosen != asked_lang  # no lang, or one not spoken: the browser's Accept-Language chose
    form = read_form(calc, chosen, given)
    encoded = export.query_string(form.values)
    query = _with(form.values, encoded, (("lang", chosen),))
    linked = len(query) <= MAX_QUERY - 32  # else the chart comes inline
    taken = _taken(calc, form, query if linked else "", request)
    return _Asked(chosen, form, encoded, query, linked, taken, negotiated)


def _html(page: str | bytes, chosen: Lang, negotiated: bool) -> HTMLResponse:
    """``page`` in ``chosen``; ``negotiated``: chosen from Accept-Language, which the answer then varies by (a page
    whose query says its language is the same whatever the browser accepts, so a cache may keep one copy)."""
    response = HTMLResponse(page)  # its length and type
    # Before them, as HTMLResponse(page, headers=…) writes them: the language's own, encoded once, not per request.
    response.raw_headers[:0] = _SAID[chosen] if negotiated else _SAID[chosen][:1]
    return response


_SAID = {lang: ((b"content-language", lang.encode()), (b"vary", b"accept-language")) for lang in LANGUAGES}


def _switch(asked: _Asked) -> str:
    """The link to the page in the other language: the values as typed, said to be typed in this one."""
    other = (("lang", "en" if asked.lang == "fr" else "fr"), ("from", asked.lang))
    text = _with(asked.form.values, asked.encoded, other)
    return "?" + (text if len(text) <= MAX_QUERY - 64 else _short_query({**asked.form.values, **dict(other)}))


def render_page(
    calc: Calculator, spoken: Mapping[Lang, Speech], request: Request, posted: Mapping[str, str] | None = None
) -> HTMLResponse:
    """Calculator ``calc``'s page for ``request``: its frame (:func:`frame`) with this request's parts."""
    asked = _asked(calc, request, posted)
    chosen, form = asked.lang, asked.form
    speech = spoken[chosen]
    parts = speech.parts[calc.name]
    inline = (lambda: None) if asked.linked else (lambda: chart_uri(calc.name, form.result, chosen))
    filled = {
        "fields": macro_text(parts.inputs, form, calc),
        # Text, not Markup (macro_text): the page only encodes it.
        "results": macro_text(parts.results, form, asked.query, inline)
        + macro_text(speech.takeaway.block, asked.taken, calc.name),
        "example": macro_text(parts.example, form),
        "switch": str(escape(_switch(asked))),
    }
    texts, names = speech.frames[calc.name]
    page = [texts[0]]
    for name, text in zip(names, texts[1:], strict=True):
        page += (filled[name].encode(), text)
    return _html(b"".join(page), chosen, asked.negotiated)


def render_fragment(
    calc: Calculator, spoken: Mapping[Lang, Speech], request: Request, posted: Mapping[str, str] | None = None
) -> HTMLResponse:
    """What the page swaps in as the user types: the results, the worked example and each field's message."""
    asked = _asked(calc, request, posted)
    chosen, form = asked.lang, asked.form
    inline = (lambda: None) if asked.linked else (lambda: chart_uri(calc.name, form.result, chosen))
    variables = {"calc": calc, "form": form, "query": asked.query, "chart_uri": inline, "taken": asked.taken}
    return _html(spoken[chosen].fragment.render(variables), chosen, asked.negotiated)


# A page that computes runs in the thread pool, so it holds up no other request; a few multiplications (the scaling,
# the batch) are answered on the event loop, without a thread hop that costs more than the page. A GET is an ASGI app
# of its own: FastAPI's parameter machinery, and Starlette's wrapper of a request function, cost more than the page.

Spoken = Mapping[Lang, Speech]


class PageApp:
    """``render(calc, spoken, request)`` (a page or its fragment) as an ASGI app: the request made of the scope, its
    answer sent. An error goes up to the application's handlers, as from any route. Reached in front of the router
    (``app.Pages``), its scope has no ``router``, ``endpoint`` or ``path_params``: a page reads none of them."""

    def __init__(self, render: Callable[..., HTMLResponse], calc: Calculator, spoken: Spoken) -> None:
        self.render, self.calc, self.spoken = render, calc, spoken

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if self.calc.costly:
            response = await run_in_threadpool(self.render, self.calc, self.spoken, request)
        else:
            response = self.render(self.calc, self.spoken, request)
        await response(scope, receive, send)


def _posted_form(render: Callable[..., HTMLResponse], calc: Calculator, spoken: Spoken) -> Callable[..., HTMLResponse]:
    # Posted: what is too long for a link (/fit's measurements), from the form or the live update.
    def posted_form(request: Request, posted: Posted, lang: str | None = None) -> HTMLResponse:
        return render(calc, spoken, request, posted)

    return posted_form


def page_router(router: APIRouter | None = None) -> APIRouter:
    """``router`` (a new one by default) with the pages, their fragments and the API's docs page (``create_app()``
    gives its own)."""
    router = APIRouter() if router is None else router
    spoken = speeches()
    for calc in CALCULATORS.values():
        page, fragment = PageApp(render_page, calc, spoken), PageApp(render_fragment, calc, spoken)
        router.routes.append(Route(calc.path, page, methods=["GET"], name=calc.name, include_in_schema=False))
        router.routes.append(Route(f"/fragment/{calc.name}", fragment, methods=["GET"], include_in_schema=False))
        router.add_api_route(
            calc.path,
            _posted_form(render_page, calc, spoken),
            methods=["POST"],
            response_class=HTMLResponse,
            include_in_schema=False,
        )
        router.add_api_route(
            f"/fragment/{calc.name}",
            _posted_form(render_fragment, calc, spoken),
            methods=["POST"],
            response_class=HTMLResponse,
            include_in_schema=False,
        )
    icon = (Path(__file__).parent / "static" / "favicon.svg").read_bytes()
    api_docs = page_environment("en").get_template("docs.html").render()  # no input changes it

    @router.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:  # browsers ask for it whatever the page's <link> says
        return Response(icon, media_type="image/svg+xml", headers={"cache-control": "public, max-age=86400"})

    @router.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(api_docs)

    return router
