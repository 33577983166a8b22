"""The Typer application and its root options, built when the command line runs.

Nothing is built at import: :func:`create_app` makes the app and asks each command module to
``register`` its commands on it. scale_command.py and serve.py load alone, for a quick start;
calculators.py (batch, bubble, plan), cluster.py (measure, probe) and models.py (predict, fit,
explain) load only when one of their commands may run.
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["create_app"]


def create_app(*, light: bool = False) -> typer.Typer:
    """The ``dpscale`` application with every command; with ``light``, only those that load alone (scale, serve)."""
    from dpscale.cli import scale_command, serve

    app = typer.Typer(
        name="dpscale",
        help="How fast will a data-parallel job really run, and why not faster?",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    scale_command.register(app)
    serve.register(app)
    if not light:
        from dpscale.cli import calculators, cluster, models

        for module in (calculators, cluster, models):  # the order --help lists them in
            module.register(app)
    return app


def _version(value: bool) -> None:
    if value:
        from dpscale._version import __version__

        print(f"dpscale {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """How fast will a data-parallel job really run, and why not faster?"""
