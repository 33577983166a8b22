"""Time and cost of a training run, and the cluster size that meets a deadline.

A run processes W units of work (samples or tokens: a dataset of N samples for e epochs is
W = N·e) at the actual throughput A = d·v·E(d) of :mod:`dpscale.scaling`:

    T = W / A                      wall-clock time
    device-hours = d·T / 3600
    cost = device-hours × price    (price per device-hour)
    energy = device-hours × watts / 1000   kWh drawn by the devices alone (no host, no cooling)

E can be a constant (the seed's) or a curve E(d), such as a prediction or a fit: any callable
from a device count to an efficiency. Since d·E(d) may stop growing, the deadline solver
searches the counts rather than inverting a formula.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpscale import _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput
from dpscale.scaling import Scaling, scale

__all__ = [
    "DeadlinePlan",
    "EfficiencyCurve",
    "Plan",
    "constant",
    "devices_for_deadline",
    "plan",
    "total_work",
]

EfficiencyCurve = Callable[[int], float]
LARGEST_SEARCHED = 10**6  # the largest cluster a deadline search tries: a million devices
SECONDS_PER_HOUR = 3600


def constant(efficiency: float) -> EfficiencyCurve:
    """The seed's assumption: the same E at every cluster size."""
    e = _validate.fraction("efficiency", efficiency)
    return lambda _devices: e


def total_work(dataset_size: float, epochs: float = 1) -> float:
    """W = N·e: the samples (or tokens) of ``epochs`` passes over a dataset of ``dataset_size``."""
    n = _validate.positive("work", dataset_size)
    e = _validate.positive("epochs", epochs)
    return _validate.finite_result("epochs", epochs, n * e)


def _curve(efficiency: float | EfficiencyCurve) -> EfficiencyCurve:
    return efficiency if callable(efficiency) else constant(efficiency)


def _at(curve: EfficiencyCurve, devices: int) -> float:
    e = curve(devices)
    return _validate.fraction("efficiency", e)


@dataclass(frozen=True, slots=True)
class Plan(ShowsAsTable):
    """A run of ``work`` units on the cluster ``scaling`` describes, with its time, cost and energy."""

    work: float
    scaling: Scaling
    price_per_device_hour: float | None = None
    watts_per_device: float | None = None
    currency: str = "USD"

    @property
    def seconds(self) -> float:
        """T = W / A."""
        return self.work / self.scaling.actual_throughput

    @property
    def device_hours(self) -> float:
        """d·T in hours: what a cloud bills."""
        return self.scaling.devices * self.seconds / SECONDS_PER_HOUR

    @property
    def cost(self) -> float | None:
        return None if self.price_per_device_hour is None else self.device_hours * self.price_per_device_hour

    @property
    def energy_kwh(self) -> float | None:
        return None if self.watts_per_device is None else self.device_hours * self.watts_per_device / 1000

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.scaling.to_dict(),
            "work": self.work,
            "seconds": self.seconds,
            "device_hours": self.device_hours,
            "price_per_device_hour": self.price_per_device_hour,
            "cost": self.cost,
            "currency": self.currency,
            "watts_per_device": self.watts_per_device,
            "energy_kwh": self.energy_kwh,
        }


def _currency(value: Any) -> str:
    """An ISO 4217 code Babel (CLDR) knows, upper-cased: ``eur`` is EUR; ``ZZZ`` is no currency."""
    from babel.numbers import list_currencies

    if not (isinstance(value, str) and len(value) == 3 and value.isascii() and value.upper() in list_currencies()):
        raise InvalidInput("currency", value, "a three-letter ISO 4217 code such as USD or EUR")
    return value.upper()


def plan(
    work: float,
    devices: int,
    per_device_throughput: float,
    efficiency: float | EfficiencyCurve,
    *,
    price_per_device_hour: float | None = None,
    watts_per_device: float | None = None,
    currency: str = "USD",
    unit: str = "samples/s",
) -> Plan:
    """Time, device-hours, cost and energy of ``work`` units on ``devices`` devices.

    >>> round(plan(1.28e9, 64, 2000, 0.9).seconds / 3600, 2)
    3.09
    """
    w = _validate.positive("work", work)
    d = _validate.whole("devices", devices)
    e = _at(_curve(efficiency), d)
    price = (
        None if price_per_device_hour is None else _validate.positive("price_per_device_hour", price_per_device_hour)
    )
    watts = None if watts_per_device is None else _validate.positive("watts_per_device", watts_per_device)
    result = Plan(w, scale(d, per_device_throughput, e, unit=unit), price, watts, _currency(currency))
    _validate.finite_result("work", work, result.device_hours)
    if result.cost is not None:
        _validate.finite_result("price_per_device_hour", price_per_device_hour, result.cost)
    if result.energy_kwh is not None:
        _validate.finite_result("watts_per_device", watts_per_device, result.energy_kwh)
    return result


@dataclass(frozen=True, slots=True)
class DeadlinePlan(ShowsAsTable):
    """The fewest devices that finish by the deadline, and the neighbouring sizes to compare."""

    deadline_seconds: float
    plan: Plan
    options: tuple[Plan, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "deadline_seconds": self.deadline_seconds,
            "plan": self.plan.to_dict(),
            "options": [o.to_dict() for o in self.options],
        }


def devices_for_deadline(
    work: float,
    deadline_seconds: float,
    per_device_throughput: float,
    efficiency: float | EfficiencyCurve,
    *,
    price_per_device_hour: float | None = None,
    watts_per_device: float | None = None,
    currency: str = "USD",
    unit: str = "samples/s",
    max_devices: int = LARGEST_SEARCHED,
) -> DeadlinePlan:
    """The fewest whole devices d with W / (d·v·E(d)) ≤ deadline, and the trade-off around it.

    The options are the powers of two from a quarter to four times that size (and the size itself):
    fewer devices run longer, more devices finish sooner and, as E falls, pay more device-hours.
    """
    w = _validate.positive("work", work)
    deadline = _validate.positive("deadline_seconds", deadline_seconds)
    v = _validate.positive("per_device_throughput", per_device_throughput)
    limit = _validate.whole("max_devices", max_devices)
    curve = _curve(efficiency)
    needed = w / deadline  # the actual throughput that finishes on time

    def enough(d: int) -> bool:
        return d * v * _at(curve, d) >= needed

    # Grow by doubling until the throughput suffices, then bisect between the last two sizes.
    low, high = 0, 1
    while not enough(high):
        if high >= limit:
            best = max(_powers(limit), key=lambda d: d * v * _at(curve, d))
            raise InvalidInput(
                "deadline_seconds",
                deadline_seconds,
                N_(
                    "a deadline that at most %(limit)s devices can meet: it needs %(needed)s %(unit)s, "
                    "and the fastest cluster tried, of %(best)s devices, gives %(fastest)s %(unit)s"
                ),
                params={  # numbers, written in the reader's language where the message is shown
                    "limit": float(limit),
                    "needed": needed,
                    "unit": unit,
                    "best": float(best),
                    "fastest": best * v * _at(curve, best),
                },
            )
        low, high = high, min(2 * high, limit)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    options = sorted({high, *(2**k for k in range(31) if high / 4 <= 2**k <= min(4 * high, limit))})

    def at(d: int) -> Plan:
        return plan(
            w,
            d,
            v,
            curve,
            price_per_device_hour=price_per_device_hour,
            watts_per_device=watts_per_device,
            currency=currency,
            unit=unit,
        )

    return DeadlinePlan(deadline, at(high), tuple(at(d) for d in options))


def _powers(limit: int) -> list[int]:
    return [2**k for k in range(int(math.log2(limit)) + 1)]
