"""The planner's inputs, once (see :mod:`dpscale.inputs`): the CLI's options, the page's fields and
the API's parameters, and how their values become a plan, with every rule across them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpscale import _validate
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.inputs import Api, Cli, Definition, Input, Page, Values
from dpscale.plan.budget import DeadlinePlan, EfficiencyCurve, Plan, devices_for_deadline, plan, total_work
from dpscale.predict.fields import DEVICE_MEMORY, OPTIMIZER, PARAM_BYTES, SHARDING

__all__ = ["PLAN", "MemoryPlan", "PlanResult"]


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Whether the model fits: the fewest devices whose memory holds it under ``sharding`` (None:
    no count does), and what each device holds on the plan's devices."""

    sharding: str
    params: float
    device_memory: float
    fewest_devices: int | None
    per_device: float  # bytes each device holds on the plan's devices

    @property
    def fits(self) -> bool:
        return self.per_device <= self.device_memory

    def to_dict(self) -> dict[str, Any]:
        return {
            "sharding": self.sharding,
            "params": self.params,
            "device_memory": self.device_memory,
            "fewest_devices": self.fewest_devices,
            "per_device": self.per_device,
            "fits": self.fits,
        }


@dataclass(frozen=True)
class PlanResult:
    """What the planner answers: the run on the devices given, the fewest that meet a deadline, and
    (given the model's size and a device's memory) the fewest that hold the model."""

    plan: Plan  # on the devices given, else on the fewest that meet the deadline
    deadline: DeadlinePlan | None
    devices_given: bool
    memory: MemoryPlan | None = None

    def to_dict(self) -> dict[str, Any]:
        held = {} if self.memory is None else {"memory": self.memory.to_dict()}
        if self.deadline is None:
            return {**self.plan.to_dict(), **held}
        requested = {"requested": self.plan.to_dict()} if self.devices_given else {}
        return {**self.deadline.to_dict(), **requested, **held}


def _memory(v: Values, devices: int) -> MemoryPlan | None:
    """The memory plan, when the model's size and a device's memory are given (both, or neither)."""
    if v["params"] is None and v["device_memory"] is None:
        return None
    if v["params"] is None or v["device_memory"] is None:
        missing = "params" if v["params"] is None else "device_memory"
        raise MissingInput(missing, N_("the model's parameters and a device's memory, both, to say what fits"))
    from dpscale.collectives.link import Link
    from dpscale.predict.model import Cluster, Workload
    from dpscale.predict.sharding import fewest_devices, memory

    workload = Workload(1.0, 1.0, v["params"], param_bytes=v["param_bytes"], optimizer=v["optimizer"])
    cluster = Cluster(Link(1.0), sharding=v["sharding"], device_memory=v["device_memory"])  # links play no part
    held = float(memory([float(devices)], workload, cluster).total[0])
    return MemoryPlan(v["sharding"], v["params"], v["device_memory"], fewest_devices(workload, cluster), held)


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
    return PlanResult(result, found, v["devices"] is not None, _memory(v, result.scaling.devices))


def _money(name: str, help_text: str, option: str, label: str, example_fr: str) -> Input:
    """An optional positive amount per device (a price, a power) that the run's totals multiply."""
    example = (example_fr, example_fr.replace(",", "."))
    return Input(
        name,
        "number",
        help_text,
        low=1e-12,
        high=1e6,
        cli=Cli(option=option),
        page=Page(label=label, example=example, group="money"),
    )


def _in_memory(item: Input, **page: Any) -> Input:
    """One of /predict's memory inputs, in the planner's memory group (``page``: what else its page shows)."""
    return item._replace(page=item.page._replace(group="memory", **page))


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
            cli=Cli(short="-w"),
            page=Page(
                label=N_("Dataset size (samples or tokens)"),
                hint=N_("For example 1,281,167, 1.2M or 1T (k, M, B for billions, T)."),
                example=("1 281 167", "1,281,167"),
                group="run",
            ),
        ),
        Input(
            "epochs",
            "number",
            "Passes over the work.",
            default=1.0,
            low=1e-12,
            high=1e9,
            page=Page(label=N_("Epochs"), example=("90", "90"), group="run"),
        ),
        Input(
            "deadline",
            "duration",
            "Finish within this (14 d, 36 h): find the fewest devices.",
            low=1e-9,
            high=1e10,
            unit="s",
            page=Page(
                label=N_("Deadline (optional)"),
                hint=N_("For example 30 min, 36 h or 14 d."),
                example=("30 min", "30 min"),
                group="run",
            ),
            api=Api(name="deadline_seconds"),
        ),
        Input(
            "devices",
            "count",
            "d; or give a deadline to find it.",
            low=1,
            high=_validate.MAX_DEVICES,
            cli=Cli(short="-d"),
            page=Page(label=N_("Devices"), example=("64", "64"), group="cluster"),
        ),
        Input(
            "per_device_throughput",
            "number",
            "v, one device's throughput alone [default: from --fit].",
            low=1e-6,
            high=1e12,
            cli=Cli(option="--per-device", short="-v"),
            page=Page(label=N_("Throughput per device"), example=("2 000", "2,000"), group="cluster"),
        ),
        Input(
            "unit",
            "text",
            "Throughput unit, for display.",
            default="samples/s",
            cli=Cli(short="-u"),
            page=Page(label=N_("unit"), example=("échantillons/s", "samples/s"), group="cluster"),
        ),
        Input(
            "efficiency",
            "fraction",
            "E: 90% or 0.9; or give --fit.",
            low=1e-6,
            high=1,
            cli=Cli(short="-e"),
            page=Page(
                label=N_("Scaling efficiency (%%)"),
                hint=N_("For example 90 %% or 0.9."),
                example=("90 %", "90%"),
                group="cluster",
            ),
        ),
        Input(
            "measurements",
            "measurements",
            "Measurements (as for dpscale fit): E(d) from the best fitted model.",
            edges=("cli",),
            cli=Cli(option="--fit"),
        ),
        Input(
            "params",
            "scaled_count",
            "The model's parameters, to say how many devices hold it: 8B.",
            low=1,
            high=1e15,
            cli=Cli(short="-p"),
            page=Page(
                label=N_("Parameters"),
                hint=N_("For example 8B: with a device's memory, the fewest devices that hold the model."),
                group="memory",
            ),
        ),
        # The memory inputs /predict has, in the planner's group: one definition of each.
        _in_memory(SHARDING, example=("zero3", "zero3")),
        _in_memory(DEVICE_MEMORY, hint=""),
        _in_memory(PARAM_BYTES),
        _in_memory(OPTIMIZER),
        _money("price_per_device_hour", "Price of one device-hour.", "--price", N_("Price of one device-hour"), "2,5"),
        Input(
            "currency",
            "text",
            "ISO 4217 code of the price.",
            default="USD",
            page=Page(label=N_("Currency (ISO code)"), example=("EUR", "USD"), group="money"),
        ),
        _money(
            "watts_per_device", "Power of one device, for the energy.", "--watts", N_("Power of one device (W)"), "400"
        ),
    ),
    _build,
    groups=(
        ("run", N_("Run")),
        ("cluster", N_("Compute cluster")),
        ("memory", N_("Memory (optional)")),
        ("money", N_("Price and power (optional)")),
    ),
)
