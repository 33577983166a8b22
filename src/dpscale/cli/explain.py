"""``dpscale explain``: where each rank's step time goes, from the job's profiler traces."""

from __future__ import annotations

from typing import Annotated

import typer

from dpscale.cli.options import JsonOption, LangOption, lang_of, respond

__all__ = ["explain", "register"]


def explain(
    traces: Annotated[
        list[str],
        typer.Argument(
            help="Profiler traces (Chrome trace JSON, plain or .gz), one per rank, or folders of them.",
            metavar="TRACE...",
        ),
    ],
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Split each rank's step time into compute, exposed communication and other, from torch.profiler traces.

    dpscale explain traces/
    """
    from dpscale import explain as core
    from dpscale.cli.render import print_explanation

    language = lang_of(lang)
    found = core.explain(traces)
    respond(found, language, as_json=as_json, payload=core.Explanation.to_dict, table=print_explanation)


def register(app: typer.Typer) -> None:
    """Add ``dpscale explain`` to ``app``."""
    app.command()(explain)
