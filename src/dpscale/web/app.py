"""The web calculator (FastAPI + Jinja2): pages in French and English and a JSON API.

Thin by design: read the query string, call the core, render. Inputs live in the URL, so every
result can be shared; the page works without JavaScript (a GET form) and, with it, updates as
the user types by fetching the same results fragment the server renders.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from babel.core import negotiate_locale
from fastapi import FastAPI, Query, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp

from dpscale import batch, pipeline, plan, scaling
from dpscale._validate import LABEL_LENGTH, LABEL_PATTERN
from dpscale._version import __version__
from dpscale.errors import InvalidInput, MissingInput, show_value
from dpscale.format import (
    format_duration,
    format_energy,
    format_milliseconds,
    format_money,
    format_number,
    format_percent,
    format_points,
    format_speedup,
)
from dpscale.i18n import LANGUAGES, Lang, translation
from dpscale.predict.wording import lever_text
from dpscale.web.forms import CALCULATORS, Calculator, Form, read_form
from dpscale.web.security import BODY_SECONDS, MAX_BODY, MAX_QUERY, MAX_SIZES, Guard

HERE = Path(__file__).parent
# Bounds the API states in its schema, so that every schema-valid request gets an answer
# (far beyond any real cluster: a million devices, 10¹² samples/s each).
MAX_DEVICES = 10**6
MAX_THROUGHPUT = 1e12
MIN_POSITIVE = 1e-6  # throughputs and efficiencies: so that d·v·E never underflows to 0
MAX_COUNT = 10**6  # micro-batch sizes, accumulation steps, stages, micro-batches, sequence lengths
MAX_WORK = 1e18  # samples or tokens: a thousand times today's largest token budgets
MAX_SECONDS = 1e10  # about 300 years


class ScalingOut(BaseModel):
    devices: int
    per_device_throughput: float
    efficiency: float
    ideal_throughput: float
    actual_throughput: float
    speedup: float
    lost_throughput: float
    unit: str


class BatchOut(BaseModel):
    micro_batch: int
    accumulation: int
    devices: int
    sequence_length: int | None
    per_device_batch: int
    global_batch: int
    global_batch_tokens: int | None
    learning_rate: float | None = None


class BubbleOut(BaseModel):
    stages: int
    micro_batches: int
    schedule: str
    chunks: int
    bubble_fraction: float
    bubble_overhead: float
    pipeline_efficiency: float
    micro_batch_time: float | None
    step_time: float | None
    idle_time: float | None
    activations_in_flight: int | None


class PlanOut(ScalingOut):
    work: float
    seconds: float
    device_hours: float
    price_per_device_hour: float | None
    cost: float | None
    currency: str
    watts_per_device: float | None
    energy_kwh: float | None


class DeadlineOut(BaseModel):
    deadline_seconds: float
    plan: PlanOut
    options: list[PlanOut]


class StepTimeOut(BaseModel):
    total: float
    compute: float
    communication: float
    exposed_communication: float
    straggler_wait: float
    input_wait: float


class PredictionRowOut(BaseModel):
    devices: int
    efficiency: float
    actual_throughput: float
    speedup: float
    bottleneck: str
    step_time: StepTimeOut


class LeverOut(BaseModel):
    name: str
    description: str
    efficiency: float
    gain: float


class PredictOut(BaseModel):
    predictions: list[PredictionRowOut]
    assumptions: dict[str, Any]
    levers: list[LeverOut]


class PointIn(BaseModel):
    model_config = ConfigDict(strict=True)  # JSON true is not a device count, nor "8" a number

    devices: int = Field(ge=1, le=MAX_DEVICES)
    throughput: float = Field(ge=MIN_POSITIVE, le=MAX_THROUGHPUT * MAX_DEVICES)


class FitIn(BaseModel):
    model_config = ConfigDict(strict=True)

    points: list[PointIn] = Field(min_length=2, max_length=10_000)
    models: list[Literal["constant", "amdahl", "gustafson", "usl", "comm"]] | None = None
    at: list[Annotated[int, Field(ge=1, le=MAX_DEVICES)]] = Field(default_factory=list, max_length=256)


class FieldError(BaseModel):
    field: str
    message: str


class ErrorsOut(BaseModel):
    errors: list[FieldError]


class GuardedApp(FastAPI):
    """FastAPI with :class:`~dpscale.web.security.Guard` outside everything, the 500 page included."""

    body_seconds = BODY_SECONDS

    def build_middleware_stack(self) -> ASGIApp:
        return Guard(super().build_middleware_stack(), body_seconds=self.body_seconds)


def _presets(tier: Literal["intra", "inter"]) -> dict[str, Any]:
    """The preset names of ``tier`` as the schema's enum; the core checks them (a 422 naming the field)."""
    from dpscale.predict.presets import presets

    return {"enum": sorted(presets()[tier])}


def _not_finite(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False


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
    envs = {lang: _env(lang) for lang in LANGUAGES}  # one per language: requests run in threads
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("query", "body")]
            if err.get("type") == "json_invalid":  # the body is not JSON at all: the request is at fault
                loc = []
            given = err.get("input")
            reason = err.get("msg", "invalid value")
            if isinstance(given, str) and _not_finite(given):  # pydantic reads "nan" and "inf", then a bound fails
                reason = "expected a finite number"
            message = f"got {show_value(given)}; {reason}" if given is not None else err.get("msg", "")
            errors.append({"field": ".".join(loc) or "request", "message": message})
        return JSONResponse({"errors": errors}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400:  # a body that cannot even be decoded: same shape as every other error
            body = {"errors": [{"field": "request", "message": str(exc.detail)}]}
            return JSONResponse(body, status_code=400)
        return await http_exception_handler(request, exc)

    @app.exception_handler(InvalidInput)
    async def _invalid(request: Request, exc: InvalidInput) -> JSONResponse:
        return JSONResponse({"errors": [{"field": exc.field, "message": exc.message}]}, status_code=422)

    bad_input: dict[int | str, dict[str, Any]] = {
        422: {"model": ErrorsOut, "description": "A value out of range or unreadable"},
        414: {"model": ErrorsOut, "description": f"A query string over {MAX_QUERY} characters"},
        400: {"model": ErrorsOut, "description": "A body that cannot be decoded"},
    }
    big_body: dict[int | str, dict[str, Any]] = {
        **bad_input,
        413: {"model": ErrorsOut, "description": f"A body over {MAX_BODY} bytes ({MAX_BODY >> 20} MiB)"},
        408: {"model": ErrorsOut, "description": "A body that does not arrive in time (10 s by default)"},
    }

    @app.get(
        "/api/v1/scaling",
        response_model=ScalingOut,
        responses=bad_input,
        summary="Ideal and actual throughput and speedup",
    )
    async def api_scaling(
        devices: Annotated[int, Query(ge=1, le=MAX_DEVICES, description="d, number of devices (whole, ≥ 1)")],
        per_device_throughput: Annotated[
            float, Query(ge=MIN_POSITIVE, le=MAX_THROUGHPUT, description="v, one device's throughput alone (> 0)")
        ],
        efficiency: Annotated[
            float, Query(ge=MIN_POSITIVE, le=1, description="E, scaling efficiency as a fraction (0 < E ≤ 1)")
        ],
        unit: Annotated[
            str,
            Query(min_length=1, max_length=LABEL_LENGTH, pattern=LABEL_PATTERN, description="throughput unit label"),
        ] = "samples/s",
    ) -> Response:
        # A JSONResponse skips re-validating the result against the response model: the core's
        # result is already typed, and the model stays in the schema (Schemathesis checks it).
        return JSONResponse(scaling.scale(devices, per_device_throughput, efficiency, unit=unit).to_dict())

    @app.get("/api/v1/batch", response_model=BatchOut, responses=bad_input, summary="Effective batch size")
    async def api_batch(
        micro_batch: Annotated[int, Query(ge=1, le=MAX_COUNT, description="b, samples per device per micro-step")],
        accumulation: Annotated[int, Query(ge=1, le=MAX_COUNT, description="k, gradient-accumulation steps")] = 1,
        devices: Annotated[int, Query(ge=1, le=MAX_DEVICES, description="d, data-parallel devices")] = 1,
        sequence_length: Annotated[int | None, Query(ge=1, le=MAX_COUNT, description="L, tokens per sample")] = None,
        base_learning_rate: Annotated[
            float | None, Query(gt=0, le=1e6, description="η₀, tuned at base_batch; scaled linearly (Goyal et al.)")
        ] = None,
        base_batch: Annotated[int | None, Query(ge=1, le=MAX_COUNT * MAX_DEVICES, description="B₀")] = None,
    ) -> dict[str, Any]:
        result = batch.effective_batch(micro_batch, accumulation, devices, sequence_length=sequence_length)
        if (base_learning_rate is None) != (base_batch is None):
            raise InvalidInput("base_learning_rate", base_learning_rate, "base_learning_rate and base_batch together")
        lr = None
        if base_learning_rate is not None and base_batch is not None:
            lr = batch.scaled_learning_rate(base_learning_rate, base_batch, result.global_batch)
        return {**result.to_dict(), "learning_rate": lr}

    @app.get("/api/v1/pipeline", response_model=BubbleOut, responses=bad_input, summary="Pipeline bubble")
    async def api_pipeline(
        stages: Annotated[int, Query(ge=1, le=MAX_COUNT, description="p, pipeline stages")],
        micro_batches: Annotated[int, Query(ge=1, le=MAX_COUNT, description="m, micro-batches per step")],
        schedule: Annotated[pipeline.Schedule, Query(description="1f1b, gpipe or interleaved")] = "1f1b",
        chunks: Annotated[int, Query(ge=1, le=MAX_COUNT, description="v, model chunks per device (interleaved)")] = 1,
        micro_batch_time: Annotated[
            float | None, Query(gt=0, le=MAX_SECONDS, description="forward + backward of one micro-batch, seconds")
        ] = None,
    ) -> dict[str, Any]:
        return pipeline.bubble(
            stages, micro_batches, schedule=schedule, chunks=chunks, micro_batch_time=micro_batch_time
        ).to_dict()

    @app.get(
        "/api/v1/plan",
        response_model=PlanOut | DeadlineOut,
        responses=bad_input,
        summary="Time, cost and energy of a run; with a deadline, the fewest devices that meet it",
    )
    async def api_plan(
        work: Annotated[float, Query(gt=0, le=MAX_WORK, description="samples (or tokens) to process in all")],
        per_device_throughput: Annotated[float, Query(ge=MIN_POSITIVE, le=MAX_THROUGHPUT, description="v")],
        efficiency: Annotated[float, Query(ge=MIN_POSITIVE, le=1, description="E as a fraction")],
        devices: Annotated[int | None, Query(ge=1, le=MAX_DEVICES, description="d (or give a deadline)")] = None,
        deadline_seconds: Annotated[float | None, Query(gt=0, le=MAX_SECONDS)] = None,
        price_per_device_hour: Annotated[float | None, Query(gt=0, le=1e6)] = None,
        watts_per_device: Annotated[float | None, Query(gt=0, le=1e6)] = None,
        currency: Annotated[str, Query(pattern="^[A-Za-z]{3}$")] = "USD",
        unit: Annotated[str, Query(min_length=1, max_length=LABEL_LENGTH, pattern=LABEL_PATTERN)] = "samples/s",
    ) -> dict[str, Any]:
        money: dict[str, Any] = {
            "price_per_device_hour": price_per_device_hour,
            "watts_per_device": watts_per_device,
            "currency": currency,
            "unit": unit,
        }
        if (devices is None) == (deadline_seconds is None):
            raise InvalidInput("devices", devices, "either devices or deadline_seconds, not both")
        if deadline_seconds is not None:
            return plan.devices_for_deadline(
                work, deadline_seconds, per_device_throughput, efficiency, **money
            ).to_dict()
        return plan.plan(work, devices or 1, per_device_throughput, efficiency, **money).to_dict()

    @app.get(
        "/api/v1/predict",
        response_model=PredictOut,
        responses=bad_input,
        summary="Scaling efficiency predicted from the interconnect, the gradients and the batch",
    )
    def api_predict(  # computes for up to MAX_SIZES device counts: in the thread pool, off the event loop
        devices: Annotated[
            list[Annotated[int, Field(ge=1, le=MAX_DEVICES)]],
            Query(min_length=1, max_length=MAX_SIZES, description="device counts (repeat the key)"),
        ],
        per_device_throughput: Annotated[float, Query(ge=MIN_POSITIVE, le=MAX_THROUGHPUT, description="v, samples/s")],
        batch: Annotated[float, Query(ge=MIN_POSITIVE, le=MAX_COUNT, description="micro-batch per device")],
        params: Annotated[float, Query(ge=1, le=1e15, description="parameters")],
        grad_bytes: Annotated[float, Query(ge=0.125, le=16, description="bytes per gradient value")] = 4,
        accumulation: Annotated[int, Query(ge=1, le=MAX_COUNT)] = 1,
        devices_per_node: Annotated[int, Query(ge=1, le=1024)] = 8,
        intra: Annotated[
            str | None, Query(description="a link preset inside a node", json_schema_extra=_presets("intra"))
        ] = None,
        intra_bandwidth: Annotated[float | None, Query(ge=1e6, le=1e15, description="bytes/s per device")] = None,
        intra_latency: Annotated[float | None, Query(ge=0, le=1, description="seconds")] = None,
        intra_efficiency: Annotated[float | None, Query(ge=0.01, le=1)] = None,
        inter: Annotated[
            str | None, Query(description="a network preset between nodes", json_schema_extra=_presets("inter"))
        ] = None,
        inter_bandwidth: Annotated[float | None, Query(ge=1e6, le=1e15, description="bytes/s per card")] = None,
        inter_latency: Annotated[float | None, Query(ge=0, le=1, description="seconds")] = None,
        inter_efficiency: Annotated[float | None, Query(ge=0.01, le=1)] = None,
        nics: Annotated[int, Query(ge=1, le=64)] = 1,
        algorithm: Annotated[Literal["auto", "ring", "tree", "hierarchical"], Query()] = "auto",
        overlap: bool = True,
        bucket_bytes: Annotated[float, Query(ge=1024, le=1e12)] = 25 * 2**20,
        jitter: Annotated[float, Query(ge=0, le=0.5)] = 0.02,
        input_throughput: Annotated[
            float | None,
            Query(
                ge=MIN_POSITIVE,
                le=MAX_THROUGHPUT * 1024,
                description="samples/s one node's input pipeline sustains for all its devices (at least v)",
            ),
        ] = None,
    ) -> dict[str, Any]:
        from dpscale.predict import model, presets

        intra_link = presets.resolve_link("intra", intra, intra_bandwidth, intra_latency, intra_efficiency)
        if intra_link is None:
            raise MissingInput("intra_bandwidth", "intra_bandwidth or an intra preset")
        inter_link = presets.resolve_link("inter", inter, inter_bandwidth, inter_latency, inter_efficiency, nics=nics)
        workload = model.Workload(per_device_throughput, batch, params, grad_bytes, accumulation, input_throughput)
        cluster = model.Cluster(intra_link, devices_per_node, inter_link, algorithm, overlap, bucket_bytes, jitter)
        found = model.levers(devices, workload, cluster)
        return {**model.predict(devices, workload, cluster).to_dict(), "levers": [lever.to_dict() for lever in found]}

    @app.post(
        "/api/v1/fit",
        responses=big_body,
        summary="Scaling models fitted to measured (devices, throughput) points, with predictions",
    )
    def api_fit(body: FitIn) -> dict[str, Any]:  # a fit of up to 10 000 points: off the event loop
        from dpscale import fit as fitting

        return fitting.fit([(p.devices, p.throughput) for p in body.points], models=body.models, at=body.at).to_dict()

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
                points=lambda x: format_points(x, chosen),
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

        app.add_api_route(calc.path, page, response_class=HTMLResponse, include_in_schema=False, name=calc.name)
        app.add_api_route(f"/fragment/{calc.name}", fragment, response_class=HTMLResponse, include_in_schema=False)

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

    @app.get("/chart/scaling.svg", include_in_schema=False)
    def chart(request: Request, lang: str | None = None) -> Response:
        chosen, form = chart_form("scaling", request, lang)
        return form_errors(form) if form.result is None else svg(_scaling_svg(form.result, chosen))

    @app.get("/chart/pipeline.svg", include_in_schema=False)
    def pipeline_chart(request: Request, lang: str | None = None) -> Response:
        chosen, form = chart_form("pipeline", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(_schedule_svg(form.result, chosen))

    @app.get("/chart/predict.svg", include_in_schema=False)
    def predict_chart(request: Request, lang: str | None = None) -> Response:
        from dpscale.charts import prediction_chart, to_svg

        chosen, form = chart_form("predict", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(to_svg(prediction_chart(form.result.prediction, chosen), lang=chosen))

    @app.get("/chart/fit.svg", include_in_schema=False)
    def fit_chart(request: Request, lang: str | None = None) -> Response:
        from dpscale.charts import fit_chart, to_svg

        chosen, form = chart_form("fit", request, lang)
        if form.result is None:
            return form_errors(form)
        return svg(to_svg(fit_chart(form.result, chosen), lang=chosen))

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(envs["en"].get_template("docs.html").render())

    return app


app = create_app()
