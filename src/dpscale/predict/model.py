"""Step time of a data-parallel job on n devices, and the scaling efficiency that follows.

One optimizer step on each device:

    T_c        = k·b / v                       compute: k micro-steps of b samples at v samples/s
    T_bwd      = share_bwd · b / v             the last micro-step's backward pass, which DDP
                                               overlaps with the gradient all-reduce
    T_comm     = Σ_buckets all_reduce(bucket)  the gradient G = P·bytes in DDP buckets (25 MiB)
    T_exposed  = end of the last bucket's all-reduce − T_bwd
                 buckets become ready evenly through the backward pass and are all-reduced one
                 after another on one stream; the last bucket cannot overlap. Without overlap,
                 T_exposed = T_comm. What overlaps still costs a share ρ of itself
                 (``interference``, 0 unless calibrated): NCCL's kernels take streaming
                 multiprocessors and memory bandwidth from the compute they run beside, so
                 T_exposed += ρ·(T_comm − T_exposed).
    T_wait     = T_c · cv · √(2 ln n)           waiting for the slowest of n ranks whose step times
                                               vary with coefficient of variation cv (the expected
                                               maximum of n normal draws, to first order)
    T_input    = k · max(0, g·b/L − b/v)        when the input pipeline of a node (loading,
                                               decoding, augmenting) sustains L samples/s for all
                                               its g = min(n, devices per node) devices: it runs
                                               ahead of the compute (prefetch), so a micro-step
                                               takes the longer of the two. Only when L is given.
    T_step(n)  = T_c + T_exposed + T_wait + T_input
    E(n)       = T_step(1) / T_step(n),  A(n) = n·v·E(n),  S(n) = n·E(n)

Gradient accumulation (k > 1) synchronises only on the last micro-step (DDP's no_sync), so it
spreads one all-reduce over k times the compute. Every term is reported per device count, so the
largest one is the bottleneck to work on.

That is replicated data parallelism (DDP). Sharded strategies (ZeRO 1–3, FSDP, HSDP) replace
T_comm and T_exposed with their reduce-scatters and all-gathers (:mod:`dpscale.predict.sharding`),
which also says what each device holds in memory.

A reference measurement (the whole cluster's throughput A_N measured on N devices) may stand in
for one device's throughput: the compute time is then the one for which the model's step time at
N gives A_N back, and E(n) is stated relative to N, T_step(N) / T_step(n), as LLM reports do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, get_args

import numpy as np
import numpy.typing as npt

from dpscale import _validate
from dpscale.errors import N_, InvalidInput
from dpscale.predict import pricing, uncertainty
from dpscale.predict import sharding as sharded
from dpscale.predict.collectives import Link
from dpscale.predict.defaults import BACKWARD_SHARE, Sharding
from dpscale.predict.job import Cluster, Reference, Workload, assumptions
from dpscale.predict.prediction import Memory, Prediction
from dpscale.predict.uncertainty import LEVEL

__all__ = [
    "Cluster",
    "Lever",
    "Memory",
    "Prediction",
    "Reference",
    "Workload",
    "evaluator",
    "input_wait",
    "levers",
    "predict",
    "step_terms",
    "time_terms",
    "with_interval",
]

Array = npt.NDArray[Any]


def _devices(devices: Any) -> Array:
    n = np.atleast_1d(np.asarray(devices))
    if n.size == 0 or n.ndim != 1 or not np.issubdtype(n.dtype, np.number) or n.dtype == np.bool_:
        raise InvalidInput("devices", devices, "one or more whole numbers of at least 1")
    if not (np.all(np.isfinite(n)) and np.all(n >= 1) and np.all(n == np.floor(n))):
        raise InvalidInput("devices", devices, "whole numbers of at least 1")
    if not np.all(n <= _validate.MAX_DEVICES):
        raise InvalidInput("devices", devices, _validate.DEVICE_COUNT)
    return n.astype(np.int64)


def step_terms(
    devices: Any,
    per_device_throughput: Any,
    batch: Any,
    gradient_bytes: Any,
    accumulation: Any,
    cluster: Cluster,
) -> tuple[Any, Any, Any, Any]:
    """Compute, communication, exposed communication and straggler wait per step (seconds).

    The one place for the formulas of the module docstring, for DDP; every argument but
    ``cluster`` broadcasts, so a grid of millions of configurations is one call. Inputs are not
    checked here (see :func:`predict`).
    """
    n = np.asarray(devices, dtype=np.float64)
    micro = np.divide(batch, per_device_throughput)
    compute = micro if np.all(np.equal(accumulation, 1)) else np.multiply(accumulation, micro)
    wait = compute * cluster.jitter * np.sqrt(2 * np.log(n)) if cluster.jitter else 0.0
    buckets = np.maximum(1.0, np.ceil(np.divide(gradient_bytes, cluster.bucket_bytes)))
    found = pricing.terms(cluster, "all_reduce", n)
    measured = pricing.measured_shapes(cluster, "all_reduce")
    # a + c·S per bucket of S = G/buckets; all of them: buckets·a + c·G. auto takes the fastest per bucket.
    if len(found) == 1 and not cluster.overlap and not measured:
        a, c = found[0]
        communication = buckets * a
        communication += c * gradient_bytes
        exposed = communication
    else:
        bucket_size = np.divide(gradient_bytes, buckets)
        per_bucket = found[0][0] + found[0][1] * bucket_size
        for a, c in found[1:]:
            np.minimum(per_bucket, a + c * bucket_size, out=per_bucket)
        if measured:  # a shape a run measured: its own times
            per_bucket = pricing.given_back(cluster, "all_reduce", n, bucket_size, per_bucket)
        communication = per_bucket * buckets
        exposed = sharded.exposed(per_bucket, buckets, BACKWARD_SHARE * micro, cluster.overlap)
    return compute, communication, exposed, wait


def input_wait(
    devices: Any, per_device_throughput: Any, batch: Any, accumulation: Any, input_throughput: Any, per_node: int
) -> Any:
    """T_input: the time per step the devices of a node wait for their shared input pipeline.

    Each micro-step a node's g = min(n, per_node) devices need g·b samples, which the pipeline
    delivers in g·b/L while the devices compute for b/v; it works ahead, so only the excess waits.
    """
    sharing = np.minimum(np.asarray(devices, dtype=np.float64), per_node)
    excess = np.multiply(sharing, batch) / input_throughput - np.divide(batch, per_device_throughput)
    return np.multiply(accumulation, np.maximum(excess, 0.0))


def time_terms(n: Array, w: Workload, c: Cluster) -> tuple[Array, ...]:
    """Compute, communication, exposed communication, straggler wait and input wait, per device count."""
    with np.errstate(all="ignore"):  # overflow is checked by the caller and named
        compute, communication, exposed, wait = step_terms(
            n, w.per_device_throughput, w.batch, w.gradient_bytes, w.accumulation, c
        )
        if c.sharding != "ddp":
            micro = w.batch / w.per_device_throughput
            sizes = (w.params, w.grad_bytes, w.param_bytes, w.accumulation, w.layers)
            communication, exposed = sharded.sharded_terms(n, micro, *sizes, c)
        if c.interference:
            exposed = exposed + c.interference * np.maximum(np.subtract(communication, exposed), 0.0)
        fed = (
            0.0
            if w.input_throughput is None
            else input_wait(n, w.per_device_throughput, w.batch, w.accumulation, w.input_throughput, c.devices_per_node)
        )
    return tuple(
        np.broadcast_to(np.asarray(term, dtype=np.float64), n.shape).copy()
        for term in (compute, communication, exposed, wait, fed)
    )


def _calibrated(reference: Reference, workload: Workload, cluster: Cluster) -> Workload:
    """The workload whose one-device speed makes the model's step time at N give the measured A_N back.

    The step time grows with the compute time, so the root of log T_step(speed) − log T_step(N)
    over log speed is found by Brent's method (SciPy), within 1e-12 of it.
    """
    from scipy.optimize import brentq

    n = np.asarray([float(reference.devices)])
    target = workload.batch * workload.accumulation * reference.devices / reference.throughput  # T_step(N)

    def gap(log_speed: float) -> float:
        speed = math.exp(log_speed)
        with np.errstate(all="ignore"):
            terms = time_terms(n, replace(workload, per_device_throughput=speed, input_throughput=None), cluster)
        step = float(terms[0][0] + terms[2][0] + terms[3][0])
        return math.log(step / target) if step > 0 and math.isfinite(step) else math.inf

    measured = reference.throughput / reference.devices
    # the compute alone is at least as fast as the measured step, and at most 10¹² times, within floating point
    low = math.log(measured)
    high = min(low + 12 * math.log(10), math.log(np.finfo(float).max) - 1)
    if gap(high) > 0:
        raise InvalidInput(
            "measured",
            f"{reference.devices}:{reference.throughput:g}",
            N_("a throughput the interconnect allows at that size: its communication alone takes longer"),
        )
    if gap(low) <= 0:  # nothing but compute at that size
        return replace(workload, per_device_throughput=math.exp(low))
    root = brentq(gap, low, high, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=200)
    return replace(workload, per_device_throughput=math.exp(root))


def predict(
    devices: Any,
    workload: Workload,
    cluster: Cluster,
    *,
    reference: Reference | None = None,
    level: float = LEVEL,
    jitter_known: bool = False,
) -> Prediction:
    """Predict E(n), A(n), the step-time terms and the memory per device for each device count in ``devices``.

    With a ``reference`` measurement, one device's compute speed is calibrated on it and E(n) is
    relative to its size. The interval at ``level`` spans what the unknowns' priors allow
    (:mod:`dpscale.predict.uncertainty`) around the prediction as given, cv's only unless
    ``jitter_known``; measurements narrow it (:mod:`dpscale.predict.calibration`).

    >>> from dpscale.predict.collectives import Link
    >>> p = predict([1, 8], Workload(938, 256, 25.6e6), Cluster(Link(300e9, 3e-6, 0.8)))
    >>> [round(float(e), 3) for e in p.efficiency]
    [1.0, 0.96]
    """
    n = _devices(devices)
    point = _point(n, workload, cluster, reference)
    names = uncertainty.unknowns(cluster, jitter_known=jitter_known)
    prior = uncertainty.priors(cluster)
    centre, covariance = uncertainty.prior_centre(names, prior)
    evaluate = evaluator(n, workload, cluster, reference)
    spread = uncertainty.spread_at(n, None if reference is None else reference.devices)
    _, low, high = uncertainty.band(evaluate, names, centre, covariance, level, spread=spread, prior=prior)
    # the prediction as given need not sit at the priors' medians: the interval holds it too
    return with_interval(point, np.minimum(low, point.efficiency), np.maximum(high, point.efficiency), level)


def evaluator(n: Array, workload: Workload, cluster: Cluster, reference: Reference | None) -> Any:
    """E(n) for values of the unknowns (cv, network share), recalibrated on ``reference`` for each."""

    def evaluate(values: Any) -> Array:
        c = uncertainty.apply(cluster, values)
        return _point(n, workload, c, reference).efficiency

    return evaluate


def with_interval(p: Prediction, low: Array, high: Array, level: float) -> Prediction:
    """``p`` with its efficiency interval, each bound kept within (0, E] and [E, ∞)."""
    low = np.clip(np.minimum(low, p.efficiency), np.finfo(float).tiny, None)
    return replace(p, efficiency_low=low, efficiency_high=np.maximum(high, p.efficiency), level=level)


def _point(n: Array, workload: Workload, cluster: Cluster, reference: Reference | None) -> Prediction:
    """The prediction at the values given: no interval."""
    c = cluster
    w = workload if reference is None else _calibrated(reference, workload, cluster)
    compute, communication, exposed, wait, fed = time_terms(n, w, c)
    with np.errstate(over="ignore"):
        step = compute + exposed + wait + fed  # every term ≥ 0: the sum is finite only if each term is
    if not (np.all(np.isfinite(step)) and np.all(np.isfinite(communication)) and np.all(compute > 0)):
        # Products of extreme inputs (a batch of 1e300 at 1e-300 samples/s) leave floating point, and
        # so can a finite compute time of 1.7e308 s once the wait for stragglers is added to it.
        raise InvalidInput(
            "batch", w.batch, "a batch, throughput and model size whose step times are finite and above 0"
        )
    _validate.finite_result("per_device_throughput", w.per_device_throughput, float(n.max()) * w.per_device_throughput)
    reference_step = None
    if reference is not None:
        reference_step = w.batch * w.accumulation * reference.devices / reference.throughput
    return Prediction(
        n,
        compute,
        communication,
        exposed,
        wait,
        fed,
        w,
        c,
        sharded.memory(n, w, c),
        np.broadcast_to(sharded.communication_volume(n, w, c), n.shape).astype(np.float64),
        assumptions(w, c, reference),
        None if reference is None else reference.devices,
        reference_step,
    )


@dataclass(frozen=True, slots=True)
class Lever:
    """A what-if: the change, and the efficiency it gives at the largest device count asked for.

    ``fits``: whether each device's memory then holds what it must (None: its memory was not given).
    """

    name: str
    description: str
    efficiency: float
    gain: float  # points of efficiency over the prediction as given
    fits: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "efficiency": self.efficiency,
            "gain": self.gain,
            "fits": self.fits,
        }


def levers(devices: Any, workload: Workload, cluster: Cluster, *, reference: Reference | None = None) -> list[Lever]:
    """The seed FAQ's levers and the other sharding strategies, each tried alone at the largest
    device count; those that fit in the device's memory first, then the most efficient."""
    n = int(_devices(devices).max())
    if reference is not None:
        workload = _calibrated(reference, workload, cluster)

    def outcome(w: Workload, c: Cluster) -> tuple[float, bool | None]:
        p = _point(np.asarray([n]), w, c, None)
        fits = None if p.fits is None else bool(p.fits[0])
        if reference is None:
            return float(p.efficiency[0]), fits
        # relative to the measurement: what each device delivers against what it delivered there
        return float(p.actual_throughput[0]) / n / (reference.throughput / reference.devices), fits

    base, _ = outcome(workload, cluster)

    def faster(link: Link) -> Link:
        return replace(link, bandwidth=2 * link.bandwidth)

    options: list[tuple[str, str, Workload, Cluster]] = [
        ("batch", "double the per-device batch", replace(workload, batch=2 * workload.batch), cluster),
        (
            "accumulation",
            "accumulate twice as many micro-steps",
            replace(workload, accumulation=2 * workload.accumulation),
            cluster,
        ),
        (
            "intra_bandwidth",
            "double the bandwidth inside a node",
            workload,
            cluster.with_links(faster, tier="intra"),
        ),
        ("overlap", "overlap communication with the backward pass", workload, replace(cluster, overlap=True)),
        ("balance", "balance the load: no step-time variation", workload, replace(cluster, jitter=0.0)),
    ]
    if workload.grad_bytes > 2:  # already 16 bits or fewer: nothing to offer
        options.append(
            ("fp16_gradients", "all-reduce gradients in 16 bits", replace(workload, grad_bytes=2.0), cluster)
        )
    if workload.input_throughput is not None:
        options.append(
            (
                "input",
                "double the input pipeline's throughput",
                replace(workload, input_throughput=2 * workload.input_throughput),
                cluster,
            )
        )
    if cluster.inter is not None:
        options.append(
            (
                "inter_bandwidth",
                "double the network bandwidth between nodes",
                workload,
                cluster.with_links(faster, tier="inter"),
            )
        )
    for algorithm in ("ring", "tree", "hierarchical"):
        if algorithm != cluster.algorithm:
            options.append(
                (
                    f"algorithm_{algorithm}",
                    f"use the {algorithm} all-reduce",
                    workload,
                    replace(cluster, algorithm=algorithm),
                )
            )
    for strategy in get_args(Sharding):
        if strategy != cluster.sharding:
            instead = f"{strategy} instead of {cluster.sharding}"
            group = cluster.shard_group if strategy == "hybrid" else None
            options.append(
                (f"sharding_{strategy}", instead, workload, replace(cluster, sharding=strategy, shard_group=group))
            )
    out = []
    for name, description, w, c in options:
        if c == cluster and w == workload:
            continue  # already in effect
        try:
            e, fits = outcome(w, c)
        except InvalidInput:  # a what-if past floating point (doubling 1e307 parameters): left out
            continue
        out.append(Lever(name, description, e, e - base, fits))
    return sorted(out, key=lambda lever: (lever.fits is not False, lever.efficiency), reverse=True)
