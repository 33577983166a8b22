"""Calibrate the prediction on throughputs measured for the job itself, and narrow its interval.

What the model cannot know from the hardware (:mod:`dpscale.predict.uncertainty`: the step-time
variation cv and the share of the network's bandwidth the job reaches) is fitted to measurements
of the whole cluster's throughput at one size or several:

- without one device's throughput (``speed_known`` false), the compute speed is the one for which
  the model gives back the measurement at the smallest measured size N exactly (the geometric mean
  there, if it was measured more than once), and E(n) is relative to N;
- every other measurement is a residual, log(A_model(n)/A_measured(n)) over a measurement's
  run-to-run spread (3 %); so is each unknown's distance from its prior, in prior standard
  deviations. Bounded least squares (SciPy's trust-region reflective method, started from the
  priors' medians: deterministic) minimises their squares: the priors' medians are kept where the
  measurements say nothing (one node says nothing of the network), and the measurements win where
  they say much.

The covariance of the unknowns is the Gauss–Newton one, (JᵀJ)⁻¹ at the fit, scaled by the
measurements' misfit where it exceeds their spread (a model that cannot pass near them is less
sure of itself), and so is the spread added to the interval. A measurement the interconnect cannot
allow at any value of the unknowns is refused, naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dpscale.errors import N_, InvalidInput
from dpscale.predict import uncertainty
from dpscale.predict.job import Cluster, Workload
from dpscale.predict.model import Reference, _devices, _point, evaluator, with_interval
from dpscale.predict.prediction import Prediction
from dpscale.predict.uncertainty import LEVEL, MEASUREMENT_SPREAD, PRIORS, Prior, Unknown

__all__ = ["Fit", "MAX_MEASUREMENTS", "calibrate", "predict_calibrated"]

Array = npt.NDArray[Any]
MAX_MEASUREMENTS = 1000  # measurements in one calibration: each costs a prediction per step of the fit
_REFUSED = 1e3  # a residual for values at which the reference cannot be given back


@dataclass(frozen=True)
class Fit:
    """The unknowns fitted to the measurements, and what the model then gives back at each."""

    names: tuple[Unknown, ...]
    centre: Array  # the unknowns on their priors' normal scale
    covariance: Array
    reference: Reference | None  # E(n) is relative to it (None: to one device)
    measured: tuple[Reference, ...]
    given_back: tuple[float, ...]  # the model's throughput at each measured size
    misfit: float = 1.0  # how far the measurements sit from the model, in their spreads (at least 1)
    values: dict[str, float] = field(default_factory=dict)
    priors: Mapping[Unknown, Prior] = field(default_factory=lambda: dict(PRIORS))  # as the cluster has them

    def to_dict(self) -> dict[str, Any]:
        sd = np.sqrt(np.diag(self.covariance)) if self.names else np.zeros(0)
        prior = self.priors
        return {
            "measured": [[m.devices, m.throughput] for m in self.measured],
            "given_back": list(self.given_back),
            "reference_devices": None if self.reference is None else self.reference.devices,
            "fitted": {
                name: {
                    "value": self.values[name],
                    "low": prior[name].from_x(float(self.centre[i] - uncertainty.quantile(LEVEL) * sd[i])),
                    "high": prior[name].from_x(float(self.centre[i] + uncertainty.quantile(LEVEL) * sd[i])),
                    "prior": {"median": prior[name].median, "low": prior[name].low, "high": prior[name].high},
                }
                for i, name in enumerate(self.names)
            },
            "misfit": self.misfit,
        }


def _reference(measured: Sequence[Reference]) -> tuple[Reference, list[Reference]]:
    """The smallest measured size (its repeats' geometric mean) and the other measurements."""
    smallest = min(m.devices for m in measured)
    there = [m.throughput for m in measured if m.devices == smallest]
    reference = Reference(smallest, math.exp(sum(math.log(a) for a in there) / len(there)))
    return reference, [m for m in measured if m.devices != smallest]


def calibrate(
    measured: Sequence[Reference],
    workload: Workload,
    cluster: Cluster,
    *,
    speed_known: bool = False,
    jitter_known: bool = False,
) -> Fit:
    """Fit the unknowns to ``measured`` (see the module's docstring)."""
    from scipy.optimize import least_squares

    points = list(measured)
    if not points or len(points) > MAX_MEASUREMENTS:
        raise InvalidInput(
            "measured", points, N_("from 1 to %(most)s measurements"), params={"most": str(MAX_MEASUREMENTS)}
        )
    reference, others = (None, points) if speed_known else _reference(points)
    names = tuple(uncertainty.unknowns(cluster, jitter_known=jitter_known))
    prior = uncertainty.priors(cluster)
    prior_x, prior_cov = uncertainty.prior_centre(names, prior)
    prior_sd = np.sqrt(np.diag(prior_cov)) if names else np.zeros(0)
    sizes = _devices([m.devices for m in others]) if others else np.zeros(0, dtype=np.int64)
    observed = np.log([m.throughput for m in others]) if others else np.zeros(0)

    def values_of(x: Array) -> dict[str, float]:
        return {name: prior[name].from_x(float(v)) for name, v in zip(names, x, strict=True)}

    def data(x: Array) -> Array:
        c = uncertainty.apply(cluster, values_of(x))
        with np.errstate(all="ignore"):
            given = _point(sizes, workload, c, reference).actual_throughput
        return np.asarray((np.log(given) - observed) / MEASUREMENT_SPREAD)

    def residuals(x: Array) -> Array:
        prior = (x - prior_x) / prior_sd
        try:
            fitted = data(x)
        except InvalidInput:
            fitted = np.full(len(others), _REFUSED)
        return np.concatenate([np.where(np.isfinite(fitted), fitted, _REFUSED), prior])

    centre, covariance, misfit = prior_x, prior_cov, 1.0
    if others and names:
        low, high = zip(*(prior[name].x_bounds for name in names), strict=True)
        start = np.clip(prior_x, np.asarray(low) + 1e-9, np.asarray(high) - 1e-9)
        result = least_squares(residuals, start, bounds=(low, high), method="trf", x_scale=prior_sd, diff_step=1e-4)
        centre = np.asarray(result.x)
        jacobian = np.asarray(result.jac)
        covariance = np.linalg.pinv(jacobian.T @ jacobian)
    if others:
        try:
            fitted = data(centre)
        except InvalidInput:
            raise InvalidInput(
                "measured",
                ", ".join(f"{m.devices}:{m.throughput:g}" for m in points),
                N_("throughputs the interconnect allows at each size, with any step-time variation and network share"),
            ) from None
        misfit = max(1.0, math.sqrt(float(np.mean(np.square(fitted)))))
        covariance = covariance * misfit**2
    values = values_of(centre)
    c = uncertainty.apply(cluster, values)
    given_back: tuple[float, ...] = ()
    if points:
        at = _devices([m.devices for m in points])
        given_back = tuple(_point(at, workload, c, reference).actual_throughput.tolist())
    return Fit(names, centre, covariance, reference, tuple(points), given_back, misfit, values, prior)


def predict_calibrated(
    devices: Any,
    workload: Workload,
    cluster: Cluster,
    measured: Sequence[Reference],
    *,
    speed_known: bool = False,
    jitter_known: bool = False,
    level: float = LEVEL,
) -> Prediction:
    """E(n) and A(n) from the model calibrated on ``measured``, with the interval what stays unknown leaves.

    >>> from dpscale.predict.presets import link
    >>> cluster = Cluster(link("intra", "nvlink3"), 8, link("inter", "ib-hdr", nics=8))
    >>> p = predict_calibrated([8, 64], Workload(500, 32, 330e6), cluster, [Reference(8, 4000)])
    >>> round(float(p.actual_throughput[0]))
    4000
    >>> low, high = p.efficiency_interval
    >>> bool(low[1] < p.efficiency[1] < high[1] <= 1.05)
    True
    """
    n = _devices(devices)
    fit = calibrate(measured, workload, cluster, speed_known=speed_known, jitter_known=jitter_known)
    values: Mapping[str, float] = fit.values
    point = _point(n, workload, uncertainty.apply(cluster, values), fit.reference)
    evaluate = evaluator(n, workload, cluster, fit.reference)
    at_reference = None if fit.reference is None else fit.reference.devices
    spread = uncertainty.spread_at(n, at_reference, MEASUREMENT_SPREAD * fit.misfit)
    _, low, high = uncertainty.band(
        evaluate, fit.names, fit.centre, fit.covariance, level, spread=spread, prior=fit.priors
    )
    out = with_interval(point, low, high, level)
    return _noted(out, fit)


def _noted(p: Prediction, fit: Fit) -> Prediction:
    from dataclasses import replace

    return replace(p, assumptions={**p.assumptions, "calibration": fit.to_dict()})
