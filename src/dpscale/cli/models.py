"""The models: ``dpscale predict`` (E(n) from the hardware, made from predict's definition) and ``fit``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dpscale.cli.app import app
from dpscale.cli.calculators import OUTPUT, own
from dpscale.cli.options import JsonOption, LangOption, emit_json, lang_of, save_plot
from dpscale.parse import number_reader

__all__ = ["fit"]


def _predict(given: dict[str, Any], *, show_levers: bool, as_json: bool, lang: str | None) -> None:
    from dpscale.cli.definitions import named_as_options, read_values
    from dpscale.cli.render import print_prediction
    from dpscale.predict.inputs import PREDICT

    language = lang_of(lang)
    with named_as_options(PREDICT):
        request = PREDICT.build(read_values(PREDICT, given, language))
        prediction = request.predict()
        found = request.levers() if show_levers else []
    if as_json:
        emit_json({**prediction.to_dict(), "levers": [lever.to_dict() for lever in found]})
        return
    print_prediction(prediction, found, language)


def _register_predict() -> None:
    from dpscale.cli.definitions import command
    from dpscale.predict.inputs import PREDICT

    levers = Annotated[bool, typer.Option("--levers/--no-levers", help="Rank the what-ifs at the largest count.")]
    doc = """Predict the scaling efficiency E(n) from the interconnect, the gradient size and the batch.

    dpscale predict --devices 8,16,64 --per-device 938 --batch 256 --params 25.6M --intra nvlink3 --inter ib-hdr
    """
    options = [own("show_levers", levers, True), *OUTPUT]
    app.command("predict")(command(PREDICT, _predict, options, doc))


_register_predict()


@app.command()
def fit(
    measurements: Annotated[
        str, typer.Argument(help="CSV (devices,throughput columns) or JSON lines from dpscale measure.")
    ],
    at: Annotated[str | None, typer.Option("--at", help="Sizes to predict: 128,256,512 or 64..1024.")] = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help="auto (all, ranked by AICc) or constant, amdahl, gustafson, usl, comm.")
    ] = "auto",
    plot: Annotated[str | None, typer.Option("--plot", help="Save the fitted curves: .svg, .png or .json.")] = None,
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Fit how throughput grows with devices (Amdahl, Gustafson, USL, ...) and predict larger sizes.

    dpscale fit runs.csv --at 128,256,512
    """
    from dpscale import fit as core
    from dpscale.cli.render import print_fit
    from dpscale.parse import parse_device_list

    language = lang_of(lang)
    points = core.read_points(measurements, read_number=number_reader(language))
    sizes = parse_device_list(at, language, field="at") if at is not None else []
    wanted = None if model.strip().lower() == "auto" else [m.strip().lower() for m in model.split(",")]
    result = core.fit(points, models=wanted, at=sizes)
    if plot is not None:
        from dpscale.charts import fit_chart, save_chart

        save_plot(plot, lambda: save_chart(fit_chart(result, language), plot, lang=language))
    if as_json:
        emit_json(result.to_dict())
        return
    print_fit(result, language)
