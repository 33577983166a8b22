"""Results as labelled rows and grids, in the user's language.

One place for what a result shows and how each value is written: the command line prints these
with Rich (``cli/render.py``), and a notebook shows them as HTML tables (``dpscale.notebook``).
No Rich and no numpy here; values arrive already computed by the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpscale.format import (
    format_duration,
    format_energy,
    format_estimate,
    format_gigabytes_per_second,
    format_memory,
    format_milliseconds,
    format_money,
    format_number,
    format_percent,
    format_r2,
    format_speedup,
)
from dpscale.i18n import Lang, translation
from dpscale.predict.table import (
    efficiency_with_interval,
    levers_title,
    prediction_legend,
    prediction_table,
)
from dpscale.predict.wording import calibration_line, prediction_notes

gigabytes_per_second = format_gigabytes_per_second  # cli/render.py's name for it, until it imports format's

if TYPE_CHECKING:
    from dpscale.batch import Batch
    from dpscale.explain import Explanation, RankBreakdown
    from dpscale.fit import Fit
    from dpscale.pipeline import Bubble
    from dpscale.plan import DeadlinePlan, MemoryPlan, Plan
    from dpscale.predict.prediction import Prediction
    from dpscale.scaling import Scaling

__all__ = [
    "Grid",
    "Row",
    "alone_text",
    "batch_rows",
    "bubble_rows",
    "calibration_line",
    "deadline_grid",
    "efficiency_with_interval",
    "explanation_grid",
    "explanation_levers",
    "explanation_rows",
    "exposed_text",
    "fit_grid",
    "gigabytes_per_second",
    "levers_title",
    "memory_sentence",
    "plan_rows",
    "prediction_grid",
    "prediction_legend",
    "prediction_notes",
    "prediction_table",
    "scaling_rows",
]


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a two-column result: ``key`` names the quantity (None for derived ones)."""

    label: str
    value: str
    key: str | None = None


@dataclass(frozen=True, slots=True)
class Grid:
    """A result with several columns: a header, rows of text, and the row to emphasise, if any."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str | None = None
    emphasis: int | None = None


def scaling_rows(s: Scaling, lang: Lang) -> list[Row]:
    _ = translation(lang).gettext

    def throughput(x: float) -> str:
        return f"{format_number(x, lang)} {s.unit}"

    return [
        Row(_("Devices (d)"), format_number(s.devices, lang), "devices"),
        Row(_("Per-device throughput (v)"), throughput(s.per_device_throughput), "per_device_throughput"),
        Row(_("Scaling efficiency (E)"), format_percent(s.efficiency, lang), "efficiency"),
        Row(_("Ideal throughput (I = d·v)"), throughput(s.ideal_throughput)),
        Row(_("Actual throughput (A = I·E)"), throughput(s.actual_throughput), "actual_throughput"),
        Row(_("Speedup (S = d·E)"), format_speedup(s.speedup, lang)),
        Row(_("Lost throughput (I − A)"), throughput(s.lost_throughput)),
    ]


def batch_rows(batch: Batch, lang: Lang, lr: float | None = None) -> list[Row]:
    _ = translation(lang).gettext
    rows = [
        Row(_("Micro-batch per device (b)"), format_number(batch.micro_batch, lang)),
        Row(_("Accumulation steps (k)"), format_number(batch.accumulation, lang)),
        Row(_("Data-parallel devices (d)"), format_number(batch.devices, lang)),
        Row(_("Per-device batch (b·k)"), format_number(batch.per_device_batch, lang)),
        Row(_("Global batch (B = b·k·d)"), format_number(batch.global_batch, lang)),
    ]
    if batch.global_batch_tokens is not None:
        rows.append(Row(_("Global batch in tokens (B·L)"), format_number(batch.global_batch_tokens, lang)))
    if lr is not None:
        rows.append(Row(_("Learning rate, linear scaling rule"), format_number(lr, lang, decimals=6)))
    return rows


def bubble_rows(b: Bubble, lang: Lang) -> list[Row]:
    _ = translation(lang).gettext
    rows = [
        Row(_("Pipeline stages (p)"), format_number(b.stages, lang)),
        Row(_("Micro-batches per step (m)"), format_number(b.micro_batches, lang)),
        Row(_("Schedule"), b.schedule + (f" (v = {b.chunks})" if b.schedule == "interleaved" else "")),
        Row(_("Bubble, share of the step"), format_percent(b.fraction, lang, decimals=2)),
        Row(_("Bubble, relative to useful time"), format_percent(b.overhead, lang, decimals=2)),
        Row(_("Pipeline efficiency (1 − bubble)"), format_percent(b.efficiency, lang, decimals=2)),
    ]
    if b.step_time is not None and b.idle_time is not None:
        rows.append(Row(_("Step time"), format_duration(b.step_time, lang)))
        rows.append(Row(_("Idle time per step"), format_duration(b.idle_time, lang)))
    if b.activations_in_flight is not None:
        rows.append(Row(_("Micro-batches of activations held (stage 1)"), format_number(b.activations_in_flight, lang)))
    return rows


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


def plan_rows(p: Plan, lang: Lang) -> list[Row]:
    _ = translation(lang).gettext
    s = p.scaling
    rows = [
        Row(_("Work"), format_number(p.work, lang)),
        Row(_("Devices (d)"), format_number(s.devices, lang)),
        Row(_("Scaling efficiency (E)"), format_percent(s.efficiency, lang)),
        Row(_("Actual throughput (A)"), f"{format_number(s.actual_throughput, lang)} {s.unit}"),
        Row(_("Time to train"), format_duration(p.seconds, lang)),
        Row(_("Device-hours"), format_number(p.device_hours, lang, decimals=1)),
    ]
    if p.cost is not None:
        rows.append(Row(_("Cost"), format_money(p.cost, p.currency, lang)))
    if p.energy_kwh is not None:
        rows.append(Row(_("Energy (devices only)"), format_energy(p.energy_kwh, lang)))
    return rows


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
    return Grid(tuple(header), tuple(rows), _("Cluster sizes compared"), emphasis)


def prediction_grid(p: Prediction, lang: Lang) -> Grid:
    """The prediction's table for the terminal (:func:`prediction_table`): each term's source above its heading."""
    table = prediction_table(p, lang)
    header = tuple(c.heading if c.source is None else f"{c.source}\n{c.heading}" for c in table.columns)
    return Grid(header, table.rows)


def explanation_grid(e: Explanation, lang: Lang) -> Grid:
    """Each rank's mean step and its parts, per step; the slowest rank emphasised.

    Step = Compute + Exposed comm. + Other: the wait for the slowest rank is part of the exposed
    communication (a rank that waits does so inside a collective) and is said there. "Alone" is
    the rank's work, compute + other: its step on one device, without communicating.
    """
    _ = translation(lang).gettext
    header = (
        _("Rank"),
        _("Steps"),
        _("Step"),
        _("Compute"),
        _("Exposed comm."),
        _("Other"),
        _("Alone (compute + other)"),
        _("Overlap"),
    )
    rows = []
    emphasis = None
    for i, r in enumerate(e.ranks):
        if r.rank == e.slowest_rank:
            emphasis = i
        rows.append(
            (
                format_number(r.rank, lang),
                format_number(r.steps, lang),
                f"{format_milliseconds(r.step_time.mean, lang)} ± {format_milliseconds(r.step_time.sd, lang)}",
                format_milliseconds(r.compute.mean, lang),
                exposed_text(r, lang),
                format_milliseconds(r.other.mean, lang),
                format_milliseconds(r.work, lang),
                "—" if r.overlap is None else format_percent(r.overlap, lang),
            )
        )
    return Grid(header, tuple(rows), _("Mean per step, by rank"), emphasis)


def exposed_text(rank: RankBreakdown, lang: Lang) -> str:
    """A rank's exposed communication and, inside it, its wait for the slowest rank: "204 ms (190 ms waiting)".

    The wait is :attr:`~dpscale.explain.breakdown.RankBreakdown.exposed_wait`; none is said when nil.
    """
    shown = format_milliseconds(rank.exposed_communication.mean, lang)
    if rank.exposed_wait <= 0:
        return shown
    _ = translation(lang).gettext
    waiting = format_milliseconds(rank.exposed_wait, lang)
    return _("%(exposed)s (%(wait)s waiting)") % {"exposed": shown, "wait": waiting}


def alone_text(e: Explanation, lang: Lang) -> str:
    """The step one device would take alone (compute + other): the ranks' range and mean where they differ."""
    c = e.calibration
    mean = format_milliseconds(c.single_device_step, lang)
    low, high = (format_milliseconds(work, lang) for work in e.work_range)
    if low == high:
        return mean
    _ = translation(lang).gettext
    return _("%(low)s to %(high)s by rank, mean %(mean)s") % {"low": low, "high": high, "mean": mean}


def explanation_rows(e: Explanation, lang: Lang) -> list[Row]:
    """The run as a whole: its slowest rank, the efficiency it implies, and what predict can take from it."""
    _ = translation(lang).gettext
    c = e.calibration
    rows = [
        Row(_("Slowest rank"), format_number(e.slowest_rank, lang), "slowest_rank"),
        Row(_("Step time"), format_milliseconds(e.step_time, lang), "step_time"),
        Row(_("Efficiency the run implies (E)"), format_percent(e.efficiency, lang), "efficiency"),
        Row(_("Step alone on one device (compute + other)"), alone_text(e, lang), "single_device_step"),
        Row(_("Communication in flight, slowest rank"), format_milliseconds(c.communication_time, lang)),
        Row(_("Wait for the slowest rank, mean over ranks"), format_milliseconds(c.straggler_wait, lang)),
        Row(_("Step-time variation (CV)"), format_percent(c.step_time_cv, lang)),
    ]
    if c.bandwidth is not None:
        rows.append(
            Row(_("Achieved bandwidth (algbw)"), f"{format_gigabytes_per_second(c.bandwidth, lang, decimals=3)} GB/s")
        )
    return rows


def explanation_levers(e: Explanation, lang: Lang) -> Grid:
    """The measured terms worth removing, the largest first: what each saves per step and the speed-up."""
    _ = translation(lang).gettext
    rows = tuple(
        (
            _(lever.description),
            format_milliseconds(lever.saving, lang),
            "—" if lever.speedup is None else format_speedup(lever.speedup, lang, decimals=2),
        )
        for lever in e.levers
    )
    return Grid((_("Lever"), _("Saves per step"), _("Speed-up")), rows, _("Levers, from the measured terms"))


def fit_grid(f: Fit, lang: Lang) -> Grid:
    """Every model fitted, its parameters with standard errors, R² and AICc; the chosen one emphasised."""
    _ = translation(lang).gettext
    rows = []
    emphasis = None
    for i, m in enumerate(f.models):
        params = ", ".join(f"{k} = {format_estimate(v, err, lang)}" for k, v, err in m.estimates())
        if m.name == f.chosen:
            emphasis = i
        aicc = format_number(m.aicc, lang, decimals=1) if m.aicc is not None else "—"
        r2 = format_r2(m.r2, lang) if m.params else "—"
        rows.append((f"{m.name}{' ←' if m.name == f.chosen else ''}", params or "—", r2, aicc))
    title = _("Models fitted to %(n)s measurements") % {"n": len(f.points)}
    return Grid((_("Model"), _("Parameters (± standard error)"), "R²", "AICc"), tuple(rows), title, emphasis)
