"""The planner: how long a run takes and what it costs (time, device-hours, money, energy), the fewest
devices that meet a deadline, and whether the model fits in a device's memory.

What it takes (:data:`PLAN`), computes (:mod:`dpscale.plan`) and shows (:func:`present`).
"""

from __future__ import annotations

from typing import Any

from dpscale import _validate
from dpscale.calculators.shown import Grid, Note, Row, Rows, Shown
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.format import format_duration, format_energy, format_memory, format_money, format_number, format_percent
from dpscale.i18n import Lang, translation
from dpscale.inputs import Api, Cli, Definition, Input, Page, Values
from dpscale.plan.budget import DeadlinePlan, EfficiencyCurve, Plan, devices_for_deadline, plan, total_work
from dpscale.plan.planned import MemoryPlan, PlanResult
from dpscale.predict.fields import DEVICE_MEMORY, OPTIMIZER, PARAM_BYTES, SHARDING

__all__ = ["PLAN", "deadline_grid", "memory_sentence", "plan_rows", "present"]


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
            api=Api(described="Samples (or tokens) to process: the dataset size (1.2e6), times epochs."),
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
            api=Api(described="v, one device's throughput alone (2000)."),
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
            api=Api(described="E, the scaling efficiency at that size: a fraction above 0 and at most 1 (0.9)."),
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
            api=Api(described="The model's parameters, to say how many devices hold it (8e9)."),
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


def present(result: PlanResult, lang: Lang) -> Shown:
    """The run on the devices given; the fewest that meet the deadline, with the sizes around it compared; and
    whether the model fits: those asked for."""
    # Each row is keyed by its place in the JSON: the run asked for is "requested" beside a deadline's.
    parts: list[Rows | Grid | Note] = []
    if result.devices_given:
        parts.append(Rows(plan_rows(result.plan, lang, "" if result.deadline is None else "requested.")))
    if result.deadline is not None:
        parts.extend(_deadline(result.deadline, lang, "plan."))
    if result.memory is not None:
        parts.append(Note(memory_sentence(result.memory, result.plan.scaling.devices, lang), key="memory"))
    return Shown(tuple(parts))


def plan_rows(p: Plan, lang: Lang, prefix: str = "", *, found: bool = False) -> tuple[Row, ...]:
    """The run's rows; the time to train is its main figure. ``found``: on the devices a deadline asked for, not
    those given; ``prefix``: where the run stands in the JSON (``plan.``, ``requested.``), before each key."""
    _ = translation(lang).gettext
    s = p.scaling
    rows = [
        Row(_("Work"), format_number(p.work, lang), prefix + "work", given=True),
        Row(_("Devices (d)"), format_number(s.devices, lang), prefix + "devices", given=not found),
        Row(_("Scaling efficiency (E)"), format_percent(s.efficiency, lang), prefix + "efficiency", given=not found),
        Row(
            _("Actual throughput (A)"),
            f"{format_number(s.actual_throughput, lang)} {s.unit}",
            prefix + "actual_throughput",
        ),
        Row(_("Time to train"), format_duration(p.seconds, lang), prefix + "seconds", main=True),
        Row(_("Device-hours"), format_number(p.device_hours, lang, decimals=1), prefix + "device_hours"),
    ]
    if p.cost is not None:
        rows.append(Row(_("Cost"), format_money(p.cost, p.currency, lang), prefix + "cost"))
    if p.energy_kwh is not None:
        rows.append(Row(_("Energy (devices only)"), format_energy(p.energy_kwh, lang), prefix + "energy_kwh"))
    return tuple(rows)


def _deadline(dp: DeadlinePlan, lang: Lang, prefix: str) -> list[Rows | Grid | Note]:
    """The fewest devices that meet the deadline, their run, and the cluster sizes compared around them."""
    _ = translation(lang).gettext
    fewest = _("Fewest devices that finish within {deadline}: {devices}").format(
        deadline=format_duration(dp.deadline_seconds, lang), devices=format_number(dp.plan.scaling.devices, lang)
    )
    parts: list[Rows | Grid | Note] = [
        Note(fewest, key="deadline-title", heading=True),
        Rows(plan_rows(dp.plan, lang, prefix, found=True)),
    ]
    parts.append(deadline_grid(dp, lang))
    if len({option.scaling.efficiency for option in dp.options}) == 1:
        same = _(
            "At a constant efficiency every size uses the same device-hours (d × T stays W / (v × E)), so the same "
            "cost: more devices only finish sooner. With an efficiency that falls as the cluster grows, as /predict "
            "or /fit give, larger sizes cost more."
        )
        parts.append(Note(same, key="same-cost"))
    return parts


def deadline_grid(dp: DeadlinePlan, lang: Lang) -> Grid:
    """The cluster sizes compared around the fewest devices that meet the deadline (emphasised)."""
    _ = translation(lang).gettext
    header = [_("Devices"), _("Efficiency"), _("Time to train"), _("Device-hours")]
    if dp.plan.cost is not None:
        header.append(_("Cost"))
    rows = []
    emphasis = None
    for i, option in enumerate(dp.options):
        cells = [
            format_number(option.scaling.devices, lang),
            format_percent(option.scaling.efficiency, lang),
            format_duration(option.seconds, lang),
            format_number(option.device_hours, lang, decimals=1),
        ]
        if option.cost is not None:
            cells.append(format_money(option.cost, option.currency, lang))
        if option.scaling.devices == dp.plan.scaling.devices:
            emphasis = i
        rows.append(tuple(cells))
    return Grid(tuple(header), tuple(rows), _("Cluster sizes compared"), emphasis, key="options")


def memory_sentence(m: MemoryPlan, devices: int, lang: Lang) -> str:
    """Whether the model fits, in one sentence: what each device holds, and the fewest that hold it."""
    _ = translation(lang).gettext
    values = {
        "strategy": m.sharding,
        "n": format_number(devices, lang),
        "held": format_memory(m.per_device, lang),
        "memory": format_memory(m.device_memory, lang),
    }
    first = (
        _("With %(strategy)s each of the %(n)s devices holds %(held)s of its %(memory)s.")
        if m.fits
        else _("With %(strategy)s each of the %(n)s devices would hold %(held)s: more than its %(memory)s.")
    ) % values
    if m.fewest_devices is None:
        return first + " " + _("No number of devices holds the model this way: shard it further.")
    return (
        first
        + " "
        + _("The fewest devices that hold the model: %(fewest)s.") % {"fewest": format_number(m.fewest_devices, lang)}
    )
