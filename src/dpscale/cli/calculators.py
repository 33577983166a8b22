"""The sibling calculators: ``dpscale batch``, ``bubble`` and ``plan``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dpscale.cli.app import app
from dpscale.cli.definitions import OUTPUT, build, command, own
from dpscale.cli.options import (
    emit_json,
    lang_of,
    save_plot,
)

__all__: list[str] = []


def _batch(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    from dpscale.batch import BATCH
    from dpscale.cli.render import print_batch

    language = lang_of(lang)
    result = build(BATCH, given, language)
    if as_json:
        emit_json(result.to_dict())
        return
    print_batch(result.solution, result.batch, language, result.learning_rate)


def _register_batch() -> None:
    from dpscale.batch import BATCH

    doc = """Effective (global) batch B = b·k·d of data parallelism with gradient accumulation.

    dpscale batch 32 4 64

    dpscale batch 32 1 64 --target 8192
    """
    app.command("batch")(command(BATCH, _batch, OUTPUT, doc))


_register_batch()


def _bubble(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.cli.render import print_bubble
    from dpscale.pipeline import PIPELINE

    language = lang_of(lang)
    result = build(PIPELINE, given, language)
    if plot is not None:
        from dpscale.charts import save_chart, schedule_chart

        save_plot(plot, lambda: save_chart(schedule_chart(result, language), plot, lang=language), language)
    if as_json:
        emit_json(result.to_dict())
        return
    print_bubble(result, language)


def _register_bubble() -> None:
    from dpscale.pipeline import PIPELINE

    plot = Annotated[str | None, typer.Option("--plot", help="Save a picture of the schedule: .svg, .png, .json.")]
    doc = """Pipeline bubble (p−1)/(v·m + p − 1) for p stages and m micro-batches.

    dpscale bubble 4 8

    dpscale bubble 8 --max-bubble 5% --schedule interleaved --chunks 2
    """
    app.command("bubble")(command(PIPELINE, _bubble, [own("plot", plot, None), *OUTPUT], doc))


_register_bubble()


def _plan(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    from dpscale.cli.render import print_deadline, print_plan
    from dpscale.plan import PLAN

    language = lang_of(lang)
    result = build(PLAN, given, language)
    if as_json:
        emit_json(result.to_dict())
        return
    if result.devices_given:
        print_plan(result.plan, language)
    if result.deadline is not None:
        print_deadline(result.deadline, language)
    if result.memory is not None:
        from dpscale.report import memory_sentence

        print(memory_sentence(result.memory, result.plan.scaling.devices, language))


def _register_plan() -> None:
    from dpscale.plan import PLAN

    doc = """Time, device-hours, cost and energy of a run; or the fewest devices for a deadline.

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --devices 64 --price 2.5

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --deadline 36h --price 2.5
    """
    app.command("plan")(command(PLAN, _plan, OUTPUT, doc))


_register_plan()
