"""What a page links to: its charts as SVG, at the page's width or a phone's, and its answer as a file.

Drawn from the same query string as the page (dpscale.web.forms reads it): a chart or an export is
the page's result in another form. ``def`` routes: Starlette runs them in its thread pool, since a
chart takes Vega a while to draw.
"""

from __future__ import annotations

import base64
import collections
import functools
import threading
from collections.abc import Hashable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from dpscale import pipeline, scaling
from dpscale.i18n import Lang
from dpscale.web import export
from dpscale.web.forms import CALCULATORS, Form, read_form
from dpscale.web.language import choose_lang

__all__ = ["PAGE_WIDTH", "PHONE_WIDTH", "chart_router", "chart_uri"]


@functools.lru_cache(maxsize=256)
def _scaling_svg(result: scaling.Scaling, lang: Lang, width: int = 640) -> str:
    from dpscale.charts import scaling_chart, to_svg

    return to_svg(scaling_chart(result, lang), lang=lang, width=width)


@functools.lru_cache(maxsize=256)
def _schedule_svg(result: pipeline.Bubble, lang: Lang, width: int = 640) -> str:
    from dpscale.charts import schedule_chart, to_svg

    return to_svg(schedule_chart(result, lang), lang=lang, width=width)


# A chart's plot width: the page's 640, and a phone's (the <picture> source under 40rem), whose
# SVG a 390 px screen shows near its own size, so that its 10 px text stays readable.
PHONE_WIDTH = 290
PAGE_WIDTH = 640
Width = Annotated[int, Query(ge=200, le=1280, description="width of the plot area in pixels")]


def chart_uri(name: str, result: Any, lang: Lang) -> str:
    """A fit's or a prediction's chart as a data URI, for inputs too long for the chart's URL (measurements, a log).

    At the page's width, as the chart's URL gives it: the page's ``<img>`` shows it 640 px wide.
    """
    from dpscale.charts import fit_chart, prediction_chart, to_svg

    chart = fit_chart(result, lang) if name == "fit" else prediction_chart(result.prediction, lang)
    svg = to_svg(_at_width(chart, PAGE_WIDTH), lang=lang, width=PAGE_WIDTH)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _at_width(chart: Any, width: int) -> Any:
    """``chart`` with each panel of a stack (/predict's four) drawn ``width`` pixels wide.

    A stack's panels take their container's width, which an SVG has not: without this they are
    drawn at Vega-Lite's default (a phone's width) whatever the page asks.
    """
    panels = getattr(chart, "vconcat", None)
    if not panels:
        return chart
    sized = chart.copy(deep=False)
    sized.vconcat = [panel.properties(width=width) if panel.width == "container" else panel for panel in panels]
    return sized


class _Kept:
    """The last :data:`KEPT_CHARTS` charts drawn, by what their URL says (a bounded LRU, shared by threads).

    /predict's chart takes a quarter of a second to draw (four panels through Vega), and a page
    asks for it again at each visit and at each width; the same URL draws the same chart.
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self.lock = threading.Lock()
        self.kept: collections.OrderedDict[Hashable, str] = collections.OrderedDict()

    def get(self, key: Hashable) -> str | None:
        with self.lock:
            svg = self.kept.get(key)
            if svg is not None:
                self.kept.move_to_end(key)
            return svg

    def put(self, key: Hashable, svg: str) -> None:
        with self.lock:
            self.kept[key] = svg
            self.kept.move_to_end(key)
            while len(self.kept) > self.most:
                self.kept.popitem(last=False)


KEPT_CHARTS = 64  # some 60 kB each


def chart_router(router: APIRouter | None = None) -> APIRouter:
    """``router`` (a new one by default) with the charts (``/chart/<calculator>.svg``) and the exports
    (``/export/<calculator>.json|csv``), none of them in the API's schema."""
    router = APIRouter() if router is None else router

    def chart_form(name: str, request: Request, lang: str | None) -> tuple[Lang, Form]:
        chosen = choose_lang(request, lang)
        return chosen, read_form(CALCULATORS[name], chosen, dict(request.query_params))

    def svg(text: str) -> Response:
        return Response(text, media_type="image/svg+xml", headers={"cache-control": "public, max-age=3600"})

    def form_errors(form: Form) -> JSONResponse:
        errors = [{"field": k, "message": v} for k, v in form.errors.items()]
        return JSONResponse({"errors": errors}, status_code=422)

    @router.get("/chart/scaling.svg", include_in_schema=False)
    def chart(request: Request, lang: str | None = None, width: Width = 640) -> Response:
        chosen, form = chart_form("scaling", request, lang)
        return form_errors(form) if form.result is None else svg(_scaling_svg(form.result, chosen, width))

    @router.get("/chart/pipeline.svg", include_in_schema=False)
    def pipeline_chart(request: Request, lang: str | None = None, width: Width = 640) -> Response:
        chosen, form = chart_form("pipeline", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(_schedule_svg(form.result, chosen, width))

    kept = _Kept(KEPT_CHARTS)
    predict_fields = {*CALCULATORS["predict"].fields, "from"}

    @router.get("/chart/predict.svg", include_in_schema=False)
    def predict_chart(request: Request, lang: str | None = None, width: Width = PAGE_WIDTH) -> Response:
        from dpscale.charts import prediction_chart, to_svg

        chosen = choose_lang(request, lang)
        # What the chart is drawn from: its inputs, in any order, and what the language and width say.
        key = (chosen, width, tuple(sorted((k, v) for k, v in request.query_params.items() if k in predict_fields)))
        drawn = kept.get(key)
        if drawn is None:
            form = read_form(CALCULATORS["predict"], chosen, dict(request.query_params))
            if form.result is None:
                return form_errors(form)
            drawn = to_svg(_at_width(prediction_chart(form.result.prediction, chosen), width), lang=chosen, width=width)
            kept.put(key, drawn)
        return svg(drawn)

    @router.get("/chart/fit.svg", include_in_schema=False)
    def fit_chart(request: Request, lang: str | None = None, width: Width = 640) -> Response:
        from dpscale.charts import fit_chart, to_svg

        chosen, form = chart_form("fit", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(to_svg(fit_chart(form.result, chosen), lang=chosen, width=width))

    @router.get("/export/{name}.{kind}", include_in_schema=False)
    def export_file(request: Request, name: str, kind: str, lang: str | None = None) -> Response:
        """A page's answer as a file (its download links): the API's JSON, or its rows as CSV."""
        if name not in CALCULATORS or kind not in ("json", "csv"):
            return JSONResponse({"errors": [{"field": "request", "message": "no such export"}]}, status_code=404)
        _, form = chart_form(name, request, lang)
        if form.result is None:
            return form_errors(form)
        answer = export.answer_of(form.result)
        disposition = {"content-disposition": f'attachment; filename="dpscale-{name}.{kind}"'}
        if kind == "csv":
            return Response(export.csv_text(answer), media_type="text/csv; charset=utf-8", headers=disposition)
        return JSONResponse(answer, headers=disposition)

    return router
