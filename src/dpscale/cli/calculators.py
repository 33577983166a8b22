"""The sibling calculators: ``dpscale batch``, ``bubble`` and ``plan``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from dpscale.cli.app import app
from dpscale.cli.definitions import command, named_as_options, read_values
from dpscale.cli.options import (
    JsonOption,
    LangOption,
    emit_json,
    lang_of,
    optional_number,
    save_plot,
)
from dpscale.errors import InvalidInput, MissingInput
from dpscale.parse import number_reader, parse_count, parse_efficiency, parse_number

__all__ = ["OUTPUT", "own", "plan"]


def _batch(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    from dpscale.batch import BATCH
    from dpscale.cli.render import print_batch

    language = lang_of(lang)
    with named_as_options(BATCH):
        result = BATCH.build(read_values(BATCH, given, language))
    if as_json:
        emit_json(result.to_dict())
        return
    print_batch(result.solution, result.batch, language, result.learning_rate)


def own(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    """A command's own option, after those its definition makes."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


OUTPUT = [own("as_json", JsonOption, False), own("lang", LangOption, None)]


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
    with named_as_options(PIPELINE):
        result = PIPELINE.build(read_values(PIPELINE, given, language))
    if plot is not None:
        from dpscale.charts import save_chart, schedule_chart

        save_plot(plot, lambda: save_chart(schedule_chart(result, language), plot, lang=language))
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


@app.command()
def plan(
    work: Annotated[
        str,
        typer.Option("--work", "-w", help="Samples (or tokens) to process: dataset size × epochs.", show_default=False),
    ],
    per_device: Annotated[
        str | None, typer.Option("--per-device", "-v", help="v, one device's throughput alone [default: from --fit].")
    ] = None,
    efficiency: Annotated[str | None, typer.Option("--efficiency", "-e", help="E: 90% or 0.9; or give --fit.")] = None,
    fitted: Annotated[
        str | None,
        typer.Option("--fit", help="Measurements (as for dpscale fit): E(d) from the best fitted model."),
    ] = None,
    devices: Annotated[str | None, typer.Option("--devices", "-d", help="d; or give --deadline to find it.")] = None,
    epochs: Annotated[str, typer.Option("--epochs", help="Passes over --work.")] = "1",
    deadline: Annotated[
        str | None, typer.Option("--deadline", help="Finish within this (14 d, 36 h): find the fewest devices.")
    ] = None,
    price: Annotated[str | None, typer.Option("--price", help="Price of one device-hour.")] = None,
    currency: Annotated[str, typer.Option("--currency", help="ISO 4217 code of --price.")] = "USD",
    watts: Annotated[str | None, typer.Option("--watts", help="Power of one device, for the energy.")] = None,
    unit: Annotated[str, typer.Option("--unit", "-u", help="Throughput unit, for display.")] = "samples/s",
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Time, device-hours, cost and energy of a run; or the fewest devices for a deadline.

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --devices 64 --price 2.5

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --deadline 36h --price 2.5
    """
    from dpscale import plan as core
    from dpscale.cli.render import print_deadline, print_plan
    from dpscale.parse import parse_duration

    language = lang_of(lang)
    w = core.total_work(parse_number(work, language, field="work"), parse_number(epochs, language, field="epochs"))
    if (efficiency is None) == (fitted is None):
        given = "neither" if efficiency is None else f"--efficiency {efficiency} and --fit {fitted}"
        raise InvalidInput("efficiency", given, "either --efficiency or --fit, not both")
    e: float | Callable[[int], float]
    if fitted is not None:
        from dpscale import fit as fitting

        best = fitting.fit(fitting.read_points(fitted, read_number=number_reader(language))).best
        e = best.efficiency
        v = parse_number(per_device, language, field="per_device_throughput") if per_device else best.throughput(1)
    else:
        if per_device is None:
            raise MissingInput("per_device_throughput", "--per-device, or --fit to read it from runs")
        e = parse_efficiency(efficiency or "", language)
        v = parse_number(per_device, language, field="per_device_throughput")
    money = {
        "price_per_device_hour": optional_number(price, language, "price"),
        "watts_per_device": optional_number(watts, language, "watts"),
        "currency": currency,
        "unit": unit,
    }
    if (devices is None) == (deadline is None):
        given = "neither" if devices is None else f"--devices {devices} and --deadline {deadline}"
        raise InvalidInput("devices", given, "either --devices or --deadline, not both")
    if deadline is not None:
        found = core.devices_for_deadline(w, parse_duration(deadline, language), v, e, **money)  # type: ignore[arg-type]
        if as_json:
            emit_json(found.to_dict())
            return
        print_deadline(found, language)
        return
    result = core.plan(w, parse_count(devices or "", language, field="devices"), v, e, **money)  # type: ignore[arg-type]
    if as_json:
        emit_json(result.to_dict())
        return
    print_plan(result, language)
