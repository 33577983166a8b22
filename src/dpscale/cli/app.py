"""The Typer application and its root options; the commands register on it from their modules.

scaling.py (scale) and serve.py load alone, for a quick start; calculators.py (batch, bubble,
plan), models.py (predict, fit), cluster.py (measure, probe) and explain.py (explain) load for the
other commands.
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["app"]

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
