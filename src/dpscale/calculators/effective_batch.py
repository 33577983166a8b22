"""The effective batch: B = b·k·d samples per optimizer step, solved for k or d against a target, and the
learning rate scaled linearly with it.

What it takes (:data:`BATCH`), computes (:mod:`dpscale.batch`) and shows (:func:`present`).
"""

from __future__ import annotations

from dpscale import _validate
from dpscale.batch import (
    BatchResult,
    accumulation_for,
    devices_for_batch,
    effective_batch,
    growth,
    scaled_learning_rate,
)
from dpscale.calculators.shown import Grid, Note, Row, Rows, Shown
from dpscale.errors import N_, MissingInput
from dpscale.format import format_number
from dpscale.i18n import Lang, translation
from dpscale.inputs import Api, Cli, Definition, Input, Page, Values

__all__ = ["BATCH", "present"]


def _build(values: Values) -> BatchResult:
    v = BATCH.complete(values)
    b, k, d, seq = v["micro_batch"], v["accumulation"], v["devices"], v["sequence_length"]
    solution = None
    if v["target_global_batch"] is not None:
        solve = accumulation_for if v["solve"] == "accumulation" else devices_for_batch
        solution = solve(v["target_global_batch"], b, d if solve is accumulation_for else k, sequence_length=seq)
        result = solution.batch
    else:
        result = effective_batch(b, k, d, sequence_length=seq)
    lr0, b0 = v["base_learning_rate"], v["base_batch"]
    if (lr0 is None) != (b0 is None):  # the linear scaling rule needs both
        raise MissingInput("base_batch" if b0 is None else "base_learning_rate", LR_PAIR)
    lr = None if lr0 is None else scaled_learning_rate(lr0, b0, result.global_batch)
    return BatchResult(result, solution, lr, lr0, b0, growth(result))


LR_PAIR = N_("a value, since the other learning-rate field is filled")
BATCH = Definition(
    "batch",
    (
        Input(
            "micro_batch",
            "count",
            "b, samples per device per micro-step (32).",
            required=True,
            low=1,
            high=_validate.MAX_DEVICES,  # the core's bound on any count: a billion
            cli=Cli(positional=True),
            page=Page(label=N_("Micro-batch per device (samples)"), example=("32", "32"), group="batch"),
        ),
        Input(
            "accumulation",
            "count",
            "k, gradient-accumulation steps [default: 1, or solved].",
            default=1,
            low=1,
            high=_validate.MAX_DEVICES,  # the core's bound on any count: a billion
            cli=Cli(positional=True),
            page=Page(label=N_("Gradient-accumulation steps"), example=("4", "4"), group="batch"),
        ),
        Input(
            "devices",
            "count",
            "d, data-parallel devices [default: 1, or solved].",
            default=1,
            low=1,
            high=_validate.MAX_DEVICES,
            cli=Cli(positional=True),
            page=Page(label=N_("Data-parallel devices"), example=("64", "64"), group="batch"),
        ),
        Input(
            "sequence_length",
            "count",
            "L, tokens per sample: also give B in tokens.",
            low=1,
            high=_validate.MAX_DEVICES,  # the core's bound on any count: a billion
            cli=Cli(short="-L"),
            page=Page(
                label=N_("Sequence length (tokens per sample, optional)"), example=("2 048", "2,048"), group="batch"
            ),
        ),
        Input(
            "target_global_batch",
            "count",
            "A global batch to reach: solves k (or d, with --solve devices).",
            low=1,
            high=10**15,
            edges=("cli",),
            cli=Cli(option="--target", short="-t"),
        ),
        Input(
            "solve",
            "choice",
            "With --target: accumulation or devices.",
            default="accumulation",
            choices=("accumulation", "devices"),
            edges=("cli",),
        ),
        Input(
            "base_learning_rate",
            "number",
            "A learning rate tuned at --base-batch: scale it linearly (η₀).",
            api=Api(described="A learning rate tuned at base_batch: scaled linearly to the effective batch (η₀)."),
            low=1e-12,
            high=1e6,
            cli=Cli(option="--base-lr"),
            page=Page(label=N_("Learning rate tuned at the reference batch"), example=("0,1", "0.1"), group="lr"),
        ),
        Input(
            "base_batch",
            "count",
            "The global batch the learning rate was tuned at (B₀).",
            low=1,
            high=10**15,
            page=Page(label=N_("Reference global batch"), example=("256", "256"), group="lr"),
        ),
    ),
    _build,
    groups=(("batch", N_("Batch")), ("lr", N_("Learning rate (optional)"))),
)


def present(result: BatchResult, lang: Lang) -> Shown:
    """The batch's terms and B, its size in tokens and the scaled learning rate when asked; how far a target
    is missed; and the same micro-batch and accumulation on more devices."""
    _ = translation(lang).gettext
    batch, solution = result.batch, result.solution
    solved = None if solution is None else solution.solved_for

    def given(label: str, value: int, key: str) -> Row:
        return Row(
            label, format_number(value, lang), key, given=key != solved, mark=_("solved") if key == solved else None
        )

    rows = [
        given(_("Micro-batch per device (b)"), batch.micro_batch, "micro_batch"),
        given(_("Accumulation steps (k)"), batch.accumulation, "accumulation"),
        given(_("Data-parallel devices (d)"), batch.devices, "devices"),
        Row(_("Per-device batch (b·k)"), format_number(batch.per_device_batch, lang), "per_device_batch"),
        Row(_("Global batch (B = b·k·d)"), format_number(batch.global_batch, lang), "global_batch", main=True),
    ]
    if batch.global_batch_tokens is not None:
        rows.append(
            Row(
                _("Global batch in tokens (B·L)"), format_number(batch.global_batch_tokens, lang), "global_batch_tokens"
            )
        )
    if result.learning_rate is not None:
        rows.append(
            Row(
                _("Learning rate, linear scaling rule"),
                format_number(result.learning_rate, lang, decimals=6),
                "learning_rate",
            )
        )
    parts: list[Rows | Note | Grid] = [Rows(tuple(rows))]
    if solution is not None and not solution.exact:
        said = _("Target {target}: the nearest whole number gives {batch}, {diff} above it.").format(
            target=format_number(solution.target_global_batch, lang),
            batch=format_number(batch.global_batch, lang),
            diff=format_number(solution.difference, lang),
        )
        parts.append(Note(said, key="target"))
    current = next((i for i, g in enumerate(result.growth) if g.devices == batch.devices), None)
    grown = tuple((format_number(g.devices, lang), format_number(g.global_batch, lang)) for g in result.growth)
    title = _("The same micro-batch and accumulation on more devices")
    parts.append(Grid((_("Devices"), _("Global batch")), grown, title, current, key="growth"))
    return Shown(tuple(parts))
