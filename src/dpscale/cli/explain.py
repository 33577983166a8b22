"""``dpscale explain``: where each rank's step time goes, from the job's profiler traces.

Its one input, the traces, is a definition's (:data:`EXPLAIN`), read and named in errors as every
calculator's are (:mod:`dpscale.cli.definitions`); the command line alone takes paths (the
``/explain`` page takes uploads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from dpscale.cli.definitions import OUTPUT, build, command
from dpscale.cli.options import lang_of, respond
from dpscale.inputs import Cli, Definition, Input, Values

if TYPE_CHECKING:
    from dpscale.explain import Explanation

__all__ = ["EXPLAIN", "register"]


def _explained(values: Values) -> Explanation:
    """The explanation of the traces named: each file read and reduced in turn (errors name the trace)."""
    from dpscale import explain as core

    return core.explain(EXPLAIN.complete(values)["trace"])


EXPLAIN = Definition(
    "explain",
    (
        Input(
            "trace",
            "path",
            "Profiler traces (Chrome trace JSON, plain or .gz), one per rank, or folders of them.",
            required=True,
            edges=("cli",),
            cli=Cli(positional=True, repeatable=True),
        ),
    ),
    _explained,
)


def _explain(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    from dpscale import explain as core
    from dpscale.cli.render import print_explanation

    language = lang_of(lang)
    found = build(EXPLAIN, given, language)
    respond(found, language, as_json=as_json, payload=core.Explanation.to_dict, table=print_explanation)


def register(app: typer.Typer) -> None:
    """Add ``dpscale explain`` to ``app``."""
    doc = """Split each rank's step time into compute, exposed communication and other, from torch.profiler traces.

    dpscale explain traces/
    """
    app.command("explain")(command(EXPLAIN, _explain, OUTPUT, doc))
