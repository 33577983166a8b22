"""The pipeline bubble: (p − 1)/(v·m + p − 1) of a step idle for p stages, m micro-batches and v chunks, or
the fewest micro-batches that keep it under a bound.

What it takes (:data:`PIPELINE`), computes (:mod:`dpscale.pipeline`) and shows (:func:`present`).
"""

from __future__ import annotations

from dpscale import _validate
from dpscale.calculators.shown import Row, Rows, Shown
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.format import format_duration, format_number, format_percent
from dpscale.i18n import Lang, translation
from dpscale.inputs import Api, Cli, Definition, Input, Page, Values
from dpscale.pipeline import SCHEDULES, Bubble, bubble, micro_batches_for

__all__ = ["PIPELINE", "present"]


def _build(values: Values) -> Bubble:
    v = PIPELINE.complete(values)
    if v["micro_batches"] is None and v["max_bubble"] is None:
        raise MissingInput("micro_batches", N_("a number of micro-batches, or the largest bubble to allow"))
    if v["micro_batches"] is not None and v["max_bubble"] is not None:
        given = f"{v['micro_batches']} and {v['max_bubble']:g}"
        raise InvalidInput("micro_batches", given, N_("either micro-batches or the largest bubble, not both"))
    kind, p, chunks = v["schedule"], v["stages"], v["chunks"]
    m = v["micro_batches"]
    if m is None:
        m = micro_batches_for(p, v["max_bubble"], schedule=kind, chunks=chunks).micro_batches
    return bubble(p, m, schedule=kind, chunks=chunks, micro_batch_time=v["micro_batch_time"])


_SCHEDULE_NAMES = ("1F1B", "GPipe", N_("Interleaved 1F1B"))  # each of SCHEDULES, as a reader calls it

PIPELINE = Definition(
    "pipeline",
    (
        Input(
            "stages",
            "count",
            "p, pipeline stages (4).",
            required=True,
            low=1,
            high=_validate.MAX_DEVICES,
            cli=Cli(positional=True),
            page=Page(label=N_("Pipeline stages (p)"), example=("4", "4"), group="pipeline"),
        ),
        Input(
            "micro_batches",
            "count",
            "m, micro-batches per step (or give --max-bubble).",
            api=Api(described="m, micro-batches per step."),
            low=1,
            high=_validate.MAX_DEVICES,
            cli=Cli(positional=True),
            page=Page(label=N_("Micro-batches per step (m)"), example=("8", "8"), group="pipeline"),
        ),
        Input(
            "schedule",
            "choice",
            "1f1b, gpipe or interleaved.",
            default="1f1b",
            choices=SCHEDULES,
            cli=Cli(short="-s"),
            page=Page(
                label=N_("Schedule"),
                choice_labels=_SCHEDULE_NAMES,
                example=("1f1b", "1f1b"),
                group="pipeline",
            ),
        ),
        Input(
            "chunks",
            "count",
            "v, model chunks per device (interleaved).",
            default=1,
            low=1,
            high=_validate.MAX_DEVICES,
            page=Page(label=N_("Model chunks per device (v, interleaved only)"), example=("1", "1"), group="pipeline"),
        ),
        Input(
            "micro_batch_time",
            "duration",
            "Forward + backward time of one micro-batch on one stage (e.g. 120 ms).",
            api=Api(described="Forward + backward time of one micro-batch on one stage (0.12)."),
            low=1e-12,
            high=1e10,
            unit="s",
            cli=Cli(option="--time"),
            page=Page(
                label=N_("Forward and backward time of one micro-batch on one stage (optional)"),
                hint=N_("For example 120 ms or 0.5 s."),
                example=("120 ms", "120 ms"),
                group="pipeline",
            ),
        ),
        Input(
            "max_bubble",
            "fraction",
            "Find the fewest micro-batches with a bubble at most this (5%).",
            low=1e-9,
            high=1,
            edges=("cli",),
            cli=Cli(option="--max-bubble"),
        ),
    ),
    _build,
    groups=(("pipeline", N_("Pipeline")),),
)


def present(b: Bubble, lang: Lang) -> Shown:
    """The schedule as given, the bubble as a share of the step and of useful time, the step's times when one
    micro-batch's is known, and the activations the first stage holds."""
    _ = translation(lang).gettext
    named = dict(zip(SCHEDULES, _SCHEDULE_NAMES, strict=True))[b.schedule]  # as the page's menu names it
    schedule = _(named) + (f" (v = {b.chunks})" if b.schedule == "interleaved" else "")
    rows = [
        Row(_("Pipeline stages (p)"), format_number(b.stages, lang), "stages", given=True),
        Row(_("Micro-batches per step (m)"), format_number(b.micro_batches, lang), "micro_batches", given=True),
        Row(_("Schedule"), schedule, "schedule", given=True),
        Row(_("Bubble, share of the step"), format_percent(b.fraction, lang, decimals=2), "bubble_fraction", main=True),
        Row(_("Bubble, relative to useful time"), format_percent(b.overhead, lang, decimals=2), "bubble_overhead"),
        Row(
            _("Pipeline efficiency (1 − bubble)"),
            format_percent(b.efficiency, lang, decimals=2),
            "pipeline_efficiency",
        ),
    ]
    if b.step_time is not None and b.idle_time is not None:
        rows.append(Row(_("Step time"), format_duration(b.step_time, lang), "step_time"))
        rows.append(Row(_("Idle time per step"), format_duration(b.idle_time, lang), "idle_time"))
    if b.activations_in_flight is not None:
        rows.append(
            Row(
                _("Micro-batches of activations held (stage 1)"),
                format_number(b.activations_in_flight, lang),
                "activations_in_flight",
            )
        )
    return Shown((Rows(tuple(rows)),))
