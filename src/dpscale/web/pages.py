"""The pages: a calculator per path in French and English, its live-update fragment, its charts.

Each page reads its form from the query string (dpscale.web.forms), calls the core and renders
templates/. They are ``def``, not ``async def``: Starlette runs them in its thread pool, so a page
or a chart that computes holds up no other request.
"""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from dpscale import pipeline, scaling
from dpscale._version import __version__
from dpscale.format import (
    format_duration,
    format_energy,
    format_estimate,
    format_memory,
    format_milliseconds,
    format_money,
    format_number,
    format_percent,
    format_points,
    format_speedup,
)
from dpscale.i18n import LANGUAGES, Lang, translation
from dpscale.predict.wording import lever_text
from dpscale.report import memory_sentence
from dpscale.web.forms import CALCULATORS, Calculator, Form, read_form
from dpscale.web.language import choose_lang

__all__ = ["TEMPLATES", "page_router"]

TEMPLATES = Path(__file__).parent / "templates"


@functools.lru_cache(maxsize=256)
def _scaling_svg(result: scaling.Scaling, lang: Lang) -> str:
    from dpscale.charts import scaling_chart, to_svg

    return to_svg(scaling_chart(result, lang), lang=lang)


@functools.lru_cache(maxsize=256)
def _schedule_svg(result: pipeline.Bubble, lang: Lang) -> str:
    from dpscale.charts import schedule_chart, to_svg

    return to_svg(schedule_chart(result, lang), lang=lang)


def _env(lang: Lang) -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        auto_reload=False,  # templates ship with the package; no stat() per request
        autoescape=select_autoescape(default=True, default_for_string=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["ext.i18n.trimmed"] = True
    env.install_gettext_translations(translation(lang), newstyle=True)  # type: ignore[attr-defined]
    return env


def _chart_top(result: scaling.Scaling) -> int:
    from dpscale.charts import scaling_chart_top

    return scaling_chart_top(result)


def _schedule_height(stages: int) -> int:
    from dpscale.charts import SCHEDULE_FRAME, schedule_chart_height

    return SCHEDULE_FRAME + schedule_chart_height(stages)


def page_router() -> APIRouter:
    """The pages, fragments, charts and the API's docs page."""
    router = APIRouter(include_in_schema=False)
    envs = {lang: _env(lang) for lang in LANGUAGES}  # one per language: requests run in threads

    def render(calc: Calculator, template: str, request: Request, lang: str | None) -> HTMLResponse:
        chosen = choose_lang(request, lang)
        form = read_form(calc, chosen, dict(request.query_params))
        other = "en" if chosen == "fr" else "fr"
        page = (
            envs[chosen]
            .get_template(template)
            .render(
                calc=calc,
                form=form,
                lang=chosen,
                other_lang=other,
                switch_url="?" + urlencode({**form.values, "lang": other, "from": chosen}),
                query=urlencode({**form.values, "lang": chosen}),
                num=lambda x, decimals=3: format_number(x, chosen, decimals=decimals),
                pct=lambda x, decimals=1: format_percent(x, chosen, decimals=decimals),
                times=lambda x: format_speedup(x, chosen),
                dur=lambda x: format_duration(x, chosen),
                money=lambda x, currency: format_money(x, currency, chosen),
                kwh=lambda x: format_energy(x, chosen),
                ms=lambda x: format_milliseconds(x, chosen),
                gib=lambda x: format_memory(x, chosen),
                memory_sentence=lambda m, n: memory_sentence(m, n, chosen),
                points=lambda x: format_points(x, chosen),
                estimate=lambda x, err: format_estimate(x, err, chosen),
                chart_top=_chart_top,
                schedule_height=_schedule_height,
                lever_text=lambda name: lever_text(name, chosen),
                version=__version__,
            )
        )
        return HTMLResponse(page, headers={"content-language": chosen, "vary": "accept-language"})

    def page_route(calc: Calculator) -> None:
        # Sync: Starlette runs them in its thread pool, so a page that computes blocks no other request.
        def page(request: Request, lang: str | None = None) -> HTMLResponse:
            return render(calc, f"{calc.name}.html", request, lang)

        def fragment(request: Request, lang: str | None = None) -> HTMLResponse:
            return render(calc, "fragment.html", request, lang)

        router.add_api_route(calc.path, page, response_class=HTMLResponse, include_in_schema=False, name=calc.name)
        router.add_api_route(f"/fragment/{calc.name}", fragment, response_class=HTMLResponse)

    for calc in CALCULATORS.values():
        page_route(calc)

    def chart_form(name: str, request: Request, lang: str | None) -> tuple[Lang, Form]:
        chosen = choose_lang(request, lang)
        return chosen, read_form(CALCULATORS[name], chosen, dict(request.query_params))

    def svg(text: str) -> Response:
        return Response(text, media_type="image/svg+xml", headers={"cache-control": "public, max-age=3600"})

    def form_errors(form: Form) -> JSONResponse:
        errors = [{"field": k, "message": v} for k, v in form.errors.items()]
        return JSONResponse({"errors": errors}, status_code=422)

    @router.get("/chart/scaling.svg")
    def chart(request: Request, lang: str | None = None) -> Response:
        chosen, form = chart_form("scaling", request, lang)
        return form_errors(form) if form.result is None else svg(_scaling_svg(form.result, chosen))

    @router.get("/chart/pipeline.svg")
    def pipeline_chart(request: Request, lang: str | None = None) -> Response:
        chosen, form = chart_form("pipeline", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(_schedule_svg(form.result, chosen))

    @router.get("/chart/predict.svg")
    def predict_chart(request: Request, lang: str | None = None) -> Response:
        from dpscale.charts import prediction_chart, to_svg

        chosen, form = chart_form("predict", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(to_svg(prediction_chart(form.result.prediction, chosen), lang=chosen))

    @router.get("/chart/fit.svg")
    def fit_chart(request: Request, lang: str | None = None) -> Response:
        from dpscale.charts import fit_chart, to_svg

        chosen, form = chart_form("fit", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(to_svg(fit_chart(form.result, chosen), lang=chosen))

    @router.get("/docs", response_class=HTMLResponse)
    def docs() -> HTMLResponse:
        return HTMLResponse(envs["en"].get_template("docs.html").render())

    return router
