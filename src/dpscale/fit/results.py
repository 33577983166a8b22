"""What a fit gives: every law fitted to the points, its forecasts with their intervals, the one chosen.

A forecast carries a 95 % prediction interval from the delta method and the residual variance,
with Student's t.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dpscale import _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput
from dpscale.fit.laws import MODELS, numerics
from dpscale.messages import Message
from dpscale.records import finite_or_none

__all__ = [
    "MAX_FITTED_THROUGHPUT",
    "PEAK_REACH",
    "Fit",
    "Forecast",
    "ModelFit",
    "Point",
    "fitted_throughput",
]

MAX_FITTED_THROUGHPUT = 1e150  # squared residuals of larger throughputs leave floating point
PEAK_REACH = 16  # a USL peak further than 16× the largest measured size is not reported


@dataclass(frozen=True, slots=True)
class Point:
    """One measurement: ``devices`` devices delivered ``throughput`` together."""

    devices: int
    throughput: float


def fitted_throughput(field: str, value: Any) -> float:
    """A measured throughput a fit can take: finite, above 0 and below :data:`MAX_FITTED_THROUGHPUT`."""
    a = _validate.positive(field, value)
    if a >= MAX_FITTED_THROUGHPUT:
        raise InvalidInput(field, value, N_("a finite number greater than 0 and below 1e150"))
    return a


@dataclass(frozen=True, slots=True)
class Forecast:
    """A(n) and E(n) of a fitted law at one size, with a 95 % prediction interval on A."""

    devices: int
    throughput: float
    low: float
    high: float
    efficiency: float
    extrapolated: bool
    floored: bool = False  # the interval reached below 0 and was cut there: a throughput is never below 0

    @property
    def has_interval(self) -> bool:
        """False when too few measurements leave no residual variance to build an interval from."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    def to_dict(self) -> dict[str, Any]:
        return {
            "devices": self.devices,
            "throughput": self.throughput,
            "interval": [finite_or_none(self.low), finite_or_none(self.high)],
            "efficiency": finite_or_none(self.efficiency),
            "extrapolated": self.extrapolated,
        }


@dataclass(frozen=True)
class ModelFit:
    """One model fitted to the points, or the reason it could not be."""

    name: str
    formula: str
    source: str
    params: dict[str, float]
    errors: dict[str, float]
    rss: float
    r2: float
    aicc: float | None
    predictions: tuple[Forecast, ...]
    peak_devices: float | None = None  # USL: the size past which throughput falls
    skipped: Message | None = None  # why it was not fitted
    covariance: tuple[tuple[float, ...], ...] = ()
    residual_variance: float = math.nan
    dof: int = 0
    largest_measured: int = 0

    def estimates(self) -> list[tuple[str, float, float | None]]:
        """(name, value, standard error); the error is None where too few points leave it undefined."""
        return [(k, v, finite_or_none(self.errors.get(k, math.nan))) for k, v in self.params.items()]

    def throughput(self, devices: float) -> float:
        """A(n) of the fitted model."""
        return float(MODELS[self.name].at(float(devices), self.params))

    def predict(self, sizes: Sequence[int]) -> tuple[Forecast, ...]:
        """A(n) with a 95 % prediction interval, and E(n), at each size."""
        np, _, stats = numerics()
        law = MODELS[self.name]
        params = np.array([self.params[p] for p in law.params])
        cov = np.array(self.covariance) if self.covariance else np.full((len(params), len(params)), np.nan)
        usable = bool(np.all(np.isfinite(cov))) and self.dof > 0
        t = float(stats.t.ppf(0.975, self.dof)) if self.dof > 0 else math.nan
        one = self.throughput(1)
        out = []
        for size in sizes:
            a = self.throughput(size)
            half = math.nan
            if usable:
                grad = _gradient(law.fn, float(size), params, np)
                var = float(grad @ cov @ grad) + self.residual_variance
                half = t * math.sqrt(var) if var >= 0 else math.nan
            e = a / (size * one) if one > 0 else math.nan
            low = max(a - half, 0.0) if math.isfinite(half) else math.nan  # a throughput is never below 0
            out.append(Forecast(size, a, low, a + half, e, size > self.largest_measured, floored=a - half < 0))
        return tuple(out)

    def efficiency(self, devices: int) -> float:
        """E(n) = A(n) / (n·A(1)): a curve the planner can take."""
        law = MODELS[self.name]
        n = _validate.whole("devices", devices)
        return float(law.at(n, self.params) / (n * law.at(1, self.params)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "formula": self.formula,
            "source": self.source,
            "params": self.params,
            "standard_errors": {k: finite_or_none(v) for k, v in self.errors.items()},
            "rss": finite_or_none(self.rss),
            "r2": finite_or_none(self.r2),
            "aicc": self.aicc,
            "peak_devices": self.peak_devices,
            "skipped": None if self.skipped is None else str(self.skipped),
            "predictions": [p.to_dict() for p in self.predictions],
        }


@dataclass(frozen=True)
class Fit(ShowsAsTable):
    """Every model tried, the one chosen, and the warnings a careful reader needs."""

    points: tuple[Point, ...]
    models: tuple[ModelFit, ...]
    chosen: str
    notes: tuple[Message, ...]  # the warnings, each a message in either language

    @property
    def warnings(self) -> tuple[str, ...]:
        """The notes in English (the JSON's ``warnings``)."""
        return tuple(str(note) for note in self.notes)

    @property
    def best(self) -> ModelFit:
        return next(m for m in self.models if m.name == self.chosen)

    @property
    def peak_devices(self) -> float | None:
        """Where the USL says throughput stops growing, when the data can say so.

        Only from a USL fit with enough points to be ranked, and only within PEAK_REACH times the
        largest measured size: a peak far beyond the data is the fit's guess, not a finding.
        """
        usl = next((m for m in self.models if m.name == "usl"), None)
        if usl is None or usl.aicc is None or usl.peak_devices is None:
            return None
        largest = max(p.devices for p in self.points)
        return usl.peak_devices if usl.peak_devices <= PEAK_REACH * largest else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [{"devices": p.devices, "throughput": p.throughput} for p in self.points],
            "chosen": self.chosen,
            "peak_devices": self.peak_devices,
            "warnings": list(self.warnings),
            "models": [m.to_dict() for m in self.models],
        }


def _gradient(fn: Callable[..., Any], x: float, params: Any, np: Any) -> Any:
    """∂A/∂θ at x by central differences (the models are smooth in their parameters)."""
    grad = np.empty(len(params))
    for i, p in enumerate(params):
        h = 1e-6 * max(abs(p), 1e-6)
        up, down = params.copy(), params.copy()
        up[i] += h
        down[i] = max(p - h, 0.0)
        grad[i] = (fn(x, *up) - fn(x, *down)) / (up[i] - down[i])
    return grad
