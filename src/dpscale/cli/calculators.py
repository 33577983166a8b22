"""The sibling calculators: ``dpscale batch``, ``bubble`` and ``plan``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dpscale.batch import BatchResult
from dpscale.calculators import bubble, effective_batch, plan
from dpscale.calculators.bubble import PIPELINE
from dpscale.calculators.effective_batch import BATCH
from dpscale.calculators.plan import PLAN
from dpscale.cli.definitions import OUTPUT, build, command, own
from dpscale.cli.options import lang_of, respond
from dpscale.pipeline import Bubble
from dpscale.plan import PlanResult

__all__ = ["register"]


def _batch(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    language = lang_of(lang)
    result: BatchResult = build(BATCH, given, language)
    respond(result, language, as_json=as_json, payload=BatchResult.to_dict, present=effective_batch.present)


def _bubble(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.charts import schedule_chart

    language = lang_of(lang)
    result: Bubble = build(PIPELINE, given, language)
    shown = bubble.present
    respond(result, language, as_json=as_json, payload=Bubble.to_dict, present=shown, plot=plot, chart=schedule_chart)


def _plan(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    language = lang_of(lang)
    result: PlanResult = build(PLAN, given, language)
    respond(result, language, as_json=as_json, payload=PlanResult.to_dict, present=plan.present)


def register(app: typer.Typer) -> None:
    """Add ``dpscale batch``, ``bubble`` and ``plan`` to ``app``."""
    batch = """Effective (global) batch B = b·k·d of data parallelism with gradient accumulation.

    dpscale batch 32 4 64

    dpscale batch 32 1 64 --target 8192
    """
    app.command("batch")(command(BATCH, _batch, OUTPUT, batch))

    plot = Annotated[str | None, typer.Option("--plot", help="Save a picture of the schedule: .svg, .png, .json.")]
    bubble = """Pipeline bubble (p−1)/(v·m + p − 1) for p stages and m micro-batches.

    dpscale bubble 4 8

    dpscale bubble 8 --max-bubble 5% --schedule interleaved --chunks 2
    """
    app.command("bubble")(command(PIPELINE, _bubble, [own("plot", plot, None), *OUTPUT], bubble))

    plan = """Time, device-hours, cost and energy of a run; or the fewest devices for a deadline.

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --devices 64 --price 2.5

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --deadline 36h --price 2.5
    """
    app.command("plan")(command(PLAN, _plan, OUTPUT, plan))
