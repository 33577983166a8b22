"""The models: ``dpscale predict`` (E(n) from the hardware), ``fit`` (E(n) from measurements) and ``explain``
(where a run's step time goes, from its traces): each made from its calculator's definition."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from dpscale.cli.definitions import OUTPUT, build, command, named_as_options, own, read_values
from dpscale.cli.options import lang_of, respond
from dpscale.i18n import Lang

if TYPE_CHECKING:
    from dpscale.calculators.shown import Shown

__all__ = ["register"]


def _predict(given: dict[str, Any], *, show_levers: bool, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.calculators.predict import PREDICT, present
    from dpscale.charts import prediction_chart
    from dpscale.predict.prediction import Prediction

    language = lang_of(lang)
    with named_as_options(PREDICT, given):
        request = PREDICT.build(read_values(PREDICT, given, language))
        prediction = request.predict()
        found = request.levers() if show_levers else []

    def payload(p: Prediction) -> dict[str, Any]:
        return {**p.to_dict(), "levers": [lever.to_dict() for lever in found]}

    def shown(p: Prediction, shown_in: Lang) -> Shown:
        return present(p, shown_in, found)

    respond(prediction, language, as_json=as_json, payload=payload, present=shown, plot=plot, chart=prediction_chart)


def _fit(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    from dpscale.calculators.fit import FIT, present
    from dpscale.charts import fit_chart
    from dpscale.fit import Fit

    language = lang_of(lang)
    result: Fit = build(FIT, given, language)
    respond(result, language, as_json=as_json, payload=Fit.to_dict, present=present, plot=plot, chart=fit_chart)


def _explain(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    from dpscale.calculators.explain import EXPLAIN, present
    from dpscale.explain import Explanation

    language = lang_of(lang)
    found: Explanation = build(EXPLAIN, given, language)
    respond(found, language, as_json=as_json, payload=Explanation.to_dict, present=present)


def register(app: typer.Typer) -> None:
    """Add ``dpscale explain``, ``predict`` and ``fit`` to ``app``."""
    from dpscale.calculators.explain import EXPLAIN
    from dpscale.calculators.fit import FIT
    from dpscale.calculators.predict import PREDICT

    explain = """Split each rank's step time into compute, exposed communication and other, from torch.profiler traces.

    dpscale explain traces/
    """
    app.command("explain")(command(EXPLAIN, _explain, OUTPUT, explain))

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
