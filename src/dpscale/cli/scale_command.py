"""``dpscale scale``: the seed's calculator, made from its definition (loaded alone, so that it starts in a blink)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from dpscale.calculators.scale import SCALING, present, warnings
from dpscale.cli.definitions import OUTPUT, build, command, own
from dpscale.cli.options import lang_of, respond
from dpscale.i18n import Lang
from dpscale.scaling import Solution

__all__ = ["register"]


def _scale(given: dict[str, Any], *, plot: str | None, as_json: bool, lang: str | None) -> None:
    language = lang_of(lang)
    solution: Solution = build(SCALING, given, language)
    said = warnings(solution, language)
    if said:  # --json too: its object has no room for them (Rich is loaded only then)
        from dpscale.cli.render import print_warning

        for warning in said:
            print_warning(warning, language)
    respond(solution, language, as_json=as_json, payload=_payload, present=present, plot=plot, chart=_chart)


def _payload(solution: Solution) -> Mapping[str, Any]:
    return solution.scaling.to_dict() if solution.unknown == "actual_throughput" else solution.to_dict()


# The chart loads Altair when it is wanted: `--json` and the table need none.
def _chart(solution: Solution, lang: Lang) -> Any:
    from dpscale.charts import scaling_chart

    return scaling_chart(solution.scaling, lang)


def register(app: typer.Typer) -> None:
    """Add ``dpscale scale`` to ``app``."""
    plot = Annotated[
        str | None, typer.Option("--plot", help="Also save the chart: out.svg, out.png or out.json (Vega-Lite).")
    ]
    doc = """Ideal and actual throughput and speedup of d devices at v each, with efficiency E.

    Give any three of d, v, E and A (--actual) to find the fourth:

        dpscale scale 64 2000 90%

        dpscale scale --devices 64 --per-device 2000 --actual 115200
    """
    options = [own("plot", plot, None), *OUTPUT]
    app.command("scale")(command(SCALING, _scale, options, doc))
