"""``dpscale scale``: the seed's calculator (loaded alone, so that it starts in a blink)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from dpscale import scaling
from dpscale.cli.app import app
from dpscale.cli.options import JsonOption, LangOption, emit_json, lang_of, one_of, save_plot
from dpscale.errors import N_, InvalidInput
from dpscale.parse import parse_count, parse_efficiency, parse_number

__all__ = ["scale"]


@app.command()
def scale(
    devices: Annotated[str | None, typer.Argument(help="d, the number of devices (64).", show_default=False)] = None,
    per_device: Annotated[
        str | None, typer.Argument(help="v, one device's throughput alone (2000, '2 000').", show_default=False)
    ] = None,
    efficiency: Annotated[
        str | None, typer.Argument(help="E, the scaling efficiency: 90% or 0.9.", show_default=False)
    ] = None,
    devices_opt: Annotated[str | None, typer.Option("--devices", "-d", help="d, as an option.")] = None,
    per_device_opt: Annotated[str | None, typer.Option("--per-device", "-v", help="v, as an option.")] = None,
    efficiency_opt: Annotated[str | None, typer.Option("--efficiency", "-e", help="E, as an option.")] = None,
    actual: Annotated[
        str | None, typer.Option("--actual", "-a", help="A, the cluster's actual (or target) throughput.")
    ] = None,
    solve: Annotated[
        str | None,
        typer.Option(
            "--solve",
            help="Which one to find: devices, per-device, efficiency or actual [default: the one not given].",
        ),
    ] = None,
    unit: Annotated[str, typer.Option("--unit", "-u", help="Throughput unit, for display.")] = "samples/s",
    plot: Annotated[
        str | None, typer.Option("--plot", help="Also save the chart: out.svg, out.png or out.json (Vega-Lite).")
    ] = None,
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Ideal and actual throughput and speedup of d devices at v each, with efficiency E.

    Give any three of d, v, E and A (--actual) to find the fourth:

        dpscale scale 64 2000 90%

        dpscale scale --devices 64 --per-device 2000 --actual 115200
    """
    language = lang_of(lang)
    d_text = one_of("devices", devices, devices_opt)
    v_text = one_of("per_device_throughput", per_device, per_device_opt)
    e_text = one_of("efficiency", efficiency, efficiency_opt)
    solution = scaling.solve(
        devices=parse_count(d_text, language, field="devices") if d_text is not None else None,
        per_device_throughput=(
            parse_number(v_text, language, field="per_device_throughput") if v_text is not None else None
        ),
        efficiency=parse_efficiency(e_text, language) if e_text is not None else None,
        actual_throughput=parse_number(actual, language, field="actual_throughput") if actual is not None else None,
        unit=unit,
    )
    if solve is not None:
        wanted = solve.strip().lower().replace("-", "_")
        wanted = {"per_device": "per_device_throughput", "actual": "actual_throughput"}.get(wanted, wanted)
        if wanted != solution.unknown:
            raise InvalidInput(
                "solve",
                solve,
                N_("the one quantity not given (%(unknown)s)"),
                params={"unknown": solution.unknown.replace("_", "-")},
            )
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

        save_plot(plot, lambda: save_chart(scaling_chart(solution.scaling, language), plot, lang=language))
    if as_json:
        payload = solution.scaling.to_dict() if solution.unknown == "actual_throughput" else solution.to_dict()
        emit_json(payload)
        return
    from dpscale.cli.render import print_scaling

    print_scaling(solution, language)
