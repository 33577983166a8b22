"""Tables for the terminal (Rich), in the user's language."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from dpscale.format import (
    format_duration,
    format_energy,
    format_milliseconds,
    format_money,
    format_number,
    format_percent,
    format_points,
    format_speedup,
)
from dpscale.i18n import Lang, translation

if TYPE_CHECKING:  # `dpscale scale` loads only what it prints
    from dpscale.batch import Batch, BatchSolution
    from dpscale.fit import Fit
    from dpscale.pipeline import Bubble
    from dpscale.plan import DeadlinePlan, Plan
    from dpscale.predict.model import Lever, Prediction
    from dpscale.scaling import Solution


def _console() -> Console:
    # Everything prints as written: no markup (a unit such as "tok/s [bf16]" or a file name is the
    # user's text, not a style), no :emoji: codes (so Rich's large emoji table is never loaded), no
    # highlighting. Emphasis is given with Text styles.
    return Console(highlight=False, emoji=False, markup=False)


def _print_table(out: Console, table: Table) -> None:
    """Print ``table`` whole.

    On a terminal Rich fits the table to the window. Into a file or a pipe (where Rich assumes 80
    columns) a wide table would come out with its numbers cut to "15.19…"; there it is printed at
    its natural width instead.
    """
    if not out.is_terminal:
        natural = Measurement.get(out, out.options.update_width(_UNBOUNDED), table).maximum
        if natural > out.width:
            width = out.width
            out.width = natural
            try:
                out.print(table)
            finally:
                out.width = width
            return
    out.print(table)


_UNBOUNDED = 10_000  # columns: wider than any table here


def print_scaling(solution: Solution, lang: Lang, console: Console | None = None) -> None:
    _ = translation(lang).gettext
    s = solution.scaling
    unit = s.unit

    def throughput(x: float) -> str:
        return f"{format_number(x, lang)} {unit}"

    rows = [
        ("devices", _("Devices (d)"), format_number(s.devices, lang)),
        ("per_device_throughput", _("Per-device throughput (v)"), throughput(s.per_device_throughput)),
        ("efficiency", _("Scaling efficiency (E)"), format_percent(s.efficiency, lang)),
        (None, _("Ideal throughput (I = d·v)"), throughput(s.ideal_throughput)),
        ("actual_throughput", _("Actual throughput (A = I·E)"), throughput(s.actual_throughput)),
        (None, _("Speedup (S = d·E)"), format_speedup(s.speedup, lang)),
        (None, _("Lost throughput (I − A)"), throughput(s.lost_throughput)),
    ]
    table = Table(box=box.SIMPLE, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    solved = _("solved")
    for key, label, value in rows:
        if solution.unknown != "actual_throughput" and key == solution.unknown:
            table.add_row(Text(label, style="bold"), Text.assemble((value, "bold"), f"  ← {solved}"))
        else:
            table.add_row(label, value)
    out = console or _console()
    _print_table(out, table)
    if solution.target_throughput is not None and solution.surplus_throughput > 0:
        out.print(
            _("Target {target}: {devices} devices give {surplus} more.").format(
                target=throughput(solution.target_throughput),
                devices=format_number(s.devices, lang),
                surplus=throughput(solution.surplus_throughput),
            ),
            highlight=False,
        )


def print_rows(rows: list[tuple[str, str]], console: Console | None = None, notes: list[str] | None = None) -> None:
    """A two-column table of labels and values, then any notes, one per line."""
    table = Table(box=box.SIMPLE, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    for label, value in rows:
        table.add_row(label, value)
    out = console or _console()
    _print_table(out, table)
    for note in notes or []:
        out.print(note, highlight=False)


def print_batch(solution: BatchSolution | None, batch: Batch, lang: Lang, lr: float | None = None) -> None:
    _ = translation(lang).gettext
    rows = [
        (_("Micro-batch per device (b)"), format_number(batch.micro_batch, lang)),
        (_("Accumulation steps (k)"), format_number(batch.accumulation, lang)),
        (_("Data-parallel devices (d)"), format_number(batch.devices, lang)),
        (_("Per-device batch (b·k)"), format_number(batch.per_device_batch, lang)),
        (_("Global batch (B = b·k·d)"), format_number(batch.global_batch, lang)),
    ]
    if batch.global_batch_tokens is not None:
        rows.append((_("Global batch in tokens (B·L)"), format_number(batch.global_batch_tokens, lang)))
    if lr is not None:
        rows.append((_("Learning rate, linear scaling rule"), format_number(lr, lang, decimals=6)))
    notes = []
    if solution is not None and not solution.exact:
        notes.append(
            _("Target {target}: the nearest whole number gives {batch}, {diff} above it.").format(
                target=format_number(solution.target_global_batch, lang),
                batch=format_number(batch.global_batch, lang),
                diff=format_number(solution.difference, lang),
            )
        )
    print_rows(rows, notes=notes)


def print_bubble(b: Bubble, lang: Lang) -> None:
    _ = translation(lang).gettext
    rows = [
        (_("Pipeline stages (p)"), format_number(b.stages, lang)),
        (_("Micro-batches per step (m)"), format_number(b.micro_batches, lang)),
        (_("Schedule"), b.schedule + (f" (v = {b.chunks})" if b.schedule == "interleaved" else "")),
        (_("Bubble, share of the step"), format_percent(b.fraction, lang, decimals=2)),
        (_("Bubble, relative to useful time"), format_percent(b.overhead, lang, decimals=2)),
        (_("Pipeline efficiency (1 − bubble)"), format_percent(b.efficiency, lang, decimals=2)),
    ]
    if b.step_time is not None and b.idle_time is not None:
        rows.append((_("Step time"), format_duration(b.step_time, lang)))
        rows.append((_("Idle time per step"), format_duration(b.idle_time, lang)))
    if b.activations_in_flight is not None:
        rows.append((_("Micro-batches of activations held (stage 1)"), format_number(b.activations_in_flight, lang)))
    print_rows(rows)


def plan_rows(p: Plan, lang: Lang) -> list[tuple[str, str]]:
    _ = translation(lang).gettext
    s = p.scaling
    rows = [
        (_("Work"), format_number(p.work, lang)),
        (_("Devices (d)"), format_number(s.devices, lang)),
        (_("Scaling efficiency (E)"), format_percent(s.efficiency, lang)),
        (_("Actual throughput (A)"), f"{format_number(s.actual_throughput, lang)} {s.unit}"),
        (_("Time to train"), format_duration(p.seconds, lang)),
        (_("Device-hours"), format_number(p.device_hours, lang, decimals=1)),
    ]
    if p.cost is not None:
        rows.append((_("Cost"), format_money(p.cost, p.currency, lang)))
    if p.energy_kwh is not None:
        rows.append((_("Energy (devices only)"), format_energy(p.energy_kwh, lang)))
    return rows


def print_plan(p: Plan, lang: Lang) -> None:
    print_rows(plan_rows(p, lang))


def print_deadline(dp: DeadlinePlan, lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    out.print(
        _("Fewest devices that finish within {deadline}: {devices}").format(
            deadline=format_duration(dp.deadline_seconds, lang), devices=format_number(dp.plan.scaling.devices, lang)
        )
    )
    print_rows(plan_rows(dp.plan, lang), out)
    table = Table(box=box.SIMPLE, pad_edge=False, title=_("Cluster sizes compared"))
    columns = [_("Devices"), _("Efficiency"), _("Time to train"), _("Device-hours")]
    if dp.plan.cost is not None:
        columns.append(_("Cost"))
    for name in columns:
        table.add_column(name, justify="right")
    for option in dp.options:
        cells = [
            format_number(option.scaling.devices, lang),
            format_percent(option.scaling.efficiency, lang),
            format_duration(option.seconds, lang),
            format_number(option.device_hours, lang, decimals=1),
        ]
        if option.cost is not None:
            cells.append(format_money(option.cost, option.currency, lang))
        chosen = option.scaling.devices == dp.plan.scaling.devices
        table.add_row(*(Text(c, style="bold") if chosen else c for c in cells))
    _print_table(out, table)


def print_prediction(p: Prediction, levers: list[Lever], lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    table = Table(box=box.SIMPLE, pad_edge=False)
    from dpscale.predict.wording import lever_text

    for name in (
        _("Devices"),
        "E",
        "A",
        "S",
        _("Step"),
        _("Compute"),
        _("Comm."),
        _("Wait"),
        _("Bound by"),
    ):
        table.add_column(name, justify="right", no_wrap=True)
    names = {"compute": _("compute"), "communication": _("communication"), "stragglers": _("stragglers")}
    for i, n in enumerate(p.devices):
        table.add_row(
            format_number(int(n), lang),
            format_percent(float(p.efficiency[i]), lang),
            format_number(float(p.actual_throughput[i]), lang, decimals=0),
            format_speedup(float(p.speedup[i]), lang, decimals=1),
            format_milliseconds(float(p.step_time[i]), lang),
            format_milliseconds(float(p.compute_time[i]), lang),
            format_milliseconds(float(p.exposed_communication[i]), lang),
            format_milliseconds(float(p.straggler_wait[i]), lang),
            names[p.bottleneck[i]],
        )
    _print_table(out, table)
    out.print(
        _(
            "E efficiency, A actual throughput, S speedup; Comm.: communication not hidden by the backward pass; "
            "Wait: for the slowest device."
        )
    )
    if levers:
        largest = format_number(int(p.devices.max()), lang)
        lever_table = Table(
            box=box.SIMPLE, pad_edge=False, title=_("Levers at %(n)s devices, best first") % {"n": largest}
        )
        lever_table.add_column(_("What if"), justify="left")
        lever_table.add_column(_("Efficiency"), justify="right")
        lever_table.add_column(_("Gain (points)"), justify="right")
        for lever in levers:
            text = lever_text(lever.name, lang)
            lever_table.add_row(text, format_percent(lever.efficiency, lang), format_points(lever.gain, lang))
        _print_table(out, lever_table)


def print_fit(f: Fit, lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    models = Table(
        box=box.SIMPLE, pad_edge=False, title=_("Models fitted to %(n)s measurements") % {"n": len(f.points)}
    )
    for name in (_("Model"), _("Parameters (± standard error)"), "R²", "AICc"):
        models.add_column(name, justify="left" if name != "AICc" else "right")
    for m in f.models:
        params = ", ".join(
            f"{k} = {format_number(v, lang, decimals=4)}"
            + (f" ± {format_number(err, lang, decimals=4)}" if err is not None else "")
            for k, v, err in m.estimates()
        )
        mark = " ←" if m.name == f.chosen else ""
        aicc = format_number(m.aicc, lang, decimals=1) if m.aicc is not None else "—"
        r2 = format_number(m.r2, lang, decimals=5) if m.params else "—"
        models.add_row(f"{m.name}{mark}", params or "—", r2, aicc)
    _print_table(out, models)
    best = f.best
    if best.predictions:
        table = Table(box=box.SIMPLE, pad_edge=False, title=_("Predicted by %(model)s") % {"model": best.name})
        for name in (_("Devices"), _("Throughput"), _("95%% interval").replace("%%", "%"), _("Efficiency")):
            table.add_column(name, justify="right")
        for p in best.predictions:
            interval = (
                f"{format_number(p.low, lang, decimals=0)} – {format_number(p.high, lang, decimals=0)}"
                if p.has_interval
                else "—"
            )
            table.add_row(
                format_number(p.devices, lang) + (" *" if p.extrapolated else ""),
                format_number(p.throughput, lang, decimals=0),
                interval,
                format_percent(p.efficiency, lang) if math.isfinite(p.efficiency) else "—",
            )
        _print_table(out, table)
        if any(p.extrapolated for p in best.predictions):
            out.print(_("* beyond the largest measured size"))
    if f.peak_devices is not None:
        out.print(
            _("The USL fit peaks at about %(n)s devices: past that, adding devices slows the job down.")
            % {"n": format_number(round(f.peak_devices), lang)}
        )
    for warning in f.warnings:
        out.print(_("warning: %(text)s") % {"text": warning})


def print_measurements(found: list[dict[str, Any]], out: str, lang: Lang) -> None:
    _ = translation(lang).gettext
    console = _console()
    table = Table(box=box.SIMPLE, pad_edge=False, title=_("Measured (records added to %(out)s)") % {"out": out})
    for name in (
        _("Devices"),
        _("Throughput"),
        _("95%% interval").replace("%%", "%"),
        _("Efficiency"),
        _("E interval"),
        _("Step time CV"),
    ):
        table.add_column(name, justify="right")

    def number(x: object, decimals: int = 0) -> str:
        return format_number(float(x), lang, decimals=decimals) if isinstance(x, int | float) else "—"

    for r in found:
        ci = r.get("throughput_ci") or [None, None]
        eci = r.get("efficiency_ci") or [None, None]
        e = r.get("efficiency")
        step = r.get("step_time")
        cv = step.get("cv") if isinstance(step, dict) else None
        table.add_row(
            number(r["devices"]),
            number(r["throughput"], 1),
            f"{number(ci[0], 1)} – {number(ci[1], 1)}",
            format_percent(float(e), lang) if isinstance(e, int | float) else "—",
            (
                f"{format_percent(float(eci[0]), lang)} – {format_percent(float(eci[1]), lang)}"
                if isinstance(eci[0], int | float)
                else "—"
            ),
            format_percent(float(cv), lang) if isinstance(cv, int | float) else "—",
        )
    _print_table(console, table)


def print_probe(profile: dict[str, Any], out: str, lang: Lang) -> None:
    _ = translation(lang).gettext
    console = _console()
    table = Table(
        box=box.SIMPLE, pad_edge=False, title=_("All-reduce over %(n)s ranks") % {"n": profile.get("world_size")}
    )
    for name in (_("Size (bytes)"), _("Time"), "algbw (GB/s)", "busbw (GB/s)"):
        table.add_column(name, justify="right")
    for row in profile.get("sizes", []):
        table.add_row(
            format_number(row["bytes"], lang),
            format_milliseconds(row["seconds"], lang),
            format_number(row["algbw"] / 1e9, lang, decimals=3),
            format_number(row["busbw"] / 1e9, lang, decimals=3),
        )
    _print_table(console, table)
    tier = profile.get("intra") or profile.get("inter")
    if isinstance(tier, dict):
        console.print(
            _("Fitted: latency α = %(a)s, bandwidth 1/β = %(b)s GB/s; profile written to %(out)s")
            % {
                "a": format_milliseconds(tier["latency"], lang),
                "b": format_number(tier["bandwidth"] / 1e9, lang, decimals=3),
                "out": out,
            }
        )
