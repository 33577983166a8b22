"""The ``dpscale`` command line: parse text, call the core, print the result.

Errors end here: a DpscaleError or a usage error prints one line on stderr and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]

EXIT_BAD_INPUT = 2
LIGHT_COMMANDS = ("scale", "serve")  # need nothing from dpscale.cli.commands
EXIT_RUN_FAILED = 1
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``) and exit."""
    import typer
    from typer._click.exceptions import ClickException  # Typer's own (vendored) Click

    from dpscale.cli.app import app
    from dpscale.errors import DpscaleError, RunFailed

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in LIGHT_COMMANDS:
        import dpscale.cli.commands  # noqa: F401  (registers the other commands on app)
    command = typer.main.get_command(app)
    try:
        code = command.main(args=args or ["--help"], prog_name="dpscale", standalone_mode=False)
    except RunFailed as exc:  # the input was fine; the run was not
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        sys.exit(EXIT_RUN_FAILED)
    except DpscaleError as exc:
        _fail(str(exc))
    except ClickException as exc:
        where = f"{exc.ctx.command_path}: " if getattr(exc, "ctx", None) is not None else "dpscale: "  # type: ignore[attr-defined]
        _fail(f"{where}{exc.format_message()} (see --help)")
    except (KeyboardInterrupt, typer.Abort):
        print("dpscale: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    if code == EXIT_INTERRUPTED:  # Typer turns Ctrl-C into Exit(130)
        print("dpscale: interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str) -> None:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)
