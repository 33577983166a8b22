"""The Typer application: one function per command, each a thin layer over the core."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from dpscale import scaling
from dpscale._validate import language as validate_lang
from dpscale.errors import N_, InvalidInput, MissingExtra
from dpscale.i18n import Lang, language_from_env
from dpscale.parse import parse_count, parse_efficiency, parse_number

app = typer.Typer(
    name="dpscale",
    help="How fast will a data-parallel job really run, and why not faster?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from dpscale._version import __version__

        print(f"dpscale {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """How fast will a data-parallel job really run, and why not faster?"""


def _lang(value: str | None) -> Lang:
    return validate_lang(value) if value is not None else language_from_env()


def _one(field: str, positional: str | None, option: str | None) -> str | None:
    if positional is not None and option is not None and positional != option:
        raise InvalidInput(
            field,
            f"{positional} and {option}",
            N_("%(field)s given once, as an argument or an option"),
            params={"field": field},
        )
    return positional if positional is not None else option


LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="fr or en: how numbers are read and shown [default: from the locale, else en]."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print a JSON object instead of a table.")]


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
    language = _lang(lang)
    d_text = _one("devices", devices, devices_opt)
    v_text = _one("per_device_throughput", per_device, per_device_opt)
    e_text = _one("efficiency", efficiency, efficiency_opt)
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

        _save(plot, lambda: save_chart(scaling_chart(solution.scaling, language), plot, lang=language))
    if as_json:
        payload = solution.scaling.to_dict() if solution.unknown == "actual_throughput" else solution.to_dict()
        print(json.dumps(payload, ensure_ascii=False))
        return
    from dpscale.cli.render import print_scaling

    print_scaling(solution, language)


def _emit_json(payload: dict[str, object]) -> None:
    print(json.dumps(payload, ensure_ascii=False))


def _save(path: str, write: Callable[[], Path]) -> None:
    try:
        written = write()
    except OSError as exc:
        raise InvalidInput(
            "plot", path, N_("a path that can be written (%(reason)s)"), params={"reason": exc.strerror}
        ) from exc
    print(f"chart written to {written}", file=sys.stderr)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    request_timeout: Annotated[
        float, typer.Option("--request-timeout", help="Seconds a client has to send a whole request.")
    ] = 10.0,
) -> None:
    """Start the web calculator (French and English pages, JSON API at /api/v1, docs at /docs)."""
    try:
        from dpscale.web import server
    except ImportError as exc:
        raise MissingExtra("dpscale serve", "web") from exc
    server.check_request_seconds(request_timeout)
    sock = server.listen(host, port)
    bound = sock.getsockname()[1]
    print(f"dpscale: serving on http://{host}:{bound}/ (Ctrl-C to stop)", file=sys.stderr)
    server.serve(sock, request_seconds=request_timeout)
