"""Step time of a data-parallel job on n devices, and the scaling efficiency that follows.

One optimizer step on each device:

    T_c        = k·b / v                       compute: k micro-steps of b samples at v samples/s
    T_bwd      = share_bwd · b / v             the last micro-step's backward pass, which DDP
                                               overlaps with the gradient all-reduce
    T_comm     = Σ_buckets all_reduce(bucket)  the gradient G = P·bytes in DDP buckets (25 MiB)
    T_exposed  = end of the last bucket's all-reduce − T_bwd
                 buckets become ready evenly through the backward pass and are all-reduced one
                 after another on one stream; the last bucket cannot overlap. Without overlap,
                 T_exposed = T_comm.
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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dpscale import _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput
from dpscale.predict.collectives import Link, candidates
from dpscale.predict.defaults import ALGORITHMS, DDP_BUCKET_BYTES, DEFAULT_JITTER, Algorithm

__all__ = ["Cluster", "Lever", "Prediction", "Workload", "levers", "predict", "step_terms", "input_wait"]

BACKWARD_SHARE = 2 / 3  # backward ≈ 2 × forward: two matrix products per weight for one
Bottleneck = Literal["compute", "communication", "stragglers", "input"]
Array = npt.NDArray[Any]


@dataclass(frozen=True, slots=True)
class Workload:
    """What one device runs: ``per_device_throughput`` samples/s alone, at micro-batch ``batch``.

    ``input_throughput``, when known, is what the input pipeline of one node sustains in all
    (samples/s), shared by the node's devices; one device alone ran at ``per_device_throughput``
    with it, so it is at least that.
    """

    per_device_throughput: float
    batch: float
    params: float
    grad_bytes: float = 4.0
    accumulation: int = 1
    input_throughput: float | None = None

    def __post_init__(self) -> None:
        # Stored as validated: floats (an int of 2**63 would overflow numpy's integers) and a whole k.
        for name in ("per_device_throughput", "batch", "params", "grad_bytes"):
            object.__setattr__(self, name, _validate.positive(name, getattr(self, name)))
        object.__setattr__(self, "accumulation", _validate.whole("accumulation", self.accumulation))
        if self.input_throughput is not None:
            object.__setattr__(self, "input_throughput", _validate.positive("input_throughput", self.input_throughput))
            if self.input_throughput < self.per_device_throughput:
                raise InvalidInput(
                    "input_throughput",
                    self.input_throughput,
                    N_(
                        "at least the per-device throughput (%(v)s): one device alone ran at that speed with "
                        "this input pipeline"
                    ),
                    params={"v": f"{self.per_device_throughput:g}"},
                )

    @property
    def gradient_bytes(self) -> float:
        """G = P · bytes per gradient."""
        return self.params * self.grad_bytes


@dataclass(frozen=True, slots=True)
class Cluster:
    """The devices' links: ``intra`` inside a node of ``devices_per_node``, ``inter`` per node."""

    intra: Link
    devices_per_node: int = 8
    inter: Link | None = None
    algorithm: Algorithm = "auto"
    overlap: bool = True
    bucket_bytes: float = DDP_BUCKET_BYTES
    jitter: float = DEFAULT_JITTER

    def __post_init__(self) -> None:
        _validate.whole("devices_per_node", self.devices_per_node)
        if self.algorithm not in ALGORITHMS:
            raise InvalidInput(
                "algorithm", self.algorithm, N_("one of %(choices)s"), params={"choices": ", ".join(ALGORITHMS)}
            )
        _validate.positive("bucket", self.bucket_bytes)
        if not (0 <= self.jitter < 1):
            raise InvalidInput("jitter", self.jitter, "a coefficient of variation from 0 to below 1 (0.02 is 2 %%)")


@dataclass(frozen=True)
class Prediction(ShowsAsTable):
    """E(n), A(n), S(n) and the step-time terms, one element per device count."""

    devices: Array
    compute_time: Array
    communication_time: Array
    exposed_communication: Array
    straggler_wait: Array
    input_wait: Array
    workload: Workload
    cluster: Cluster
    assumptions: dict[str, Any] = field(default_factory=dict)

    @property
    def step_time(self) -> Array:
        return np.asarray(self.compute_time + self.exposed_communication + self.straggler_wait + self.input_wait)

    @property
    def efficiency(self) -> Array:
        """E(n) = T_step(1) / T_step(n); T_step(1) is the compute alone."""
        return np.asarray(self.compute_time / self.step_time)

    @property
    def actual_throughput(self) -> Array:
        return np.asarray(self.devices * self.workload.per_device_throughput * self.efficiency)

    @property
    def speedup(self) -> Array:
        return np.asarray(self.devices * self.efficiency)

    @property
    def bottleneck(self) -> list[Bottleneck]:
        """What costs most beyond the compute itself, per device count ("compute" when nothing does)."""
        names: tuple[Bottleneck, ...] = ("communication", "stragglers", "input")
        extra = np.stack([self.exposed_communication, self.straggler_wait, self.input_wait])
        largest = np.argmax(extra, axis=0)  # ties: the first, communication
        return [
            "compute" if value == 0 else names[i]
            for i, value in zip(largest.tolist(), extra.max(axis=0).tolist(), strict=True)
        ]

    def to_dict(self) -> dict[str, Any]:
        columns = zip(
            self.devices.tolist(),
            self.efficiency.tolist(),
            self.actual_throughput.tolist(),
            self.speedup.tolist(),
            self.bottleneck,
            self.step_time.tolist(),
            self.compute_time.tolist(),
            self.communication_time.tolist(),
            self.exposed_communication.tolist(),
            self.straggler_wait.tolist(),
            self.input_wait.tolist(),
            strict=True,
        )  # each column computed once: a row per device count, linear in their number
        rows = [
            {
                "devices": n,
                "efficiency": e,
                "actual_throughput": a,
                "speedup": s,
                "bottleneck": b,
                "step_time": {
                    "total": total,
                    "compute": compute,
                    "communication": comm,
                    "exposed_communication": exposed,
                    "straggler_wait": straggler,
                    "input_wait": wait,
                },
            }
            for n, e, a, s, b, total, compute, comm, exposed, straggler, wait in columns
        ]
        return {"predictions": rows, "assumptions": self.assumptions}


def _devices(devices: Any) -> Array:
    n = np.atleast_1d(np.asarray(devices))
    if n.size == 0 or n.ndim != 1 or not np.issubdtype(n.dtype, np.number) or n.dtype == np.bool_:
        raise InvalidInput("devices", devices, "one or more whole numbers of at least 1")
    if not (np.all(np.isfinite(n)) and np.all(n >= 1) and np.all(n == np.floor(n))):
        raise InvalidInput("devices", devices, "whole numbers of at least 1")
    if not np.all(n <= _validate.MAX_DEVICES):
        raise InvalidInput("devices", devices, _validate.DEVICE_COUNT)
    return n.astype(np.int64)


def _exposed(bucket_time: Any, buckets: Any, backward: Any, overlap: bool) -> Any:
    """Time the last bucket's all-reduce ends after the backward pass (broadcasts over everything).

    Bucket i of b becomes ready at backward·i/b and the reductions run one at a time, each taking
    c: the last ends at max over i of ready_i + (b − i + 1)·c. That is linear in i, so the maximum
    is at i = 1 or i = b: max(backward/b + b·c, backward + c).
    """
    if not overlap:
        return bucket_time * buckets
    end = np.maximum(backward / buckets + buckets * bucket_time, backward + bucket_time)
    return np.maximum(end - backward, 0.0)


def step_terms(
    devices: Any,
    per_device_throughput: Any,
    batch: Any,
    gradient_bytes: Any,
    accumulation: Any,
    cluster: Cluster,
) -> tuple[Any, Any, Any, Any]:
    """Compute, communication, exposed communication and straggler wait per step (seconds).

    The one place for the formulas of the module docstring; every argument but ``cluster``
    broadcasts, so a grid of millions of configurations is one call. Inputs are not checked here
    (see :func:`predict`).
    """
    n = np.asarray(devices, dtype=np.float64)
    micro = np.divide(batch, per_device_throughput)
    compute = micro if np.all(np.equal(accumulation, 1)) else np.multiply(accumulation, micro)
    buckets = np.maximum(1.0, np.ceil(np.divide(gradient_bytes, cluster.bucket_bytes)))
    per_node = cluster.devices_per_node if cluster.inter is not None else None
    found = candidates(n, intra=cluster.intra, inter=cluster.inter, per_node=per_node, algorithm=cluster.algorithm)
    # a + c·S per bucket of S = G/buckets; all of them: buckets·a + c·G. auto takes the fastest per bucket.
    if len(found) == 1 and not cluster.overlap:
        a, c = found[0]
        communication = buckets * a
        communication += c * gradient_bytes
        exposed = communication
    else:
        bucket_size = np.divide(gradient_bytes, buckets)
        per_bucket = found[0][0] + found[0][1] * bucket_size
        for a, c in found[1:]:
            np.minimum(per_bucket, a + c * bucket_size, out=per_bucket)
        communication = per_bucket * buckets
        exposed = _exposed(per_bucket, buckets, BACKWARD_SHARE * micro, cluster.overlap)
    wait = compute * cluster.jitter * np.sqrt(2 * np.log(n)) if cluster.jitter else 0.0
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


def predict(devices: Any, workload: Workload, cluster: Cluster) -> Prediction:
    """Predict E(n), A(n) and the step-time terms for each device count in ``devices``.

    >>> from dpscale.predict.collectives import Link
    >>> p = predict([1, 8], Workload(938, 256, 25.6e6), Cluster(Link(300e9, 3e-6, 0.8)))
    >>> [round(float(e), 3) for e in p.efficiency]
    [1.0, 0.96]
    """
    n = _devices(devices)
    w, c = workload, cluster
    with np.errstate(all="ignore"):  # overflow is checked just below and named
        terms = step_terms(n, w.per_device_throughput, w.batch, w.gradient_bytes, w.accumulation, c)
        waiting_for_input = (
            0.0
            if w.input_throughput is None
            else input_wait(n, w.per_device_throughput, w.batch, w.accumulation, w.input_throughput, c.devices_per_node)
        )
    compute, communication, exposed, wait, fed = (
        np.broadcast_to(np.asarray(term, dtype=np.float64), n.shape).copy() for term in (*terms, waiting_for_input)
    )
    with np.errstate(over="ignore"):
        step = compute + exposed + wait + fed  # every term ≥ 0: the sum is finite only if each term is
    if not (np.all(np.isfinite(step)) and np.all(np.isfinite(communication)) and np.all(compute > 0)):
        # Products of extreme inputs (a batch of 1e300 at 1e-300 samples/s) leave floating point, and
        # so can a finite compute time of 1.7e308 s once the wait for stragglers is added to it.
        raise InvalidInput(
            "batch", w.batch, "a batch, throughput and model size whose step times are finite and above 0"
        )
    _validate.finite_result("per_device_throughput", w.per_device_throughput, float(n.max()) * w.per_device_throughput)
    gradient = w.gradient_bytes
    buckets = max(1, math.ceil(gradient / c.bucket_bytes))
    assumptions = {
        "gradient_bytes": gradient,
        "buckets": buckets,
        "bucket_bytes": c.bucket_bytes,
        "backward_share": BACKWARD_SHARE,
        "algorithm": c.algorithm,
        "overlap": c.overlap,
        "jitter": c.jitter,
        "devices_per_node": c.devices_per_node,
        "intra": {"bandwidth": c.intra.bandwidth, "latency": c.intra.latency, "efficiency": c.intra.efficiency},
        "inter": None
        if c.inter is None
        else {"bandwidth": c.inter.bandwidth, "latency": c.inter.latency, "efficiency": c.inter.efficiency},
        "input_throughput": w.input_throughput,
        "not_modelled": ("the input pipeline (no input_throughput given), " if w.input_throughput is None else "")
        + "host contention, compute slowed by concurrent NCCL kernels, "
        "power and clock limits when every device of a node runs",
    }
    return Prediction(n, compute, communication, exposed, wait, fed, w, c, assumptions)


@dataclass(frozen=True, slots=True)
class Lever:
    """A what-if: the change, and the efficiency it gives at the largest device count asked for."""

    name: str
    description: str
    efficiency: float
    gain: float  # points of efficiency over the prediction as given

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "efficiency": self.efficiency, "gain": self.gain}


def levers(devices: Any, workload: Workload, cluster: Cluster) -> list[Lever]:
    """The seed FAQ's levers, each tried alone at the largest device count, best first."""
    n = int(_devices(devices).max())
    base = float(predict([n], workload, cluster).efficiency[0])

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
            replace(cluster, intra=faster(cluster.intra)),
        ),
        ("overlap", "overlap communication with the backward pass", workload, replace(cluster, overlap=True)),
        ("balance", "balance the load: no step-time variation", workload, replace(cluster, jitter=0.0)),
        (
            "fp16_gradients",
            "all-reduce gradients in 16 bits",
            replace(workload, grad_bytes=workload.grad_bytes / 2),
            cluster,
        ),
    ]
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
                replace(cluster, inter=faster(cluster.inter)),
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
    out = []
    for name, description, w, c in options:
        if c == cluster and w == workload:
            continue  # already in effect
        try:
            e = float(predict([n], w, c).efficiency[0])
        except InvalidInput:  # a what-if past floating point (doubling 1e307 parameters): left out
            continue
        out.append(Lever(name, description, e, e - base))
    return sorted(out, key=lambda lever: lever.efficiency, reverse=True)
