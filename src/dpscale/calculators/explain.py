"""Explain a run: where each rank's step time goes (compute, exposed communication, other), from the
job's profiler traces, and the efficiency the run implies.

What it takes (:data:`EXPLAIN`: the traces; the command line alone takes paths, the ``/explain`` page
takes uploads), computes (:mod:`dpscale.explain`) and shows (:func:`present`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpscale.calculators.shown import Grid, Note, Row, Rows, Shown
from dpscale.format import (
    format_gigabytes_per_second,
    format_milliseconds,
    format_number,
    format_percent,
    format_speedup,
)
from dpscale.i18n import Lang, translation
from dpscale.inputs import Cli, Definition, Input, Values

if TYPE_CHECKING:
    from dpscale.explain import Explanation, RankBreakdown

__all__ = ["EXPLAIN", "alone_text", "exposed_text", "levers_grid", "present", "ranks_grid", "summary_rows"]


def _explained(values: Values) -> Explanation:
    """The run the traces show: read by the input's kind where the command line names them (each file read and
    reduced in turn, errors naming the trace), or a library caller's paths, read here by the same function."""
    from dpscale.explain import Explanation, explain

    run = EXPLAIN.complete(values)["trace"]
    return run if isinstance(run, Explanation) else explain(run)


EXPLAIN = Definition(
    "explain",
    (
        Input(
            "trace",
            "traces",
            "Profiler traces (Chrome trace JSON, plain or .gz), one per rank, or folders of them.",
            required=True,
            edges=("cli",),
            cli=Cli(positional=True, repeatable=True),
        ),
    ),
    _explained,
)


def present(e: Explanation, lang: Lang) -> Shown:
    """Each rank's mean step and its parts, what the terms mean, the run as a whole, the levers the measured terms
    offer, and what could not be read."""
    _ = translation(lang).gettext
    legend = _(
        "Step = Compute + Exposed comm. + Other. Exposed comm.: a collective in flight while nothing "
        "computes, of which (waiting) for the slowest rank; Other: neither (input, host, idle); "
        "Alone: compute + other, the step on one device; Overlap: the share of communication hidden behind compute."
    )
    parts: list[Rows | Grid | Note] = [ranks_grid(e, lang), Note(legend, key="legend"), Rows(summary_rows(e, lang))]
    if e.levers:
        parts.append(levers_grid(e, lang))
    parts.extend(Note(note.localized(lang), warning=True, key="notes") for note in e.notes)
    return Shown(tuple(parts))


def ranks_grid(e: Explanation, lang: Lang) -> Grid:
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
    return Grid(header, tuple(rows), _("Mean per step, by rank"), emphasis, key="ranks", no_wrap=True)


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


def summary_rows(e: Explanation, lang: Lang) -> tuple[Row, ...]:
    """The run as a whole: its slowest rank, the efficiency it implies, and what predict can take from it."""
    _ = translation(lang).gettext
    c = e.calibration
    rows = [
        Row(_("Slowest rank"), format_number(e.slowest_rank, lang), "slowest_rank"),
        Row(_("Step time"), format_milliseconds(e.step_time, lang), "step_time"),
        Row(_("Efficiency the run implies (E)"), format_percent(e.efficiency, lang), "efficiency", main=True),
        Row(_("Step alone on one device (compute + other)"), alone_text(e, lang), "single_device_step"),
        Row(_("Communication in flight, slowest rank"), format_milliseconds(c.communication_time, lang)),
        Row(_("Wait for the slowest rank, mean over ranks"), format_milliseconds(c.straggler_wait, lang)),
        Row(_("Step-time variation (CV)"), format_percent(c.step_time_cv, lang)),
    ]
    if c.bandwidth is not None:
        bandwidth = f"{format_gigabytes_per_second(c.bandwidth, lang, decimals=3)} GB/s"
        rows.append(Row(_("Achieved bandwidth (algbw)"), bandwidth))
    return tuple(rows)


def levers_grid(e: Explanation, lang: Lang) -> Grid:
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
    header = (_("Lever"), _("Saves per step"), _("Speed-up"))
    return Grid(header, rows, _("Levers, from the measured terms"), align=("left", "right"), key="levers")
