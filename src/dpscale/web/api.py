"""The JSON API, /api/v1: read the query (or body), call the core, answer its result as JSON.

The cheap calculators answer on the event loop (``async def``); a prediction or a fit, whose cost
grows with what is asked, runs in the thread pool (``def``) so that it holds up no other request.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import to_json

from dpscale.calculators.bubble import PIPELINE
from dpscale.calculators.effective_batch import BATCH
from dpscale.calculators.fit import FIT
from dpscale.calculators.plan import PLAN
from dpscale.calculators.predict import PREDICT
from dpscale.calculators.scale import SCALING
from dpscale.errors import N_, InvalidInput
from dpscale.inputs import Definition, Input
from dpscale.kinds import kind_of
from dpscale.scaling import scale
from dpscale.web.schemas import (
    BatchOut,
    BubbleOut,
    DeadlineOut,
    ErrorsOut,
    FitOut,
    PlanOut,
    PredictOut,
    ScalingOut,
)
from dpscale.web.security import MAX_BODY, MAX_QUERY, MAX_SIZES

if TYPE_CHECKING:
    from dpscale.predict.definition import Request as PredictRequest

__all__ = ["FitIn", "PredictIn", "api_fit", "api_predict_posted", "api_router"]


def _presets(tier: Literal["intra", "inter"]) -> dict[str, Any]:
    """The preset names of ``tier`` as the schema's enum; the core checks them (a 422 naming the field)."""
    from dpscale.predict.presets import presets

    return {"enum": sorted(presets()[tier])}


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


def _parameter(item: Input, *, body: bool = False) -> inspect.Parameter:
    """The query parameter of ``item`` (or its key in a JSON ``body``): its type, bounds and description, as the
    definition states them."""
    shape = kind_of(item).api(item, most=MAX_SIZES)  # its type, bounds and what it adds to the description
    helped = item.api.described or item.help
    description = shape.described or (f"{helped} ({item.unit})" if item.unit else helped)
    if item.api.name is not None and not shape.described:
        description = f"{description} (as {item.api.name})"
    base: Any = shape.python
    said = shape.said
    if shape.each is not None:  # a list: each element held to its bounds (a type made at run time)
        base = list[Annotated[base, Field(**shape.each)]]
        if body:  # not a query's key repeated
            said = "" if shape.described else " (a JSON array)"
    annotation: Any = Annotated[base, Query(description=description + said, alias=item.api.name, **shape.query)]
    if item.required_on("api"):
        return inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    # The default as the API writes it (a fit's "auto" models: no list, every model); left out, the build fills it.
    default = None if item.default is None else kind_of(item).api_value(item, item.default)
    if default is None:
        base, query = get_args(annotation)
        annotation = Annotated[base | None, query]
    return inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _answered(request: Request, answer: dict[str, Any], *, dumped: bool = False) -> Any:
    """``answer`` as JSON; or its rows as CSV, same columns, for a client that asks for ``text/csv``.

    ``dumped``: the JSON written here (:func:`_dumped`) rather than by FastAPI through the route's model.
    """
    accepted = ""  # the first Accept header, as request.headers.get("accept", "") reads it, without building them all
    for name, value in request.scope["headers"]:
        if name == b"accept":
            accepted = value.decode("latin-1")
            break
    if "text/csv" in accepted and "application/json" not in accepted.split("text/csv")[0]:  # asked first
        from dpscale.web.export import csv_text

        return Response(csv_text(answer), media_type="text/csv; charset=utf-8")
    return _dumped(answer) if dumped else answer


def _dumped(answer: dict[str, Any]) -> Response:
    """``answer`` as the bytes FastAPI writes for it through its model, where the answer's keys are the model's
    fields in their order and its values already of their types (ints, finite floats, strings): pydantic's
    JSON of the dict itself, without a model built from it, checked and dumped on each request."""
    return Response(to_json(answer), media_type="application/json")


CSV_TOO: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/csv": {"schema": {"type": "string"}}},
        "description": "The answer; its rows as CSV with Accept: text/csv",
    }
}


def _computed(definition: Definition, answer: Callable[[Any], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """What a route does with the definition's inputs, from a query or a body: take each as its kind says (a text
    read as the English page reads it, a fit's points), build, answer; an error names the input as the API does."""
    taken = [(item, kind_of(item)) for item in definition.on("api")]
    named = {item.name: item.api.name for item in definition.on("api") if item.api.name}

    def compute(**values: Any) -> dict[str, Any]:
        try:
            for item, kind in taken:
                values[item.name] = kind.from_api(item, values[item.name])
            built = definition.build(values)
        except InvalidInput as exc:
            raise exc.renamed(named[exc.field]) if exc.field in named else exc from None
        return answer(built)

    return compute


def _scaled(devices: int, per_device_throughput: float, efficiency: float, unit: str) -> dict[str, Any]:
    """/api/v1/scaling's answer: :func:`~dpscale.scaling.scale` of the query's d, v and E.

    What SCALING's build makes of the same values, and its ``solution.scaling``: the query requires
    all three, so the build solves for A, by ``scale``; without the build's second look at values
    FastAPI has just held to the same bounds (its ``complete``), nor its choice of the unknown.
    """
    return scale(devices, per_device_throughput, efficiency, unit=unit).to_dict()


def _body(definition: Definition, *, strict: bool = False) -> type[BaseModel]:
    """The definition's inputs as a JSON body: the query's parameters, with the same types, bounds and defaults.

    For what a query string cannot carry (an nccl-tests log); unknown keys are refused, naming them.
    """
    fields: dict[str, Any] = {}
    for item in definition.on("api"):
        parameter = _parameter(item, body=True)
        base, query = get_args(parameter.annotation)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        extra = query.json_schema_extra
        field = Field(default, description=query.description, alias=query.alias, json_schema_extra=extra)
        fields[item.name] = (Annotated[(base, *query.metadata)] if query.metadata else base, field)
    config = ConfigDict(extra="forbid", strict=strict)  # strict: JSON's types as written (true is not a count)
    return create_model(f"{definition.name.capitalize()}In", __config__=config, **fields)


def _endpoint(
    definition: Definition, compute: Callable[..., dict[str, Any]], *, costly: bool = True, dumped: bool = False
) -> Callable[..., Any]:
    """A route function taking the definition's inputs as query parameters, answering what ``compute`` makes of
    them (:func:`_computed`: the definition's build); its JSON written by :func:`_dumped` with ``dumped``.

    A costly one is a ``def``: it runs in the thread pool, so it holds up no other request; a cheap
    one (a few multiplications) answers on the event loop, without the thread hop.
    """

    known = frozenset(item.api.name or item.name for item in definition.on("api"))
    lists = frozenset(
        item.api.name or item.name for item in definition.on("api") if kind_of(item).api(item, most=1).each is not None
    )

    def checked(request: Request, values: dict[str, Any]) -> Any:
        # A parameter the endpoint does not take (deadline for deadline_seconds) is refused by name,
        # not ignored: the answer would silently be to another question. Named parameters alone
        # (the usual case) are seen in one look; otherwise the first unknown one, in the query's order.
        # So is one value given twice where the parameter takes one (devices=64&devices=32).
        query = request.query_params
        if not known.issuperset(query.keys()):
            for name in query:
                if name in known:
                    continue
                accepted = N_("a parameter of this endpoint: %(names)s")
                raise InvalidInput(name, query[name], accepted, params={"names": ", ".join(sorted(known))})
        if len(query.multi_items()) != len(query):
            for name in query:
                given = query.getlist(name)
                if len(given) > 1 and name not in lists:
                    raise InvalidInput(name, " and ".join(given), N_("one value (the parameter given once)"))
        return _answered(request, compute(**values), dumped=dumped)

    def costly_route(request: Request, **values: Any) -> Any:
        return checked(request, values)

    async def quick(request: Request, **values: Any) -> Any:
        return checked(request, values)

    endpoint: Callable[..., Any] = costly_route if costly else quick
    parameters = [
        inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
        *(_parameter(item) for item in definition.on("api")),
    ]
    endpoint.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    endpoint.__name__ = f"api_{definition.name}"
    return endpoint


def _known_keys(model: type[BaseModel]) -> Callable[[Request], Any]:
    """A dependency that refuses a key of the JSON body ``model`` does not know, as a query's unknown parameter is.

    By its name, whole (the error's field is the key as sent, dots and all, however long: the body
    is bounded), with the keys the endpoint takes; before the model reads the body, so that a
    misspelt key is the one error, not one among the "missing" of the key it was meant to be.
    """
    known = frozenset(field.alias or name for name, field in model.model_fields.items())

    async def refuse_unknown_keys(request: Request) -> None:
        if not await request.body():
            return
        try:
            body = await request.json()  # FastAPI has read it already: this is its copy
        except (ValueError, RecursionError):  # not JSON, or nested past what Python decodes: the model says so
            return
        if not isinstance(body, dict):
            return
        for key, value in body.items():
            if key not in known:
                accepted = N_("a parameter of this endpoint: %(names)s")
                raise InvalidInput(key, value, accepted, params={"names": ", ".join(sorted(known))})

    return refuse_unknown_keys


def _prediction(request: PredictRequest) -> dict[str, Any]:
    prediction, found = request.predict(), request.levers()
    return {**prediction.to_dict(), "levers": [lever.to_dict() for lever in found]}


PredictIn = _body(PREDICT)
_predict_posted = _computed(PREDICT, _prediction)


def api_predict_posted(request: Request, body: PredictIn) -> Any:  # type: ignore[valid-type]  # a model made from the definition
    return _answered(request, _predict_posted(**body.model_dump()))  # type: ignore[attr-defined]


FitIn = _body(FIT, strict=True)  # as its body always was: "8" is not a device count
_fitted = _computed(FIT, lambda result: result.to_dict())


def api_fit(request: Request, body: FitIn) -> Any:  # type: ignore[valid-type]  # a fit of up to 10 000 points: off the event loop
    return _answered(request, _fitted(**body.model_dump()))  # type: ignore[attr-defined]


# The calculators answered on the event loop (a few multiplications), each with its answer's shape.
CHEAP: list[tuple[Definition, type[BaseModel] | Any, str]] = [
    (BATCH, BatchOut, "Effective batch size"),
    (PIPELINE, BubbleOut, "Pipeline bubble"),
    (
        PLAN,
        PlanOut | DeadlineOut,
        "Time, cost and energy of a run; with a deadline, the fewest devices that meet it",
    ),
]


def api_router(router: APIRouter | None = None) -> APIRouter:
    """``router`` (a new one by default) with the API's routes: ``create_app()`` gives its own, as nothing is
    routed at import."""
    router = APIRouter() if router is None else router
    router.add_api_route(
        "/api/v1/scaling",
        _endpoint(SCALING, _scaled, costly=False, dumped=True),  # to_dict's keys: ScalingOut's fields
        methods=["GET"],
        response_model=ScalingOut,
        responses={**bad_input, **CSV_TOO},
        summary="Ideal and actual throughput and speedup",
    )
    for definition, shape, summary in CHEAP:  # answered as the core's result says itself
        router.add_api_route(
            f"/api/v1/{definition.name}",
            _endpoint(definition, _computed(definition, lambda result: result.to_dict()), costly=False),
            methods=["GET"],
            response_model=shape,
            responses={**bad_input, **CSV_TOO},
            summary=summary,
        )
    router.add_api_route(
        "/api/v1/predict",
        _endpoint(PREDICT, _computed(PREDICT, _prediction)),
        methods=["GET"],
        response_model=PredictOut,
        responses={**bad_input, **CSV_TOO},
        summary="Scaling efficiency predicted from the interconnect, the gradients and the batch",
    )
    router.add_api_route(
        "/api/v1/predict",
        api_predict_posted,
        methods=["POST"],
        response_model=PredictOut,
        responses={**big_body, **CSV_TOO},
        summary="The same prediction, its inputs as a JSON body: what a query cannot carry, such as an nccl-tests log",
        dependencies=[Depends(_known_keys(PredictIn))],
    )
    router.add_api_route(
        "/api/v1/fit",
        api_fit,
        methods=["POST"],
        response_model=FitOut,
        responses={**big_body, **CSV_TOO},
        summary="Scaling models fitted to measured (devices, throughput) points, with predictions",
        dependencies=[Depends(_known_keys(FitIn))],
    )
    return router
