"""Calibrate the prediction on throughputs measured for the job itself, and say what it learned.

What the model cannot know from the hardware (:mod:`dpscale.predict.uncertainty`: the step-time
variation cv, the share of the network's bandwidth the job reaches, the interference ρ) is fitted
to measurements of the whole cluster's throughput at one size or several:

- without one device's throughput (``speed_known`` false), the compute speed is the one for which
  the model gives back the measurement at the smallest measured size N exactly (the geometric mean
  there, if it was measured more than once), and E(n) is relative to N;
- every other measurement is a residual, log(A_model(n)/A_measured(n)) over a measurement's
  run-to-run spread (3 %); so is each unknown's distance from its prior, in prior standard
  deviations. Bounded least squares (SciPy's trust-region reflective method, started from the
  priors' medians: deterministic) minimises their squares. A measurement of the job outweighs an
  assumption: where a measured size is not given back within half its spread (1.5 %), the
  measurements are weighed again, 4, 16 then 64 times, until each is, or the model cannot do
  better (said where it is off by more than its spread).

The covariance of the unknowns is the Gauss–Newton one, (JᵀJ)⁻¹ at the fit with the measurements
at their own spread, scaled by the measurements' misfit where it exceeds their spread (a model
that cannot pass near them is less sure of itself), and so is the spread added to the interval.

What it learned is said for each unknown (:mod:`dpscale.predict.learned`): its prior and its
posterior (median, 90 % range); whether the measurements told it (``fitted``), said nothing of it
(``prior``: its prior kept, median and all, the others fitted again without it), or told only its
joint effect with another (``joint``). Measurements that contradict the rest are said: one above
what d·v allows with one device's throughput given is refused (by far) or warned of (within the
spread), and a fit that lands at a bound of a prior, or a size not given back, is warned of.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message
from dpscale.predict import learned as told_apart
from dpscale.predict import sources, uncertainty
from dpscale.predict.job import Cluster, Workload
from dpscale.predict.learned import Learned, checked, contradictions, shown
from dpscale.predict.model import Reference, _devices, _point, below, evaluator, with_interval
from dpscale.predict.prediction import Prediction
from dpscale.predict.uncertainty import LEVEL, MEASUREMENT_SPREAD, PRIORS, Prior, Unknown

__all__ = ["Fit", "Learned", "MAX_MEASUREMENTS", "calibrate", "predict_calibrated"]

Array = npt.NDArray[Any]
MAX_MEASUREMENTS = 1000  # measurements in one calibration: each costs a prediction per step of the fit
_REFUSED = 1e3  # a residual for values at which the reference cannot be given back
_WEIGHTS = (1.0, 4.0, 16.0, 64.0)  # how much more the measurements weigh, until each is given back
GIVEN_BACK = 0.5  # each measured size given back within half its spread (1.5 %) where the model can


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
    learned: tuple[Learned, ...] = ()
    warnings: tuple[Message, ...] = ()

    @property
    def moved(self) -> tuple[str, ...]:
        """The unknowns the measurements said something of (fitted, or jointly)."""
        return tuple(found.name for found in self.learned if found.status != "prior")

    def to_dict(self) -> dict[str, Any]:
        return {
            "measured": [[m.devices, m.throughput] for m in self.measured],
            "given_back": list(self.given_back),
            "reference_devices": None if self.reference is None else self.reference.devices,
            "fitted": {found.name: found.to_dict() for found in self.learned},
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
    jitter_known: bool | None = None,
) -> Fit:
    """Fit the unknowns to ``measured`` (see the module's docstring)."""
    points = list(measured)
    if not points or len(points) > MAX_MEASUREMENTS:
        raise InvalidInput(
            "measured", points, N_("from 1 to %(most)s measurements"), params={"most": str(MAX_MEASUREMENTS)}
        )
    warnings = checked(points, workload) if speed_known else []
    reference, others = (None, points) if speed_known else _reference(points)
    names = tuple(uncertainty.unknowns(cluster, jitter_known=jitter_known))
    prior = uncertainty.priors(cluster)
    prior_x, prior_cov = uncertainty.prior_centre(names, prior)
    prior_sd = np.sqrt(np.diag(prior_cov)) if names else np.zeros(0)
    sizes = _devices([m.devices for m in others]) if others else np.zeros(0, dtype=np.int64)
    observed = np.log([m.throughput for m in others]) if others else np.zeros(0)

    def data(x: Array) -> Array:
        c = uncertainty.apply(cluster, uncertainty.centre_values(names, x, prior))
        with np.errstate(all="ignore"):
            given = _point(sizes, workload, c, reference).actual_throughput
        return np.asarray((np.log(given) - observed) / MEASUREMENT_SPREAD)

    def residuals(x: Array, weight: float) -> Array:
        try:
            fitted = data(x)
        except InvalidInput:
            fitted = np.full(len(others), _REFUSED)
        return np.concatenate([weight * np.where(np.isfinite(fitted), fitted, _REFUSED), (x - prior_x) / prior_sd])

    centre, covariance, misfit = prior_x, prior_cov, 1.0
    data_jacobian: Array | None = None
    kept: list[int] = []
    if others and names:
        bounds = tuple(np.asarray(side) for side in zip(*(prior[name].x_bounds for name in names), strict=True))
        everything = list(range(len(names)))
        centre, covariance, data_jacobian = _solve(residuals, prior_x, prior_sd, bounds, len(others), everything)
        # what the measurements said nothing of keeps its prior, median too: the others fitted without it
        found = told_apart.learned(names, centre, covariance, prior, data_jacobian)
        kept = [i for i, one in enumerate(found) if one.status == "prior"]
        free = [i for i in everything if i not in kept]
        if kept and free:
            centre, covariance, data_jacobian = _solve(residuals, prior_x, prior_sd, bounds, len(others), free)
        elif kept:
            centre, covariance = prior_x, prior_cov
    if others:
        try:
            fitted = data(centre)
        except InvalidInput:
            raise InvalidInput(
                "measured",
                shown(points),
                N_("throughputs the interconnect allows at each size, with any step-time variation and network share"),
            ) from None
        misfit = max(1.0, math.sqrt(float(np.mean(np.square(fitted)))))
        covariance = covariance * misfit**2
    values = uncertainty.centre_values(names, centre, prior)
    c = uncertainty.apply(cluster, values)
    at = _devices([m.devices for m in points])
    given_back = tuple(_point(at, workload, c, reference).actual_throughput.tolist())
    told = None if data_jacobian is None else data_jacobian / misfit
    said = told_apart.learned(names, centre, covariance, prior, told, kept=kept)
    warnings += contradictions(points, given_back, said, centre, prior)
    return Fit(
        names, centre, covariance, reference, tuple(points), given_back, misfit, values, prior, said, tuple(warnings)
    )


def _solve(
    residuals: Any, prior_x: Array, prior_sd: Array, bounds: tuple[Array, ...], count: int, free: Sequence[int]
) -> tuple[Array, Array, Array]:
    """The unknowns ``free`` fitted (the others at their priors' medians): the centre, covariance and the
    measurements' Jacobian, all unknowns wide. ``count``: the measurements among the residuals."""
    from scipy.optimize import least_squares

    at = np.asarray(free)
    low, high = bounds[0][at], bounds[1][at]
    start = np.clip(prior_x[at], low + 1e-9, high - 1e-9)

    def some(x: Array, weight: float) -> Array:
        whole = prior_x.copy()
        whole[at] = x
        return np.asarray(residuals(whole, weight))

    steps = 1e-4 * prior_sd[at]

    def slopes(x: Array, weight: float) -> Array:
        """Forward differences at steps of a ten-thousandth of each prior's spread (SciPy's relative steps
        vanish where an unknown's normal scale is near 0: a share of one half, a measured network's 1)."""
        here = some(x, weight)
        out = np.empty((len(here), len(x)))
        for k in range(len(x)):
            moved = x.copy()
            moved[k] += steps[k] if moved[k] + steps[k] <= high[k] else -steps[k]
            out[:, k] = (some(moved, weight) - here) / (moved[k] - x[k])
        return out

    def fitted_at(weight: float) -> tuple[float, Array, Array]:
        """The fit with the measurements weighed ``weight`` times: its worst residual (in spreads), x, J."""
        result = least_squares(
            some, start, jac=slopes, bounds=(low, high), method="trf", x_scale=prior_sd[at], args=(weight,)
        )
        jacobian = np.asarray(result.jac)
        jacobian[:count] /= weight  # the measurements at their own spread for the covariance
        return float(np.max(np.abs(result.fun[:count]))) / weight, np.asarray(result.x), jacobian

    best = fitted_at(_WEIGHTS[0])
    for weight in _WEIGHTS[1:]:  # a measurement outweighs an assumption: each given back if it can be
        if best[0] <= GIVEN_BACK:
            break
        tried = fitted_at(weight)
        if tried[0] < best[0] - 1e-6:
            best = tried
    _, x, jacobian = best
    centre = prior_x.copy()
    centre[at] = x
    covariance = np.diag(np.square(prior_sd))
    covariance[np.ix_(at, at)] = np.linalg.pinv(jacobian.T @ jacobian)
    data = np.zeros((count, len(prior_x)))
    data[:, at] = jacobian[:count]
    return centre, covariance, data


def predict_calibrated(
    devices: Any,
    workload: Workload,
    cluster: Cluster,
    measured: Sequence[Reference],
    *,
    speed_known: bool = False,
    jitter_known: bool | None = None,
    level: float = LEVEL,
) -> Prediction:
    """E(n) and A(n) from the model calibrated on ``measured``, with the interval what stays unknown leaves.

    The estimate is the model at the fitted values, and the interval is drawn about it from the
    fit's covariance (:mod:`dpscale.predict.uncertainty`).

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
    point = _point(n, workload, uncertainty.apply(cluster, fit.values), fit.reference)
    evaluate = evaluator(n, workload, cluster, fit.reference)
    at_reference = None if fit.reference is None else fit.reference.devices
    spread = uncertainty.spread_at(n, at_reference, MEASUREMENT_SPREAD * fit.misfit)
    _, low, high = uncertainty.band(
        evaluate,
        fit.names,
        fit.centre,
        fit.covariance,
        level,
        spread=spread,
        prior=fit.priors,
        open_above=below(n, at_reference),
        extra=[("network_share", uncertainty.widening(cluster, n))],
    )
    out = with_interval(point, low, high, level)
    speed: sources.Source = "measured" if speed_known else "fitted"
    said = sources.of(int(n.max()), workload, cluster, speed=speed, unknowns=fit.names, learned=fit.moved)
    return replace(
        out,
        assumptions={**out.assumptions, "calibration": fit.to_dict()},
        sources=said,
        warnings=out.warnings + fit.warnings,
    )
