"""The planner's inputs, once (see :mod:`dpscale.inputs`): the CLI's options, the page's fields and
the API's parameters, and how their values become a plan, with every rule across them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpscale import _validate
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.inputs import Definition, Input, Values
from dpscale.plan.budget import DeadlinePlan, EfficiencyCurve, Plan, devices_for_deadline, plan, total_work

__all__ = ["PLAN", "PlanResult"]


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
            "number",
            "Samples (or tokens) to process: the dataset size, times --epochs.",
            required=True,
            low=1e-12,
            high=1e18,
            short="-w",
            label=N_("Dataset size (samples or tokens)"),
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
