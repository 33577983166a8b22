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
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.inputs import Definition, Input, Values
from dpscale.scaling import Scaling, scale

__all__ = [
    "PLAN",
    "DeadlinePlan",
    "EfficiencyCurve",
    "constant",
    "Plan",
    "PlanResult",
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
    if not (isinstance(value, str) and len(value) == 3 and value.isalpha()):
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
                    "and the fastest cluster, of %(best)s devices, gives %(fastest)s"
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


@dataclass(frozen=True)
class PlanResult:
    """What the planner answers: the run on the devices given, and the fewest that meet a deadline."""

    plan: Plan  # on the devices given, else on the fewest that meet the deadline
    deadline: DeadlinePlan | None
    devices_given: bool

    def to_dict(self) -> dict[str, Any]:
        if self.deadline is None:
            return self.plan.to_dict()
        return {**self.deadline.to_dict(), **({"requested": self.plan.to_dict()} if self.devices_given else {})}


def _build(values: Values) -> PlanResult:
    v = PLAN.complete(values)
    work = total_work(v["work"], v["epochs"])
    if (v["efficiency"] is None) == (v["measurements"] is None):
        given = "neither" if v["efficiency"] is None else "both"
        raise InvalidInput("efficiency", given, N_("an efficiency or measurements to fit, one of the two"))
    throughput = v["per_device_throughput"]
    efficiency: float | EfficiencyCurve
    if v["measurements"] is not None:
        from dpscale.fit import fit

        best = fit(v["measurements"]).best
        efficiency = best.efficiency
        throughput = throughput or best.throughput(1)
    else:
        efficiency = v["efficiency"]
    if throughput is None:
        raise MissingInput("per_device_throughput", N_("a throughput, or measurements to read it from"))
    money: dict[str, Any] = {
        "price_per_device_hour": v["price_per_device_hour"],
        "watts_per_device": v["watts_per_device"],
        "currency": v["currency"],
        "unit": v["unit"],
    }
    if v["devices"] is None and v["deadline"] is None:
        raise MissingInput("devices", N_("a number of devices, or a deadline to find it"))
    found = None
    if v["deadline"] is not None:
        found = devices_for_deadline(work, v["deadline"], throughput, efficiency, **money)
    result = found.plan if v["devices"] is None and found else plan(work, v["devices"], throughput, efficiency, **money)
    return PlanResult(result, found, v["devices"] is not None)


def _money(name: str, help_text: str, option: str, label: str, example_fr: str) -> Input:
    """An optional positive amount per device (a price, a power) that the run's totals multiply."""
    example = (example_fr, example_fr.replace(",", "."))
    return Input(
        name, "number", help_text, low=1e-12, high=1e6, option=option, label=label, example=example, group="money"
    )


PLAN = Definition(
    "plan",
    (
        Input(
            "work",
            "scaled_count",
            "Samples (or tokens) to process: the dataset size (1.2M, 1T), times --epochs.",
            required=True,
            low=1e-12,
            high=1e18,
            short="-w",
            label=N_("Dataset size (samples or tokens)"),
            hint=N_("For example 1,281,167, 1.2M or 1T (k, M, B for billions, T)."),
            example=("1 281 167", "1,281,167"),
            group="run",
        ),
        Input(
            "epochs",
            "number",
            "Passes over the work.",
            default=1.0,
            low=1e-12,
            high=1e9,
            label=N_("Epochs"),
            example=("90", "90"),
            group="run",
        ),
        Input(
            "deadline",
            "duration",
            "Finish within this (14 d, 36 h): find the fewest devices.",
            low=1e-9,
            high=1e10,
            api_name="deadline_seconds",
            label=N_("Deadline (optional)"),
            hint=N_("For example 30 min, 36 h or 14 d."),
            example=("30 min", "30 min"),
            group="run",
            unit="s",
        ),
        Input(
            "devices",
            "count",
            "d; or give a deadline to find it.",
            low=1,
            high=_validate.MAX_DEVICES,
            short="-d",
            label=N_("Devices"),
            example=("64", "64"),
            group="cluster",
        ),
        Input(
            "per_device_throughput",
            "number",
            "v, one device's throughput alone [default: from --fit].",
            low=1e-6,
            high=1e12,
            option="--per-device",
            short="-v",
            label=N_("Throughput per device"),
            example=("2 000", "2,000"),
            group="cluster",
        ),
        Input(
            "unit",
            "text",
            "Throughput unit, for display.",
            default="samples/s",
            short="-u",
            label=N_("unit"),
            example=("échantillons/s", "samples/s"),
            group="cluster",
        ),
        Input(
            "efficiency",
            "fraction",
            "E: 90% or 0.9; or give --fit.",
            low=1e-6,
            high=1,
            short="-e",
            label=N_("Scaling efficiency (%%)"),
            hint=N_("For example 90 %% or 0.9."),
            example=("90 %", "90%"),
            group="cluster",
        ),
        Input(
            "measurements",
            "measurements",
            "Measurements (as for dpscale fit): E(d) from the best fitted model.",
            option="--fit",
            edges=("cli",),
        ),
        _money("price_per_device_hour", "Price of one device-hour.", "--price", N_("Price of one device-hour"), "2,5"),
        Input(
            "currency",
            "text",
            "ISO 4217 code of the price.",
            default="USD",
            label=N_("Currency (ISO code)"),
            example=("EUR", "USD"),
            group="money",
        ),
        _money(
            "watts_per_device", "Power of one device, for the energy.", "--watts", N_("Power of one device (W)"), "400"
        ),
    ),
    _build,
    groups=(("run", N_("Run")), ("cluster", N_("Compute cluster")), ("money", N_("Price and power (optional)"))),
)
