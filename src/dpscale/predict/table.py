"""A prediction as the terminal and the page show it: one set of columns, rows and legend lines.

:func:`prediction_table` is read by the command line (through :func:`dpscale.report.prediction_grid`,
a grid for Rich) and by the /predict page, so that both show the same
columns and the same values; each column has a short heading (the terminal's) and a title (the
page's). In words, as :mod:`dpscale.predict.wording` is, beside it; no Rich and no numpy here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpscale.format import (
    format_memory,
    format_milliseconds,
    format_number,
    format_percent,
    format_speedup,
)
from dpscale.i18n import Lang, translation
from dpscale.predict.wording import bound_by, scaled, source_name

if TYPE_CHECKING:
    from dpscale.predict.prediction import Prediction

__all__ = [
    "Column",
    "PredictionTable",
    "efficiency_with_interval",
    "levers_title",
    "prediction_legend",
    "prediction_table",
]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its key (as the JSON names the value), its heading, its title, and where its figure came from."""

    key: str
    heading: str  # the terminal's, short: E, A, S
    title: str  # the page's, in words
    source: str | None = None  # the term's source (dpscale.predict.sources), said in the source's word


@dataclass(frozen=True, slots=True)
class PredictionTable:
    """The columns, a row of text per device count, the rows over the device's memory, and the legend."""

    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    over_memory: tuple[bool, ...]
    legend: tuple[str, ...]

    @property
    def sourced(self) -> bool:
        return any(c.source is not None for c in self.columns)


def prediction_table(p: Prediction, lang: Lang) -> PredictionTable:
    """E(n), where a step's time goes, tokens/s and MFU when given, memory and what bounds it, per device count."""
    _ = translation(lang).gettext

    def term(key: str, heading: str, title: str, name: str) -> Column:
        source = p.source(name)
        return Column(key, heading, title, None if source is None else source_name(source, lang))

    fed = p.workload.input_throughput is not None
    rates, per_device, mfu = p.tokens_per_second, None, p.mfu
    columns = [
        Column("devices", _("Devices"), _("Devices")),
        Column("efficiency", "E", _("Efficiency (90%% interval)").replace("%%", "%")),
        Column("actual_throughput", "A", _("Actual throughput")),
        Column("speedup", "S", _("Speedup")),
        Column("step_time", _("Step"), _("Step time")),
        term("compute", _("Compute"), _("Compute"), "compute"),
        term("exposed_communication", _("Comm."), _("Exposed communication"), "exposed_communication"),
        term("straggler_wait", _("Wait"), _("Straggler wait"), "straggler_wait"),
    ]
    if fed:
        columns.append(term("input_wait", _("Input"), _("Input wait"), "input_wait"))
    if rates is not None:
        per_device = rates / p.devices
        columns.append(Column("tokens_per_second", _("Tokens/s"), _("Tokens/s, whole cluster")))
        columns.append(Column("tokens_per_second_per_device", _("Tokens/s/device"), _("Tokens/s per device")))
    if mfu is not None:
        columns.append(Column("mfu", "MFU", _("MFU (model FLOPs utilization)")))
    columns.append(Column("memory_per_device", _("Memory"), _("Memory per device")))
    columns.append(Column("bottleneck", _("Bound by"), _("Bound by")))
    fits = p.fits
    low, high = p.efficiency_interval
    rows = []
    for i, n in enumerate(p.devices.tolist()):
        row = [
            format_number(int(n), lang),
            efficiency_with_interval(float(p.efficiency[i]), float(low[i]), float(high[i]), lang),
            format_number(float(p.actual_throughput[i]), lang, decimals=0),
            format_speedup(float(p.speedup[i]), lang, decimals=1),
            format_milliseconds(float(p.step_time[i]), lang),
            format_milliseconds(float(p.compute_time[i]), lang),
            format_milliseconds(float(p.exposed_communication[i]), lang),
            format_milliseconds(float(p.straggler_wait[i]), lang),
        ]
        if fed:
            row.append(format_milliseconds(float(p.input_wait[i]), lang))
        if rates is not None and per_device is not None:
            row += [
                format_number(float(rates[i]), lang, decimals=0),
                format_number(float(per_device[i]), lang, decimals=0),
            ]
        if mfu is not None:
            row.append(format_percent(float(mfu[i]), lang))
        row.append(format_memory(float(p.memory.total[i]), lang) + ("" if fits is None or fits[i] else " ✗"))
        row.append(bound_by(p, i, lang))
        rows.append(tuple(row))
    over = tuple(not bool(f) for f in fits) if fits is not None else (False,) * len(rows)
    return PredictionTable(tuple(columns), tuple(rows), over, tuple(prediction_legend(p, lang)))


def prediction_legend(p: Prediction, lang: Lang) -> list[str]:
    """What the table's headings and marks mean, a line each (the terminal prints them under it, the page too)."""
    _ = translation(lang).gettext
    lines = [
        _(
            "E efficiency, A actual throughput, S speedup; Comm.: communication not hidden by the backward pass; "
            "Wait: for the slowest device."
        )
    ]
    if p.workload.input_throughput is not None:
        lines.append(_("Input: waiting for the node's input pipeline, shared by its devices."))
    memory = _("Memory: what each device holds (%(strategy)s).") % {"strategy": p.cluster.sharding}
    shown = p.fits is not None and not bool(p.fits.all())  # ✗ said where a row carries it
    lines.append(memory + (" " + _("✗: more than the device's memory.") if shown else ""))
    t = p.tokens
    if t is not None:
        lines.append(
            _("Tokens/s: the actual throughput times %(tokens)s tokens per sample.")
            % {"tokens": format_number(t.per_sample, lang)}
        )
        if t.flops is not None and t.peak is not None:
            lines.append(
                _("MFU: tokens/s × %(flops)sFLOP per token ÷ (devices × %(peak)sFLOP/s).")
                % {"flops": scaled(t.flops, lang), "peak": scaled(t.peak, lang)}
            )
    return lines


def levers_title(p: Prediction, lang: Lang) -> str:
    """The levers' heading: best first, those that fit the device's memory ahead of the others when it is known."""
    _ = translation(lang).gettext
    largest = {"n": format_number(int(max(p.devices)), lang)}
    if p.fits is None:
        return _("Levers at %(n)s devices, best first") % largest
    return _("Levers at %(n)s devices: those that fit first, each group best first") % largest


def efficiency_with_interval(e: float, low: float, high: float, lang: Lang) -> str:
    """E and its interval in whole percent, rounded outwards so that it still holds E: ``97.5% (26–98)``."""
    below, above = math.floor(round(low * 100, 9)), math.ceil(round(high * 100, 9))  # 9 places: 0.29·100 is 29
    return f"{format_percent(e, lang)} ({format_number(below, lang)}–{format_number(above, lang)})"
