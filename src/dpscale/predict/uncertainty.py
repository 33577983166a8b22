"""What the model cannot know from the hardware, and the interval it leaves around E(n).

Three quantities decide how a job scales across nodes and are not on any data sheet:

    jitter          cv, the step-time variation across ranks: each step waits for the slowest
                    of n ranks, T_c·cv·√(2 ln n), so stragglers cost more as n grows. Host noise,
                    the input pipeline, clocks and the network's own variation all land here.
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
log scale for cv and a logit scale for the share (both stay in bounds). The medians are round
numbers above what a quiet single node shows, because at scale the slowest rank and a shared
fabric cost more than a node's own spread: cv 5 % (2–15 %), share 0.6 (0.3–0.9) of a preset's or
a typed bandwidth and 1 (0.75–1.33, on a log scale) of a measured one; ρ 0.3 (0.1–0.6),
about the share of a GPU's multiprocessors and memory bandwidth NCCL's channels take while they
run. A calibration
(:mod:`dpscale.predict.calibration`) moves and narrows them with measurements.

The interval: each unknown moved by one standard deviation each way (along the axes of its
covariance) gives how far E(n) moves; those moves added in quadrature, with a measurement's own
run-to-run spread (3 %), scaled to the level's normal quantile. E is bounded, above 0 and at most 1
(more only where the model itself says so, below a measured reference), so the moves add on
scales bounded the same way (:func:`band`) and the interval stays within them; at the reference
size E is 1 by definition and so is its interval (:func:`spread_at`). Deterministic: no sampling.
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
from dpscale.predict.job import Cluster

__all__ = [
    "LEVEL",
    "MEASURED_NETWORK",
    "MEASUREMENT_SPREAD",
    "PRIORS",
    "Prior",
    "Unknown",
    "apply",
    "band",
    "prior_centre",
    "priors",
    "quantile",
    "spread_at",
    "unknowns",
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


PRIORS: dict[Unknown, Prior] = {
    "jitter": Prior(0.05, 0.02, 0.15, "log", (1e-4, 0.5)),
    "network_share": Prior(0.6, 0.3, 0.9, "logit", (0.02, 0.999)),
    "interference": Prior(0.3, 0.1, 0.6, "logit", (0.001, 0.95)),
}
# The network's share where its bandwidth was measured as reached (an nccl-tests log, a probe): the
# measurement itself at the median, within a third either way at other node counts.
MEASURED_NETWORK = Prior(1.0, 0.75, 1 / 0.75, "log", (0.05, 4.0))
MEASURED_SOURCES = ("nccl-tests log", "probe")


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


def unknowns(cluster: Cluster, *, jitter_known: bool = False) -> list[Unknown]:
    """The unknowns that matter for ``cluster``: the network's share only where there is a network."""
    out: list[Unknown] = [] if jitter_known else ["jitter"]
    if cluster.inter is not None:
        out.append("network_share")
    if cluster.overlap:  # without overlap nothing runs beside the compute
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


def band(
    evaluate: Callable[[Mapping[str, float]], Array],
    names: Sequence[Unknown],
    centre: Array,
    covariance: Array,
    level: float,
    *,
    spread: Any = MEASUREMENT_SPREAD,
    prior: Mapping[Unknown, Prior] = PRIORS,
) -> tuple[Array, Array, Array]:
    """E(n) at ``centre`` (values on the normal scale of each prior), and its interval at ``level``.

    ``evaluate`` gives E(n) for values of the unknowns (on their own scale). The covariance's
    Cholesky columns are the directions moved along; a move that fails (past floating point) counts
    as no move. ``spread`` (one value, or one per device count: see :func:`spread_at`) is a
    measurement's relative run-to-run spread.

    E is bounded: above 0, and at most its ceiling, 1 (or E itself where the model says more: sizes
    below a measured reference). So each side of the interval is worked out on a scale bounded on
    that side: below, log E; above, the log of what E lacks of its ceiling. Each move is taken
    there as the model gives it, the spread as its first-order equivalent; they add in quadrature
    and come back as bounds within (0, ceiling], closing in on the ceiling where E nears it.
    """
    z = quantile(level)

    def at(x: Array) -> Array:
        return np.asarray(evaluate({name: prior[name].from_x(float(v)) for name, v in zip(names, x, strict=True)}))

    middle = at(centre)
    ceiling = np.maximum(middle, 1.0)
    gap = ceiling - middle
    relative = np.asarray(spread, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        down = np.square(relative) * np.ones_like(middle)  # on log E, a relative spread is itself
        up = np.where(gap > 0, np.square(relative * middle / gap), 0.0)  # on log(ceiling − E)
        if names:
            root = np.linalg.cholesky(np.atleast_2d(covariance) + 1e-12 * np.eye(len(names)))
            for column in root.T:
                for sign in (1.0, -1.0):
                    try:
                        moved = at(centre + sign * column)
                    except InvalidInput:
                        continue
                    fell = np.log(middle / moved)
                    down += np.square(np.where(np.isfinite(fell), np.maximum(fell, 0.0), 0.0))
                    closer = np.log(gap / np.maximum(ceiling - moved, 0.0))
                    up += np.square(np.where(np.isfinite(closer) & (gap > 0), np.maximum(closer, 0.0), 0.0))
        low = middle * np.exp(-z * np.sqrt(down))
        high = ceiling - gap * np.exp(-z * np.sqrt(up))
    return middle, low, np.where(np.isfinite(high), high, ceiling)


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
