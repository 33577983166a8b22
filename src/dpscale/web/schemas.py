"""The JSON API's shapes: what each endpoint answers and takes, and the bounds its schema states."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dpscale import _validate, scaling

__all__ = [
    "MAX_DEVICES",
    "MAX_THROUGHPUT",
    "MIN_POSITIVE",
    "BatchOut",
    "BubbleOut",
    "DeadlineOut",
    "ErrorsOut",
    "FieldError",
    "FitOut",
    "ForecastOut",
    "LeverOut",
    "MemoryPlanOut",
    "MemoryOut",
    "ModelFitOut",
    "PlanOut",
    "PointOut",
    "PredictOut",
    "PredictionRowOut",
    "ScalingOut",
    "StepTimeOut",
]

# Bounds the API states in its schema, so that every schema-valid request gets an answer: the
# core's own bound on device counts (a billion), and the scaling calculator's on throughputs.
# The query parameters made from a definition (dpscale.inputs) take theirs from it.
MAX_DEVICES = _validate.MAX_DEVICES
MAX_THROUGHPUT = scaling.MAX_THROUGHPUT
MIN_POSITIVE = scaling.MIN_POSITIVE


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


class MemoryPlanOut(BaseModel):
    sharding: str
    params: float
    device_memory: float
    fewest_devices: int | None = Field(description="the fewest devices whose memory holds the model (null: none)")
    per_device: float = Field(description="bytes each device holds on the plan's devices")
    fits: bool


class PlanOut(ScalingOut):
    work: float
    seconds: float
    device_hours: float
    price_per_device_hour: float | None
    cost: float | None
    currency: str
    watts_per_device: float | None
    energy_kwh: float | None
    memory: MemoryPlanOut | None = None


class DeadlineOut(BaseModel):
    deadline_seconds: float
    plan: PlanOut
    options: list[PlanOut]
    requested: PlanOut | None = None
    memory: MemoryPlanOut | None = None


class StepTimeOut(BaseModel):
    total: float
    compute: float
    communication: float
    exposed_communication: float
    straggler_wait: float
    input_wait: float


class MemoryOut(BaseModel):
    """Bytes one device holds."""

    parameters: float
    gradients: float
    optimizer_states: float
    buffers: float
    activations: float
    total: float


class PredictionRowOut(BaseModel):
    devices: int
    efficiency: float
    efficiency_interval: list[float] = Field(
        min_length=2, max_length=2, description="low and high bounds of E at the interval level (90 % by default)"
    )
    actual_throughput: float
    actual_throughput_interval: list[float] = Field(
        min_length=2, max_length=2, description="low and high bounds of A at the interval level"
    )
    speedup: float
    bottleneck: str
    step_time: StepTimeOut
    memory_per_device: MemoryOut
    communication_volume: float = Field(description="bytes each device sends per optimizer step")
    fits: bool | None = Field(description="whether the device's memory holds it (null: its memory not given)")
    tokens_per_second: float | None = Field(
        None, description="the cluster's tokens/s, A times tokens_per_sample (null: tokens_per_sample not given)"
    )
    tokens_per_second_interval: list[float] | None = Field(
        None, min_length=2, max_length=2, description="low and high bounds of the cluster's tokens/s"
    )
    tokens_per_second_per_device: float | None = Field(None, description="one device's share of the tokens/s")
    mfu: float | None = Field(
        None,
        description="model FLOPs utilization: tokens/s x FLOPs per token / (devices x peak_flops) "
        "(null: peak_flops not given)",
    )
    mfu_interval: list[float] | None = Field(None, min_length=2, max_length=2, description="low and high bounds of MFU")


class LeverOut(BaseModel):
    name: str
    description: str
    efficiency: float
    gain: float
    fits: bool | None
    term: str  # the step's term the lever acts on
    assumed: bool  # whether that term's figure rests on an assumption alone
    condition: str | None  # the assumption the lever's gain rests on, said as a condition


class PredictOut(BaseModel):
    predictions: list[PredictionRowOut]
    assumptions: dict[str, Any]
    warnings: list[str]  # measurements that contradict the rest, or a calibration at a prior's bound
    levers: list[LeverOut]


class PointOut(BaseModel):
    devices: int
    throughput: float = Field(description="the cluster's throughput measured at that size")


class ForecastOut(BaseModel):
    devices: int
    throughput: float = Field(description="A(n), the fitted model's throughput at that size")
    interval: list[float | None] = Field(
        min_length=2,
        max_length=2,
        description="the 95 % prediction interval on A(n) (nulls: too few points to build one; a low of 0 where "
        "the interval reached below 0, which the warnings say)",
    )
    efficiency: float | None = Field(description="E(n) = A(n) / (n·A(1))")
    extrapolated: bool = Field(description="beyond the largest measured size")


class ModelFitOut(BaseModel):
    model: str
    formula: str
    source: str = Field(description="where the model comes from")
    params: dict[str, float] = Field(description="the fitted parameters by name (lambda, sigma, kappa...)")
    standard_errors: dict[str, float | None] = Field(description="each parameter's (null: too few points)")
    rss: float | None = Field(description="the residual sum of squares")
    r2: float | None
    aicc: float | None = Field(
        description="the corrected Akaike criterion the models are ranked by (null: too few points)"
    )
    peak_devices: float | None = Field(description="the USL's size of highest throughput")
    skipped: str | None = Field(description="why the model was not fitted (null: it was)")
    predictions: list[ForecastOut]


class FitOut(BaseModel):
    points: list[PointOut] = Field(description="the measurements fitted, by size")
    chosen: str = Field(description="the model the AICc ranks first")
    peak_devices: float | None = Field(description="the USL's peak, where the data can say it")
    warnings: list[str]
    models: list[ModelFitOut]


class FieldError(BaseModel):
    field: str
    message: str


class ErrorsOut(BaseModel):
    errors: list[FieldError]
