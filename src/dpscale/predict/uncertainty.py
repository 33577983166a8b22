"""What the model cannot know from the hardware, the estimate it takes, and the interval it leaves around E(n).

Three quantities decide how a job scales across nodes and are not on any data sheet:

    jitter          cv, the step-time variation across ranks: each step waits for the slowest
                    rank (:mod:`dpscale.predict.model`: the expected maximum of the draws of a
                    node's ranks and of the nodes). Host noise, the input pipeline, clocks and the
                    network's own variation all land here.
    network_share   the share of the network tier's all-reduce bandwidth the job's own traffic
                    reaches (DDP's 25 MiB buckets, FSDP's per-layer pieces, next to the compute),
                    on top of what the link states (a preset's 80 %). A bandwidth measured as
                    reached (an nccl-tests log, a probe) carries no share of its own: there the
                    unknown is how far the network at other node counts strays from what the run
                    measured, with a median of 1, and the shapes the run measured keep their
                    measured times whatever its value (:mod:`dpscale.predict.pricing`).
    interference    ρ, the share of the overlapped communication's time the compute still loses:
                    NCCL's kernels run on some of the streaming multiprocessors (a channel each)
                    and share the memory bandwidth, so hidden communication is not free.

Before any measurement each has a prior: a median and a range holding it 90 % of the time, on a
log scale for cv and a logit scale for the shares (both stay in bounds): cv 2 % (0.8–5 %, the
median is the variation predict assumes when none is given), share 0.6 (0.3–0.9) of a preset's or
a typed bandwidth and 1 (0.75–1.33, on a log scale) of a measured one; ρ 0.3 (0.1–0.6), about the
share of a GPU's multiprocessors and memory bandwidth NCCL's channels take while they run. A
calibration (:mod:`dpscale.predict.calibration`) moves and narrows them with measurements.

**One estimate, one range.** The estimate is E at the unknowns' medians (the priors', or the
calibration's fitted values) and the interval is built around it from the same distribution,
never from other values: E falls as cv and ρ rise and as the share falls, so along each unknown
E at its median is the median of E, and the estimate is the centre of the range by construction.
Each unknown moved by one standard deviation each way (along the axes of its covariance) gives
how far E(n) moves; those moves added in quadrature, with a measurement's own run-to-run spread
(3 %), scaled to the level's normal quantile, make each side. This was chosen over quantiles of
sampled draws because it is deterministic, costs 2k + 1 evaluations of the model for k unknowns,
and can never put the estimate outside its own range (an estimate at other values than the
interval's, as before, could sit at its top).

E is bounded, above 0 and at most 1 at and above the size it is relative to, so the moves add on
scales bounded the same way (:func:`band`): below E on log E, above it on the log of what E lacks
of 1. Below a measured reference E exceeds 1 (the reference step over a shorter one) and has no
such ceiling: there both sides add on log E, so the range reaches up as well as down. At the
reference size E is 1 by definition and so is its interval (:func:`spread_at`). Deterministic: no
sampling.

Where the network was measured at some node counts, how far other counts stray from the
measurement may grow with the distance in node count: :data:`NETWORK_WIDENING` (0 today) adds an
independent move of the network unknown per doubling away (:func:`widening`), to be set once the
network's extrapolation error by node count is known.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dpscale.errors import InvalidInput
from dpscale.predict.defaults import DEFAULT_JITTER
from dpscale.predict.job import Cluster

__all__ = [
    "LEVEL",
    "MEASURED_NETWORK",
    "MEASUREMENT_SPREAD",
    "NETWORK_WIDENING",
    "PRIORS",
    "Prior",
    "Unknown",
    "apply",
    "band",
    "centre_values",
    "prior_centre",
    "priors",
    "quantile",
    "spread_at",
    "unknowns",
    "widening",
]

Array = npt.NDArray[Any]
Unknown = Literal["jitter", "network_share", "interference"]
LEVEL = 0.9  # the interval's level unless told otherwise
MEASUREMENT_SPREAD = 0.03  # relative run-to-run spread of one measured throughput (1 standard deviation)


@dataclass(frozen=True, slots=True)
class Prior:
    """What is assumed of one unknown before measuring: its median and a range that holds it 90 % of the time."""

    median: float
    low: float
    high: float
    scale: Literal["log", "logit"]
    bounds: tuple[float, float]  # the values the fit may take

    def to_x(self, value: float) -> float:
        """The unknown on the scale where its prior is normal."""
        return math.log(value) if self.scale == "log" else math.log(value / (1 - value))

    def from_x(self, x: float) -> float:
        """The unknown from its normal scale, held within its bounds (a wide spread stops at them)."""
        low, high = self.x_bounds
        x = min(max(x, low), high)
        return math.exp(x) if self.scale == "log" else 1 / (1 + math.exp(-x))

    @property
    def mean(self) -> float:
        return self.to_x(self.median)

    @property
    def sd(self) -> float:
        """Standard deviation on the normal scale: the 90 % range spans ±1.645 of it."""
        return (self.to_x(self.high) - self.to_x(self.low)) / (2 * quantile(0.9))

    @property
    def x_bounds(self) -> tuple[float, float]:
        return self.to_x(self.bounds[0]), self.to_x(self.bounds[1])

    def to_dict(self) -> dict[str, float]:
        return {"median": self.median, "low": self.low, "high": self.high}


PRIORS: dict[Unknown, Prior] = {
    # the median is the variation predict assumes when none is given: the estimate and its range agree
    "jitter": Prior(DEFAULT_JITTER, DEFAULT_JITTER / 2.5, DEFAULT_JITTER * 2.5, "log", (1e-4, 0.5)),
    "network_share": Prior(0.6, 0.3, 0.9, "logit", (0.02, 0.999)),
    "interference": Prior(0.3, 0.1, 0.6, "logit", (0.001, 0.95)),
}
# The network's share where its bandwidth was measured as reached (an nccl-tests log, a probe): the
# measurement itself at the median, within a quarter either way at other node counts.
MEASURED_NETWORK = Prior(1.0, 0.75, 1 / 0.75, "log", (0.05, 4.0))
MEASURED_SOURCES = ("nccl-tests log", "probe")
# How much wider (in the measured network's standard deviations, on its log scale) the network
# unknown is per doubling of the node count away from the nearest one a run measured: 0 until the
# network's extrapolation error by node count is known (see widening()).
NETWORK_WIDENING = 0.0


def priors(cluster: Cluster) -> dict[Unknown, Prior]:
    """Each unknown's prior for ``cluster``: the network's share as measured where its network was measured."""
    if dict(cluster.sources).get("inter") in MEASURED_SOURCES:
        return {**PRIORS, "network_share": MEASURED_NETWORK}
    return dict(PRIORS)


def quantile(level: float) -> float:
    """z such that a normal variable lies within ±z standard deviations with probability ``level``."""
    if not (0 < level < 1):
        raise InvalidInput("level", level, "a probability above 0 and below 1 (0.9 for 90 %%)")
    return NormalDist().inv_cdf((1 + level) / 2)


def unknowns(cluster: Cluster, *, jitter_known: bool | None = None) -> list[Unknown]:
    """The unknowns that matter for ``cluster``: the network's share only where there is a network.

    cv is known where ``jitter_known`` says so, by default where the cluster's differs from the
    one assumed (the prior's median); ρ where the cluster sets one.
    """
    known = cluster.jitter != DEFAULT_JITTER if jitter_known is None else jitter_known
    out: list[Unknown] = [] if known else ["jitter"]
    if cluster.inter is not None:
        out.append("network_share")
    if cluster.overlap and not cluster.interference:  # without overlap nothing runs beside the compute
        out.append("interference")
    return out


def apply(cluster: Cluster, values: Mapping[str, float]) -> Cluster:
    """``cluster`` with the unknowns set: cv as its jitter, the share scaling its network's bandwidth, ρ."""
    out = cluster
    if "jitter" in values:
        out = replace(out, jitter=float(values["jitter"]))
    if "interference" in values:
        out = replace(out, interference=float(values["interference"]))
    if "network_share" in values and out.inter is not None:
        out = replace(out, network_share=float(values["network_share"]))
    return out


def centre_values(names: Sequence[Unknown], centre: Any, prior: Mapping[Unknown, Prior]) -> dict[str, float]:
    """The unknowns at ``centre`` (their normal scale) as values: the estimate's own."""
    return {name: prior[name].from_x(float(x)) for name, x in zip(names, np.atleast_1d(centre), strict=True)}


def widening(cluster: Cluster, devices: Array) -> Array:
    """Per device count, the extra standard deviations of the network unknown past the node counts measured.

    :data:`NETWORK_WIDENING` per doubling away from the nearest node count a run measured (0 where
    the network was not measured, or at a measured count).
    """
    n = np.asarray(devices, dtype=np.float64)
    measured = sorted({m.nodes for m in cluster.measured})
    if not NETWORK_WIDENING or not measured or cluster.inter is None:
        return np.zeros_like(n)
    nodes = np.maximum(1.0, n / cluster.devices_per_node)
    away = np.min([np.abs(np.log2(nodes / m)) for m in measured], axis=0)
    return np.asarray(NETWORK_WIDENING * away)


def band(
    evaluate: Callable[[Mapping[str, float]], Array],
    names: Sequence[Unknown],
    centre: Array,
    covariance: Array,
    level: float,
    *,
    spread: Any = MEASUREMENT_SPREAD,
    prior: Mapping[Unknown, Prior] = PRIORS,
    open_above: Any = False,
    extra: Sequence[tuple[Unknown, Array]] = (),
) -> tuple[Array, Array, Array]:
    """E(n) at ``centre`` (values on the normal scale of each prior), and its interval at ``level``.

    ``evaluate`` gives E(n) for values of the unknowns (on their own scale). The covariance's
    Cholesky columns are the directions moved along; a move that fails (past floating point) counts
    as no move. ``spread`` (one value, or one per device count: see :func:`spread_at`) is a
    measurement's relative run-to-run spread. ``extra``: further independent moves of one unknown,
    a standard deviation per device count (the network's widening), taken to first order from one
    move of a standard deviation of its prior.

    E is bounded: above 0, and at most its ceiling, 1 (or E itself where the model says more). So
    each side of the interval is worked out on a scale bounded on that side: below, log E; above,
    the log of what E lacks of its ceiling. Each move is taken there as the model gives it, the
    spread as its first-order equivalent; they add in quadrature and come back as bounds within
    (0, ceiling], closing in on the ceiling where E nears it. Where ``open_above`` (sizes below a
    measured reference, whose E exceeds 1 with no ceiling of 1) the upper side adds on log E too.
    """
    z = quantile(level)

    def at(x: Array) -> Array:
        return np.asarray(evaluate(centre_values(names, x, prior)))

    middle = at(centre)
    unbounded = np.broadcast_to(np.asarray(open_above, dtype=bool), middle.shape)
    ceiling = np.where(unbounded, np.inf, np.maximum(middle, 1.0))
    gap = ceiling - middle
    relative = np.asarray(spread, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        down = np.square(relative) * np.ones_like(middle)  # on log E, a relative spread is itself
        up = np.where(unbounded, down, np.where(gap > 0, np.square(relative * middle / gap), 0.0))

        def add(moved: Array, weight: Any = 1.0) -> None:
            nonlocal down, up
            fell = np.log(middle / moved) * weight
            down = down + np.square(np.where(np.isfinite(fell), np.maximum(fell, 0.0), 0.0))
            rose = np.where(unbounded, -fell, np.log(gap / np.maximum(ceiling - moved, 0.0)) * weight)
            up = up + np.square(np.where(np.isfinite(rose) & (gap > 0), np.maximum(rose, 0.0), 0.0))

        if names:
            root = np.linalg.cholesky(np.atleast_2d(covariance) + 1e-12 * np.eye(len(names)))
            for column in root.T:
                for sign in (1.0, -1.0):
                    try:
                        add(at(centre + sign * column))
                    except InvalidInput:
                        continue
        for name, sd in extra:
            if name not in names or not np.any(sd):
                continue
            step = np.zeros(len(names))
            step[list(names).index(name)] = prior[name].sd
            for sign in (1.0, -1.0):
                try:
                    add(at(centre + sign * step), np.asarray(sd, dtype=np.float64))
                except InvalidInput:
                    continue
        low = middle * np.exp(-z * np.sqrt(down))
        high = np.where(unbounded, middle * np.exp(z * np.sqrt(up)), ceiling - gap * np.exp(-z * np.sqrt(up)))
    return middle, low, np.where(np.isfinite(high), high, np.where(unbounded, middle, ceiling))


def spread_at(devices: Array, reference_devices: int | None, spread: float = MEASUREMENT_SPREAD) -> Array:
    """A measurement's spread in E per device count: none at the reference size, √2 times ``spread`` elsewhere
    when E is relative to a measured size.

    E is relative to the reference (one device's compute when none was measured): at its size it is
    the reference divided by itself, 1 by definition, not a measurement that may scatter. Relative to
    a measured size, a measured E is the ratio of two measurements, each with its own spread.
    """
    n = np.asarray(devices)
    if reference_devices is None:
        return np.where(n == 1, 0.0, spread)
    return np.where(n == reference_devices, 0.0, math.sqrt(2) * spread)


def prior_centre(names: Sequence[Unknown], prior: Mapping[Unknown, Prior] = PRIORS) -> tuple[Array, Array]:
    """The priors' medians (normal scale) and their covariance."""
    centre = np.array([prior[name].mean for name in names], dtype=np.float64)
    return centre, np.diag([prior[name].sd ** 2 for name in names]) if names else np.zeros((0, 0))
