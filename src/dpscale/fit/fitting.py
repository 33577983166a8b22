"""Fitting the laws: bounded least squares on every measurement, ranked by AICc.

Parameters are fitted by bounded least squares (scipy.optimize.curve_fit, trust-region
reflective) on every measurement, repeats included; their standard errors come from the
covariance; models are ranked by AICc (Hurvich & Tsai 1989), which penalises parameters.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from dpscale import _validate
from dpscale._validate import MAX_DEVICES
from dpscale.errors import N_, InvalidInput
from dpscale.fit.laws import MODELS, Law, numerics
from dpscale.fit.results import Fit, ModelFit, Point, fitted_throughput
from dpscale.messages import Message

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["EXTRAPOLATION_FACTOR", "fit"]

EXTRAPOLATION_FACTOR = 4  # predicting past 4× the largest measured size earns a warning
# Evaluations of a law the optimizer may spend: a measured series converges in tens; data no law
# describes (1e-6 samples/s on one device, 2 on 262 064) ran 20 000 evaluations in 24 s before.
MAX_EVALUATIONS = 2_000


def _points(points: Iterable[Point | tuple[Any, Any] | dict[str, Any]]) -> tuple[Point, ...]:
    out = []
    d: Any
    a: Any
    for i, item in enumerate(points):
        if isinstance(item, Point):
            d, a = item.devices, item.throughput
        elif isinstance(item, dict):
            d, a = item.get("devices"), item.get("throughput")
        else:
            try:
                d, a = item
            except (TypeError, ValueError):
                raise InvalidInput(f"points[{i}]", item, "a (devices, throughput) pair") from None
        try:
            out.append(Point(_validate.device_count("devices", d), fitted_throughput("throughput", a)))
        except InvalidInput as exc:
            raise exc.as_given(f"points[{i}].{exc.field}", exc.value) from None
    return tuple(out)


def fit(
    points: Iterable[Point | tuple[Any, Any] | dict[str, Any]],
    *,
    models: Sequence[str] | None = None,
    at: Sequence[int] = (),
) -> Fit:
    """Fit each model to ``points`` and predict A and E at the sizes ``at``.

    >>> f = fit([(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)], at=[32])
    >>> f.chosen, round(f.best.predictions[0].efficiency, 2)
    ('amdahl', 0.96)
    """
    np, optimize, stats = numerics()
    data = _points(points)
    names = list(dict.fromkeys(models)) if models else list(MODELS)  # a model named twice is fitted once
    for name in names:
        if name not in MODELS:
            raise InvalidInput("model", name, N_("auto or one of %(choices)s"), params={"choices": ", ".join(MODELS)})
    sizes = [_validate.device_count("at", n) for n in at]
    if len(data) < 2:
        raise InvalidInput("points", len(data), "at least two measurements, at two or more cluster sizes")
    distinct = sorted({p.devices for p in data})
    if len(distinct) < 2:
        raise InvalidInput("points", f"only {distinct[0]} devices", "measurements at two or more cluster sizes")
    n = np.array([p.devices for p in data], dtype=np.float64)
    y = np.array([p.throughput for p in data], dtype=np.float64)
    largest = max(distinct)
    notes: list[Message] = []
    if 1 not in distinct:
        notes.append(Message.of("no single-device measurement: efficiencies are relative to the model's own A(1)"))
    far = [s for s in sizes if s > EXTRAPOLATION_FACTOR * largest]
    if far:
        notes.append(
            Message.of(
                "predicting at %(far)s devices, more than %(factor)s× the largest measured (%(largest)s): "
                "treat those numbers as a guess, not a forecast",
                far=", ".join(map(str, far)),
                factor=EXTRAPOLATION_FACTOR,
                largest=largest,
            )
        )
    fits = [_fit_one(MODELS[name], n, y, distinct, sizes, largest, np, optimize, stats) for name in names]
    fitted = [m for m in fits if m.skipped is None]
    if not fitted:
        raise InvalidInput("points", len(data), "enough measurements for at least one model (add sizes or repeats)")
    ranked = [m for m in fitted if m.aicc is not None]
    if ranked:
        chosen = min(ranked, key=lambda m: m.aicc if m.aicc is not None else math.inf)
    else:  # too few points to rank any: the simplest model that fits (said where there was a choice)
        chosen = min(fitted, key=lambda m: (len(m.params), m.rss))
        if len(fitted) > 1:
            notes.append(
                Message.of("too few measurements (%(n)s) to rank the models by AICc: showing the simplest", n=len(data))
            )
    for m in fits:
        if m.skipped is not None:
            notes.append(Message.of("%(model)s: %(reason)s", model=m.name, reason=m.skipped))
        elif m.aicc is None and ranked:
            notes.append(
                Message.of(
                    "%(model)s: too few measurements (%(n)s) to rank %(k)s parameters by AICc",
                    model=m.name,
                    n=len(data),
                    k=len(m.params),
                )
            )
    if chosen.peak_devices is not None and any(s > chosen.peak_devices for s in sizes):
        notes.append(
            Message.of(
                "past about %(peak)s devices the fitted throughput falls as devices are added",
                peak=f"{chosen.peak_devices:.0f}",
            )
        )
    floored = [p.devices for p in chosen.predictions if p.floored]
    if floored:  # said, not only cut: the interval's low end there is the floor, not what the fit bounds
        notes.append(
            Message.of(
                "at %(sizes)s devices the 95%% interval reaches below 0 and is cut there: "
                "the measurements bound that throughput from above only",
                sizes=", ".join(map(str, floored)),
            )
        )
    return Fit(data, tuple(fits), chosen.name, tuple(notes))


def _fit_one(
    law: Law,
    n: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    distinct: list[int],
    sizes: list[int],
    largest: int,
    np: Any,
    optimize: Any,
    stats: Any,
) -> ModelFit:
    k = len(law.params)
    m = len(y)
    empty = ModelFit(law.name, law.formula, law.source, {}, {}, math.nan, math.nan, None, ())
    if len(distinct) < k:
        return _skip(empty, Message.of("needs measurements at %(k)s or more sizes, has %(n)s", k=k, n=len(distinct)))
    lam0 = float(np.median(y / n))
    p0 = [lam0] + ([0.9] if law.name == "constant" else [1e-3] * (k - 1))
    try:
        # A covariance that cannot be estimated (too few points) is reported as unknown errors.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", optimize.OptimizeWarning)
            params, cov = optimize.curve_fit(
                law.fn, n, y, p0=p0, bounds=law.bounds, method="trf", maxfev=MAX_EVALUATIONS, x_scale="jac"
            )
    except (RuntimeError, ValueError) as exc:
        return _skip(empty, Message.of("did not converge (%(reason)s)", reason=str(exc)))
    residuals = y - law.fn(n, *params)
    rss = float(residuals @ residuals)
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - rss / tss if tss > 0 else 1.0
    dof = m - k
    aicc = None
    if m - k - 1 > 0:
        aicc = m * math.log(max(rss, 1e-300) / m) + 2 * k + 2 * k * (k + 1) / (m - k - 1)
    with np.errstate(all="ignore"):
        errors = np.sqrt(np.clip(np.diag(cov), 0, None)) if np.all(np.isfinite(cov)) else np.full(k, math.nan)
    peak = None
    if law.name == "usl" and params[2] > 0:
        with np.errstate(all="ignore"):
            peak = math.sqrt(max(1 - params[1], 0) / params[2])
        if not peak <= MAX_DEVICES:  # κ of 1e-300: no peak within any cluster (nor within floating point)
            peak = None
    result = ModelFit(
        law.name,
        law.formula,
        law.source,
        dict(zip(law.params, map(float, params), strict=True)),
        dict(zip(law.params, map(float, errors), strict=True)),
        rss,
        r2,
        aicc,
        (),
        peak,
        None,
        tuple(tuple(float(x) for x in row) for row in cov),
        rss / dof if dof > 0 else math.nan,
        dof,
        largest,
    )
    return dataclasses.replace(result, predictions=result.predict(sizes))


def _skip(empty: ModelFit, reason: Message) -> ModelFit:
    return ModelFit(empty.name, empty.formula, empty.source, {}, {}, math.nan, math.nan, None, (), None, reason)
