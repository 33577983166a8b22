"""Tables for the terminal (Rich), in the user's language; what they hold comes from dpscale.report."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, JustifyMethod
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from dpscale import report
from dpscale.errors import escaped
from dpscale.format import (
    format_duration,
    format_milliseconds,
    format_number,
    format_percent,
    format_points,
)
from dpscale.i18n import Lang, translation

__all__ = [
    "print_batch",
    "print_bubble",
    "print_deadline",
    "print_explanation",
    "print_fit",
    "print_import",
    "print_measurements",
    "print_planned",
    "print_prediction",
    "print_probe",
    "print_rows",
    "print_scaling",
]

if TYPE_CHECKING:  # `dpscale scale` loads only what it prints
    from dpscale.batch import BatchResult
    from dpscale.explain import Explanation
    from dpscale.fit import Fit
    from dpscale.nccltests import Imported
    from dpscale.pipeline import Bubble
    from dpscale.plan import DeadlinePlan, PlanResult
    from dpscale.predict.levers import Lever
    from dpscale.predict.model import Prediction
    from dpscale.scaling import Solution


def _console() -> Console:
    # Everything prints as written: no markup (a unit such as "tok/s [bf16]" or a file name is the
    # user's text, not a style), no :emoji: codes (so Rich's large emoji table is never loaded), no
    # highlighting. Emphasis is given with Text styles.
    return Console(highlight=False, emoji=False, markup=False)


_UNBOUNDED = 10_000  # columns: wider than any table here


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


def print_scaling(solution: Solution, lang: Lang, console: Console | None = None) -> None:
    _ = translation(lang).gettext
    s = solution.scaling
    table = Table(box=box.SIMPLE, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    solved = _("solved")
    for row in report.scaling_rows(s, lang):
        if solution.unknown != "actual_throughput" and row.key == solution.unknown:
            table.add_row(Text(row.label, style="bold"), Text.assemble((row.value, "bold"), f"  ← {solved}"))
        else:
            table.add_row(row.label, row.value)
    out = console or _console()
    _print_table(out, table)
    if solution.target_throughput is not None and solution.surplus_throughput > 0:

        def throughput(x: float) -> str:
            return f"{format_number(x, lang)} {s.unit}"

        out.print(
            _("Target {target}: {devices} devices give {surplus} more.").format(
                target=throughput(solution.target_throughput),
                devices=format_number(s.devices, lang),
                surplus=throughput(solution.surplus_throughput),
            ),
            highlight=False,
        )


def print_rows(rows: list[report.Row], console: Console | None = None, notes: list[str] | None = None) -> None:
    """A two-column table of labels and values, then any notes, one per line."""
    table = Table(box=box.SIMPLE, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    for row in rows:
        table.add_row(row.label, row.value)
    out = console or _console()
    _print_table(out, table)
    for note in notes or []:
        out.print(note, highlight=False)


def _grid_table(grid: report.Grid, justify: tuple[JustifyMethod, ...] = ("right",), *, no_wrap: bool = False) -> Table:
    """A Rich table of ``grid``; ``justify`` per column (the last one repeats)."""
    table = Table(box=box.SIMPLE, pad_edge=False, title=grid.title)
    for i, name in enumerate(grid.header):
        table.add_column(name, justify=justify[min(i, len(justify) - 1)], no_wrap=no_wrap)
    for i, row in enumerate(grid.rows):
        cells = [escaped(c) for c in row]  # a trace's file name among them: shown, never obeyed
        table.add_row(*(Text(c, style="bold") if i == grid.emphasis else c for c in cells))
    return table


def print_batch(result: BatchResult, lang: Lang) -> None:
    _ = translation(lang).gettext
    solution, batch = result.solution, result.batch
    notes = []
    if solution is not None and not solution.exact:
        notes.append(
            _("Target {target}: the nearest whole number gives {batch}, {diff} above it.").format(
                target=format_number(solution.target_global_batch, lang),
                batch=format_number(batch.global_batch, lang),
                diff=format_number(solution.difference, lang),
            )
        )
    print_rows(report.batch_rows(batch, lang, result.learning_rate), notes=notes)


def print_bubble(b: Bubble, lang: Lang) -> None:
    print_rows(report.bubble_rows(b, lang))


def print_planned(result: PlanResult, lang: Lang) -> None:
    """The run on the devices given, the fewest that meet the deadline, and whether the model fits: those asked for."""
    if result.devices_given:
        print_rows(report.plan_rows(result.plan, lang))
    if result.deadline is not None:
        print_deadline(result.deadline, lang)
    if result.memory is not None:
        print(report.memory_sentence(result.memory, result.plan.scaling.devices, lang))


def print_deadline(dp: DeadlinePlan, lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    out.print(
        _("Fewest devices that finish within {deadline}: {devices}").format(
            deadline=format_duration(dp.deadline_seconds, lang), devices=format_number(dp.plan.scaling.devices, lang)
        )
    )
    print_rows(report.plan_rows(dp.plan, lang), out)
    _print_table(out, _grid_table(report.deadline_grid(dp, lang)))


def print_prediction(p: Prediction, levers: list[Lever], lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    from dpscale.predict.wording import lever_line, levers_note, warning_lines

    table = _grid_table(report.prediction_grid(p, lang), no_wrap=True)
    _print_table(out, table)
    for line in report.prediction_legend(p, lang):
        out.print(line)
    for note in report.prediction_notes(p, lang):
        out.print(note)
    for warning in warning_lines(p, lang):
        out.print(Text(_("Warning: %(warning)s") % {"warning": warning}, style="yellow"))
    if levers:
        lever_table = Table(box=box.SIMPLE, pad_edge=False, title=report.levers_title(p, lang))
        lever_table.add_column(_("What if"), justify="left")
        lever_table.add_column(_("Efficiency"), justify="right")
        lever_table.add_column(_("Gain (points)"), justify="right")
        if p.fits is not None:
            lever_table.add_column(_("Fits"), justify="left")
        for lever in levers:
            cells = [
                lever_line(lever, lang),
                format_percent(lever.efficiency, lang),
                format_points(lever.gain, lang),
            ]
            if p.fits is not None:
                cells.append(_("yes") if lever.fits else _("no"))
            lever_table.add_row(*cells)
        _print_table(out, lever_table)
        rests_on = levers_note(p, lang)
        if rests_on:
            out.print(rests_on)


def print_explanation(e: Explanation, lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    _print_table(out, _grid_table(report.explanation_grid(e, lang), no_wrap=True))
    out.print(
        _(
            "Step = Compute + Exposed comm. + Other. Exposed comm.: a collective in flight while nothing "
            "computes, of which (waiting) for the slowest rank; Other: neither (input, host, idle); "
            "Alone: compute + other, the step on one device; Overlap: the share of communication hidden behind compute."
        )
    )
    print_rows(report.explanation_rows(e, lang), out)
    if e.levers:
        _print_table(out, _grid_table(report.explanation_levers(e, lang), ("left", "right")))
    for note in e.notes:  # "FILE: 3 events could not be read": the file's name escaped
        out.print(_("note: %(text)s") % {"text": escaped(note.localized(lang))})


def print_fit(f: Fit, lang: Lang) -> None:
    _ = translation(lang).gettext
    out = _console()
    _print_table(out, _grid_table(report.fit_grid(f, lang), ("left", "left", "left", "right")))
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
    for note in f.notes:
        out.print(_("warning: %(text)s") % {"text": escaped(note.localized(lang))})


def print_measurements(found: Iterable[Mapping[str, Any]], out: str, lang: Lang) -> None:
    """The records ``dpscale measure`` returned, as JSON objects (read as :class:`dpscale.records.Measurement`)."""
    from dpscale.records import Measurement

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

    def number(x: float | None, decimals: int = 0) -> str:
        return "—" if x is None else format_number(float(x), lang, decimals=decimals)

    def percent(x: float | None) -> str:
        return "—" if x is None else format_percent(float(x), lang)

    for record in map(Measurement.from_dict, found):
        low, high = record.throughput_ci or (None, None)
        table.add_row(
            number(record.devices),
            number(record.throughput, 1),
            f"{number(low, 1)} – {number(high, 1)}",
            percent(record.efficiency),
            "—" if record.efficiency_ci is None else " – ".join(map(percent, record.efficiency_ci)),
            percent(None if record.step_time is None else record.step_time.cv),
        )
    _print_table(console, table)


def print_probe(profile: Mapping[str, Any], out: str, lang: Lang) -> None:
    """The profile ``dpscale probe`` returned, as a JSON object (read as :class:`dpscale.records.NetworkProfile`)."""
    from dpscale.records import NetworkProfile

    _ = translation(lang).gettext
    console = _console()
    probed = NetworkProfile.from_dict(profile)
    table = Table(box=box.SIMPLE, pad_edge=False, title=_("All-reduce over %(n)s ranks") % {"n": probed.world_size})
    for name in (_("Size (bytes)"), _("Time"), "algbw (GB/s)", "busbw (GB/s)"):
        table.add_column(name, justify="right")
    for row in probed.sizes:
        table.add_row(
            format_number(row.bytes, lang),
            format_milliseconds(row.seconds, lang),
            report.gigabytes_per_second(row.algbw, lang, decimals=3),
            report.gigabytes_per_second(row.busbw, lang, decimals=3),
        )
    _print_table(console, table)
    tier = probed.intra or probed.inter
    if tier is not None:
        console.print(
            _("Fitted: latency α = %(a)s, bandwidth 1/β = %(b)s GB/s; profile written to %(out)s")
            % {
                "a": format_milliseconds(tier.latency, lang),
                "b": report.gigabytes_per_second(tier.bandwidth, lang, decimals=3),
                "out": out,
            }
        )


def print_import(imported: Imported, out: str, lang: Lang) -> None:
    """The α and β fitted to nccl-tests' outputs, and how closely the model gives each run back."""
    _ = translation(lang).gettext
    console = _console()
    profile = imported.profile
    title = _("Fitted from nccl-tests") + (f" ({profile.device_name})" if profile.device_name else "")
    table = Table(box=box.SIMPLE, pad_edge=False, title=title)
    for name in (_("Collective"), _("Tier"), _("Latency α"), _("Bandwidth 1/β (GB/s)")):
        table.add_column(name, justify="right")
    tiers = {"intra": _("in a node"), "inter": _("between nodes")}
    for collective, links in profile.collectives.items():
        for tier, link in zip(("intra", "inter"), links, strict=True):
            if link is not None:
                table.add_row(
                    collective,
                    tiers[tier],
                    format_milliseconds(link.latency, lang),
                    report.gigabytes_per_second(link.bandwidth, lang, decimals=1),
                )
    _print_table(console, table)
    console.print(
        _(
            "1/β is a bus bandwidth: the busbw a ring reaches when bytes dominate, in nccl-tests' terms "
            "(busbw = algbw·2(n−1)/n for an all-reduce of n ranks, algbw·(n−1)/n for a reduce-scatter or an "
            "all-gather, where algbw = bytes ÷ time), so an all-reduce of n ranks moves its bytes at an "
            "algorithm bandwidth of 1/β·n/(2(n−1))."
        )
    )
    checks = Table(box=box.SIMPLE, pad_edge=False, title=_("Each run given back by the model"))
    for name in (_("File"), _("Ranks / nodes"), _("Size (bytes)"), _("Measured"), _("Model")):
        checks.add_column(name, justify="right")
    for check in imported.checks:
        for size, measured, model in (check.smallest, check.largest):
            checks.add_row(
                check.file,
                f"{format_number(check.ranks, lang)} / {format_number(check.hosts, lang)}",
                format_number(size, lang),
                format_milliseconds(measured, lang),
                format_milliseconds(model, lang),
            )
    _print_table(console, checks)
    console.print(_("Profile written to %(out)s") % {"out": out}, soft_wrap=True)
