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
    T_wait     = T_c · (f + cv·(√(2 ln g) + √(2 ln m)))
                                               waiting for the slowest rank: the g = min(n, devices
                                               per node) ranks of a node and the m = n/(devices per
                                               node) nodes (at least 1) each vary at random with
                                               coefficient of variation cv, and the slowest of k normal
                                               draws is about √(2 ln k) standard deviations above their
                                               mean (to first order); a rank's own noise and its node's
                                               (host, network card, switch port) add. f is a fixed
                                               imbalance: one rank slower by f of the step every step
                                               (as traces show it), the same at any n ≥ 2
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

What the hardware does not say (cv, the network's achieved share, the interference ρ) is taken at
the median of its prior or of its calibration, for the estimate and its interval alike
(:mod:`dpscale.predict.uncertainty`).

A reference measurement (the whole cluster's throughput A_N measured on N devices) may stand in
for one device's throughput: the compute time is then the one for which the model's step time at
N gives A_N back, and E(n) is stated relative to N, T_step(N) / T_step(n), as LLM reports do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from dpscale import _validate
from dpscale.errors import N_, InvalidInput
from dpscale.predict import pricing, sources, uncertainty
from dpscale.predict import sharding as sharded
from dpscale.predict.defaults import BACKWARD_SHARE
from dpscale.predict.job import Cluster, Reference, Workload, assumptions
from dpscale.predict.prediction import Memory, Prediction
from dpscale.predict.uncertainty import LEVEL

__all__ = [
    "Cluster",
    "Imbalanced",
    "Memory",
    "Prediction",
    "Reference",
    "Workload",
    "below",
    "estimated",
    "evaluator",
    "input_wait",
    "predict",
    "step_terms",
    "straggler_wait",
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
    wait = straggler_wait(n, compute, cluster)
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


def straggler_wait(n: Any, compute: Any, cluster: Cluster) -> Any:
    """T_wait: the wait for the slowest rank per step, a fixed imbalance and the random variation (module docstring)."""
    fixed = getattr(cluster, "imbalance", 0.0)  # a cluster whose traces showed one rank slow every step
    if not cluster.jitter and not fixed:
        return 0.0
    per_node = float(cluster.devices_per_node)
    node = np.minimum(n, per_node)
    nodes = np.maximum(np.divide(n, per_node), 1.0)
    draws = cluster.jitter * (np.sqrt(2 * np.log(node)) + np.sqrt(2 * np.log(nodes)))
    return compute * (np.where(n >= 2, fixed, 0.0) + draws)


@dataclass(frozen=True, slots=True)
class Imbalanced(Cluster):
    """A cluster one of whose ranks is slower than the others by ``imbalance`` of the step, every step.

    What a run's traces show when the same rank is the slowest at each step (more work, a slower
    device): a fixed wait that does not grow with the device count, unlike a random variation.
    """

    imbalance: float = 0.0

    def __post_init__(self) -> None:
        Cluster.__post_init__(self)
        if not (0 <= self.imbalance < 100):
            raise InvalidInput("imbalance", self.imbalance, "a share of the step from 0 to below 100 (0.1 is 10 %%)")


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
    jitter_known: bool | None = None,
) -> Prediction:
    """Predict E(n), A(n), the step-time terms and the memory per device for each device count in ``devices``.

    With a ``reference`` measurement, one device's compute speed is calibrated on it and E(n) is
    relative to its size. What the hardware does not say (:func:`dpscale.predict.uncertainty.unknowns`:
    cv unless ``jitter_known``, which by default is whether the cluster's cv differs from the one
    assumed) is taken at its prior's median, and the interval at ``level`` spans what the priors
    allow around that same estimate; measurements narrow it (:mod:`dpscale.predict.calibration`).

    >>> from dpscale.collectives.link import Link
    >>> p = predict([1, 8], Workload(938, 256, 25.6e6), Cluster(Link(300e9, 3e-6, 0.8)))
    >>> [round(float(e), 3) for e in p.efficiency]
    [1.0, 0.959]
    """
    n = _devices(devices)
    names = uncertainty.unknowns(cluster, jitter_known=jitter_known)
    prior = uncertainty.priors(cluster)
    centre, covariance = uncertainty.prior_centre(names, prior)
    point = _point(n, workload, uncertainty.apply(cluster, uncertainty.centre_values(names, centre, prior)), reference)
    evaluate = evaluator(n, workload, cluster, reference)
    at = None if reference is None else reference.devices
    _, low, high = uncertainty.band(
        evaluate,
        names,
        centre,
        covariance,
        level,
        spread=uncertainty.spread_at(n, at),
        prior=prior,
        open_above=below(n, at),
        extra=[("network_share", uncertainty.widening(cluster, n))],
    )
    found = with_interval(point, low, high, level)
    speed: sources.Source = "fitted" if reference else "measured"
    return replace(found, sources=sources.of(int(n.max()), workload, cluster, speed=speed, unknowns=names))


def below(n: Array, reference_devices: int | None) -> Array:
    """Device counts below the measured size E is relative to: there E exceeds 1 and its range reaches up too."""
    return np.asarray(n < reference_devices) if reference_devices is not None else np.zeros(n.shape, dtype=bool)


def estimated(cluster: Cluster, *, jitter_known: bool | None = None) -> Cluster:
    """``cluster`` with what the hardware does not say at its prior's median: what :func:`predict` estimates at."""
    names = uncertainty.unknowns(cluster, jitter_known=jitter_known)
    prior = uncertainty.priors(cluster)
    return uncertainty.apply(
        cluster, uncertainty.centre_values(names, uncertainty.prior_centre(names, prior)[0], prior)
    )


def evaluator(n: Array, workload: Workload, cluster: Cluster, reference: Reference | None) -> Any:
    """E(n) for values of the unknowns (cv, network share), recalibrated on ``reference`` for each."""

    def evaluate(values: Any) -> Array:
        c = uncertainty.apply(cluster, values)
        return _point(n, workload, c, reference).efficiency

    return evaluate


def with_interval(p: Prediction, low: Array, high: Array, level: float) -> Prediction:
    """``p`` with its efficiency interval, each bound kept within (0, E] and [E, ∞) (a no-op but for rounding:
    the estimate is the interval's centre)."""
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
        {**assumptions(w, c, reference), **({"imbalance": c.imbalance} if isinstance(c, Imbalanced) else {})},
        None if reference is None else reference.devices,
        reference_step,
    )
