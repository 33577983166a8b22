"""The JSON API, /api/v1: read the query (or body), call the core, answer its result as JSON.

The cheap calculators answer on the event loop (``async def``); a prediction or a fit, whose cost
grows with what is asked, runs in the thread pool (``def``) so that it holds up no other request.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from dpscale import batch, pipeline, plan, scaling
from dpscale._validate import LABEL_LENGTH, LABEL_PATTERN
from dpscale.errors import InvalidInput, MissingInput
from dpscale.web.schemas import (
    MAX_COUNT,
    MAX_DEVICES,
    MAX_SECONDS,
    MAX_THROUGHPUT,
    MAX_WORK,
    MIN_POSITIVE,
    BatchOut,
    BubbleOut,
    DeadlineOut,
    ErrorsOut,
    FitIn,
    PlanOut,
    PredictOut,
    ScalingOut,
)
from dpscale.web.security import MAX_BODY, MAX_QUERY, MAX_SIZES

__all__ = ["router"]

router = APIRouter()


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


@router.get(
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


@router.get("/api/v1/batch", response_model=BatchOut, responses=bad_input, summary="Effective batch size")
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


@router.get("/api/v1/pipeline", response_model=BubbleOut, responses=bad_input, summary="Pipeline bubble")
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


@router.get(
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
        return plan.devices_for_deadline(work, deadline_seconds, per_device_throughput, efficiency, **money).to_dict()
    return plan.plan(work, devices or 1, per_device_throughput, efficiency, **money).to_dict()


@router.get(
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


@router.post(
    "/api/v1/fit",
    responses=big_body,
    summary="Scaling models fitted to measured (devices, throughput) points, with predictions",
)
def api_fit(body: FitIn) -> dict[str, Any]:  # a fit of up to 10 000 points: off the event loop
    from dpscale import fit as fitting

    return fitting.fit([(p.devices, p.throughput) for p in body.points], models=body.models, at=body.at).to_dict()
