"""The models: ``dpscale predict`` (E(n) from the hardware, made from predict's definition) and ``fit``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dpscale.cli.app import app
from dpscale.cli.definitions import OUTPUT, own
from dpscale.cli.options import emit_json, lang_of, save_plot

__all__: list[str] = []


def _predict(given: dict[str, Any], *, show_levers: bool, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.cli.definitions import named_as_options, read_values
    from dpscale.cli.render import print_prediction
    from dpscale.predict.inputs import PREDICT

    language = lang_of(lang)
    with named_as_options(PREDICT, given):
        request = PREDICT.build(read_values(PREDICT, given, language))
        prediction = request.predict()
        found = request.levers() if show_levers else []
    if plot is not None:
        from dpscale.charts import prediction_chart, save_chart

        save_plot(plot, lambda: save_chart(prediction_chart(prediction, language), plot, lang=language), language)
    if as_json:
        emit_json({**prediction.to_dict(), "levers": [lever.to_dict() for lever in found]})
        return
    print_prediction(prediction, found, language)


def _register_predict() -> None:
    from dpscale.cli.definitions import command
    from dpscale.predict.inputs import PREDICT

    levers = Annotated[bool, typer.Option("--levers/--no-levers", help="Rank the what-ifs at the largest count.")]
    plot = Annotated[
        str | None, typer.Option("--plot", help="Save the charts (E(n), the step's terms, memory): .svg, .png, .json.")
    ]
    doc = """Predict the scaling efficiency E(n) from the interconnect, the gradient size and the batch.

    dpscale predict --devices 8,16,64 --per-device 938 --batch 256 --params 25.6M --intra nvlink3 --inter ib-hdr
    """
    options = [own("show_levers", levers, True), own("plot", plot, None), *OUTPUT]
    app.command("predict")(command(PREDICT, _predict, options, doc))


_register_predict()


def _fit(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.cli.definitions import build
    from dpscale.cli.render import print_fit
    from dpscale.fit.inputs import FIT

    language = lang_of(lang)
    result = build(FIT, given, language)
    if plot is not None:
        from dpscale.charts import fit_chart, save_chart

        save_plot(plot, lambda: save_chart(fit_chart(result, language), plot, lang=language), language)
    if as_json:
        emit_json(result.to_dict())
        return
    print_fit(result, language)


def _register_fit() -> None:
    from dpscale.cli.definitions import command
    from dpscale.fit.inputs import FIT

    plot = Annotated[str | None, typer.Option("--plot", help="Save the fitted curves: .svg, .png or .json.")]
    doc = """Fit how throughput grows with devices (Amdahl, Gustafson, USL, ...) and predict larger sizes.

    dpscale fit runs.csv --at 128,256,512
    """
    app.command("fit")(command(FIT, _fit, [own("plot", plot, None), *OUTPUT], doc))


_register_fit()
