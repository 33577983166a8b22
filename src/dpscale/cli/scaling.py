"""``dpscale scale``: the seed's calculator, made from its definition (loaded alone, so that it starts in a blink)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from dpscale import scaling
from dpscale.cli.app import app
from dpscale.cli.definitions import OUTPUT, build, command, own
from dpscale.cli.options import emit_json, lang_of, save_plot

__all__: list[str] = []


def _scale(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    language = lang_of(lang)
    solution: scaling.Solution = build(scaling.SCALING, given, language)
    if solution.scaling.superlinear:
        from dpscale.format import format_percent
        from dpscale.i18n import translation

        _ = translation(language).gettext
        warning = _(
            "warning: efficiency %(e)s is above 100%% (superlinear scaling); check the single-device throughput"
        )
        print(warning % {"e": format_percent(solution.scaling.efficiency, language)}, file=sys.stderr)
    if plot is not None:
        from dpscale.charts import save_chart, scaling_chart

        save_plot(plot, lambda: save_chart(scaling_chart(solution.scaling, language), plot, lang=language), language)
    if as_json:
        payload = solution.scaling.to_dict() if solution.unknown == "actual_throughput" else solution.to_dict()
        emit_json(payload)
        return
    from dpscale.cli.render import print_scaling

    print_scaling(solution, language)


def _register() -> None:
    plot = Annotated[
        str | None, typer.Option("--plot", help="Also save the chart: out.svg, out.png or out.json (Vega-Lite).")
    ]
    doc = """Ideal and actual throughput and speedup of d devices at v each, with efficiency E.

    Give any three of d, v, E and A (--actual) to find the fourth:

        dpscale scale 64 2000 90%

        dpscale scale --devices 64 --per-device 2000 --actual 115200
    """
    options = [own("plot", plot, None), *OUTPUT]
    app.command("scale")(command(scaling.SCALING, _scale, options, doc))


_register()
