"""The models: ``dpscale predict`` (E(n) from the hardware, made from predict's definition) and ``fit``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dpscale.cli.definitions import OUTPUT, build, command, named_as_options, own, read_values
from dpscale.cli.options import lang_of, respond
from dpscale.i18n import Lang

__all__ = ["register"]


def _predict(given: dict[str, Any], *, show_levers: bool, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.charts import prediction_chart
    from dpscale.cli.render import print_prediction
    from dpscale.predict.definition import PREDICT
    from dpscale.predict.prediction import Prediction

    language = lang_of(lang)
    with named_as_options(PREDICT, given):
        request = PREDICT.build(read_values(PREDICT, given, language))
        prediction = request.predict()
        found = request.levers() if show_levers else []

    def payload(p: Prediction) -> dict[str, Any]:
        return {**p.to_dict(), "levers": [lever.to_dict() for lever in found]}

    def table(p: Prediction, shown_in: Lang) -> None:
        print_prediction(p, found, shown_in)

    respond(prediction, language, as_json=as_json, payload=payload, table=table, plot=plot, chart=prediction_chart)


def _fit(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.charts import fit_chart
    from dpscale.cli.render import print_fit
    from dpscale.fit import Fit
    from dpscale.fit.fitfields import FIT

    language = lang_of(lang)
    result: Fit = build(FIT, given, language)
    respond(result, language, as_json=as_json, payload=Fit.to_dict, table=print_fit, plot=plot, chart=fit_chart)


def register(app: typer.Typer) -> None:
    """Add ``dpscale predict`` and ``fit`` to ``app``."""
    from dpscale.fit.fitfields import FIT
    from dpscale.predict.definition import PREDICT

    levers = Annotated[bool, typer.Option("--levers/--no-levers", help="Rank the what-ifs at the largest count.")]
    plot = Annotated[
        str | None, typer.Option("--plot", help="Save the charts (E(n), the step's terms, memory): .svg, .png, .json.")
    ]
    predict = """Predict the scaling efficiency E(n) from the interconnect, the gradient size and the batch.

    dpscale predict --devices 8,16,64 --per-device 938 --batch 256 --params 25.6M --intra nvlink3 --inter ib-hdr
    """
    options = [own("show_levers", levers, True), own("plot", plot, None), *OUTPUT]
    app.command("predict")(command(PREDICT, _predict, options, predict))

    curves = Annotated[str | None, typer.Option("--plot", help="Save the fitted curves: .svg, .png or .json.")]
    fit = """Fit how throughput grows with devices (Amdahl, Gustafson, USL, ...) and predict larger sizes.

    dpscale fit runs.csv --at 128,256,512
    """
    app.command("fit")(command(FIT, _fit, [own("plot", curves, None), *OUTPUT], fit))
