"""The seed's model of data-parallel scaling.

A job runs on d devices that each process v samples/s alone; keeping the copies in sync costs
time, which the scaling efficiency E (0 < E ≤ 1) sums up:

    I = d·v        ideal throughput (perfect scaling)
    A = I·E        actual throughput
    S = d·E        speedup over one device
    lost = I − A   throughput paid for synchronisation

Products and quotients are taken in decimal on the numbers as written (64 × 0.9 is 57.6, not
57.599…), then rounded once to a float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from dpscale import _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput, MissingInput

__all__ = [
    "MAX_THROUGHPUT",
    "MIN_POSITIVE",
    "DEFAULT_UNIT",
    "Unknown",
    "Scaling",
    "Solution",
    "devices_for",
    "efficiency_from",
    "per_device_for",
    "scale",
    "solve",
]

DEFAULT_UNIT = "samples/s"
# The bounds every edge holds a throughput and an efficiency to (the library's functions take any
# positive value): 10¹² samples/s per device, and 10⁻⁶ at least, so that d·v·E never underflows.
MAX_THROUGHPUT = 1e12
MIN_POSITIVE = 1e-6
Unknown = Literal["devices", "per_device_throughput", "efficiency", "actual_throughput"]


def _dec(x: float) -> Decimal:
    return Decimal(repr(x)) if isinstance(x, float) else Decimal(x)


def _mul(*xs: float) -> float:
    product = Decimal(1)
    for x in xs:
        product *= _dec(x)
    return float(product)


def _div(numerator: float, *denominators: float) -> Decimal:
    quotient = _dec(numerator)
    for x in denominators:
        quotient /= _dec(x)
    return quotient


@dataclass(frozen=True, slots=True)
class Scaling(ShowsAsTable):
    """A data-parallel job: d devices at v each with efficiency E, and what they deliver.

    Built by :func:`scale` (which keeps E ≤ 1) or by the solvers (where a measured E above 1 is
    kept and flagged as :attr:`superlinear`).
    """

    devices: int
    per_device_throughput: float
    efficiency: float
    unit: str = DEFAULT_UNIT

    # I, A, S and I − A, worked out once at construction: a page reads each of them several times.
    _derived: tuple[float, float, float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate.whole("devices", self.devices)
        _validate.positive("per_device_throughput", self.per_device_throughput)
        _validate.positive("efficiency", self.efficiency)
        object.__setattr__(self, "unit", _validate.label("unit", self.unit))  # trimmed: "tokens/s " reads as "tokens/s"
        d, v, e = self.devices, self.per_device_throughput, self.efficiency
        # _mul(d, v), _mul(d, v, e), _mul(d, e) and _mul(d, v, 1 − E): the same products, in the same
        # order and context, each input turned into a Decimal once.
        dd, de = Decimal(1) * _dec(d), _dec(e)
        dv = dd * _dec(v)
        ideal = float(dv)
        _validate.finite_result("per_device_throughput", v, ideal)
        derived = (ideal, float(dv * de), float(dd * de), float(dv * _dec(float(1 - de))))
        object.__setattr__(self, "_derived", derived)
        if derived[1] == 0:  # d·v·E below the smallest float: nothing can divide by it
            raise InvalidInput("per_device_throughput", v, "a throughput large enough that d·v·E is above 0")

    @property
    def ideal_throughput(self) -> float:
        """I = d·v."""
        return self._derived[0]

    @property
    def actual_throughput(self) -> float:
        """A = I·E = d·v·E."""
        return self._derived[1]

    @property
    def speedup(self) -> float:
        """S = d·E: the number of ideal devices this cluster behaves like."""
        return self._derived[2]

    @property
    def lost_throughput(self) -> float:
        """I − A = d·v·(1 − E); negative when the run is superlinear."""
        return self._derived[3]

    @property
    def superlinear(self) -> bool:
        """E > 1: more than perfect scaling (cache effects, or a measurement to double-check)."""
        return self.efficiency > 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the stable interface."""
        return {
            "devices": self.devices,
            "per_device_throughput": self.per_device_throughput,
            "efficiency": self.efficiency,
            "ideal_throughput": self.ideal_throughput,
            "actual_throughput": self.actual_throughput,
            "speedup": self.speedup,
            "lost_throughput": self.lost_throughput,
            "unit": self.unit,
        }


def scale(
    devices: int,
    per_device_throughput: float,
    efficiency: float,
    *,
    unit: str = DEFAULT_UNIT,
) -> Scaling:
    """Throughput of ``devices`` devices at ``per_device_throughput`` each, at ``efficiency``.

    >>> scale(64, 2000, 0.9).actual_throughput
    115200.0
    """
    return Scaling(
        devices=_validate.device_count("devices", devices),
        per_device_throughput=_validate.positive("per_device_throughput", per_device_throughput),
        efficiency=_validate.fraction("efficiency", efficiency),
        unit=unit,
    )


@dataclass(frozen=True, slots=True)
class Solution(ShowsAsTable):
    """The result of solving A = d·v·E for one unknown.

    ``target_throughput`` is the actual throughput asked for (or measured); when solving for the
    number of devices it is rounded up, so ``scaling.actual_throughput`` may exceed it.
    """

    unknown: Unknown
    scaling: Scaling
    target_throughput: float | None = None

    @property
    def value(self) -> float:
        """The solved quantity."""
        return float(getattr(self.scaling, self.unknown))

    @property
    def surplus_throughput(self) -> float:
        """Actual throughput above the target (0 unless devices were rounded up)."""
        if self.target_throughput is None:
            return 0.0
        return float(_dec(self.scaling.actual_throughput) - _dec(self.target_throughput))

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.scaling.to_dict(),
            "solved_for": self.unknown,
            "target_throughput": self.target_throughput,
            "superlinear": self.scaling.superlinear,
        }


def efficiency_from(
    devices: int,
    per_device_throughput: float,
    actual_throughput: float,
    *,
    unit: str = DEFAULT_UNIT,
) -> Solution:
    """E = A / (d·v) from a measured cluster throughput.

    An E above 1 is returned as measured and flagged (``scaling.superlinear``), never clipped.
    """
    d = _validate.device_count("devices", devices)
    v = _validate.positive("per_device_throughput", per_device_throughput)
    a = _validate.positive("actual_throughput", actual_throughput)
    e = _validate.finite_result("actual_throughput", a, float(_div(a, d, v)))
    if e <= 0:
        raise InvalidInput("actual_throughput", a, "a throughput large enough to give an efficiency above 0")
    _validate.finite_result("actual_throughput", a, d * e)  # the speedup S = d·E of a wildly superlinear E
    _validate.finite_result("actual_throughput", a, _mul(d, v, e))  # A = d·v·E again, from the rounded E
    return Solution("efficiency", Scaling(d, v, e, unit), target_throughput=a)


def devices_for(
    target_throughput: float,
    per_device_throughput: float,
    efficiency: float,
    *,
    unit: str = DEFAULT_UNIT,
) -> Solution:
    """The fewest whole devices whose actual throughput reaches ``target_throughput``.

    d = ⌈A / (v·E)⌉; the scaling returned is the one that number of devices really gives.
    """
    a = _validate.positive("target_throughput", target_throughput)
    v = _validate.positive("per_device_throughput", per_device_throughput)
    e = _validate.fraction("efficiency", efficiency)
    d = math.ceil(_div(a, v, e))
    if d > _validate.MAX_DEVICES:
        raise InvalidInput(
            "target_throughput", target_throughput, N_("a target that a billion devices (10⁹) or fewer reach")
        )
    return Solution("devices", Scaling(max(d, 1), v, e, unit), target_throughput=a)


def per_device_for(
    devices: int,
    efficiency: float,
    target_throughput: float,
    *,
    unit: str = DEFAULT_UNIT,
) -> Solution:
    """v = A / (d·E): the per-device throughput each device must reach for the target."""
    d = _validate.device_count("devices", devices)
    e = _validate.fraction("efficiency", efficiency)
    a = _validate.positive("target_throughput", target_throughput)
    v = float(_div(a, d, e))
    if not (math.isfinite(v) and v > 0):
        raise InvalidInput("target_throughput", a, "a throughput that gives a finite per-device throughput above 0")
    return Solution("per_device_throughput", Scaling(d, v, e, unit), target_throughput=a)


def solve(
    *,
    devices: int | None = None,
    per_device_throughput: float | None = None,
    efficiency: float | None = None,
    actual_throughput: float | None = None,
    unit: str = DEFAULT_UNIT,
) -> Solution:
    """Given exactly three of d, v, E and A, find the fourth."""
    given = {
        "devices": devices,
        "per_device_throughput": per_device_throughput,
        "efficiency": efficiency,
        "actual_throughput": actual_throughput,
    }
    missing = [name for name, value in given.items() if value is None]
    if not missing:
        raise InvalidInput(
            "actual_throughput",
            actual_throughput,
            "no value when devices, per_device_throughput and efficiency are all given "
            "(give three of the four; the fourth is worked out)",
        )
    if len(missing) > 1:
        raise MissingInput(
            missing[0],
            "three of devices, per_device_throughput, efficiency and actual_throughput; the fourth is worked out",
            hint=N_("%(count)s not given: %(names)s"),
            params={"count": len(missing), "names": ", ".join(missing)},
        )
    # Exactly one is None here; the annotation only tells the type checker so (cast() would be a call each).
    d: Any = devices
    v: Any = per_device_throughput
    e: Any = efficiency
    a: Any = actual_throughput
    if d is None:
        return devices_for(a, v, e, unit=unit)
    if v is None:
        return per_device_for(d, e, a, unit=unit)
    if e is None:
        return efficiency_from(d, v, a, unit=unit)
    return Solution("actual_throughput", scale(d, v, e, unit=unit))
