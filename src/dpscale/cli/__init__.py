"""The ``dpscale`` command line: parse text, call the core, print the result.

Errors end here: a DpscaleError or a usage error prints one line on stderr and exits 2.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence

__all__ = ["main"]

EXIT_BAD_INPUT = 2
LIGHT_COMMANDS = ("scale", "serve")  # need none of calculators.py, models.py, cluster.py
QUICK_COMMANDS = ("scale",)  # done in a blink: the process ends a few milliseconds after it starts
EXIT_RUN_FAILED = 1
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``) and exit."""
    if argv is not None:  # called from Python (tests, scripts): leave the collector alone
        _main(list(argv))
        return
    # The process ends with the command. The cyclic collector would only walk what the imports
    # and Babel's locale data created, which all lives until exit: a quick command runs without
    # it, and every command freezes what is left so that the collection at shutdown skips it
    # (about a fifth of `dpscale scale`'s wall time otherwise).
    args = sys.argv[1:]
    if args[:1] and args[0] in QUICK_COMMANDS:
        gc.disable()
    try:
        _main(args)
    finally:
        gc.freeze()


def _main(args: list[str]) -> None:
    import typer
    from typer._click.exceptions import ClickException  # Typer's own (vendored) Click

    from dpscale.cli.commands import create_app
    from dpscale.errors import DpscaleError, InvalidInput, RunFailed

    app = create_app(light=bool(args) and args[0] in LIGHT_COMMANDS)  # the others load only when one may run
    if not args or args == ["scale"]:  # nothing to compute yet: say how
        args = [*args, "--help"]
    command = typer.main.get_command(app)
    try:
        code = command.main(args=args, prog_name="dpscale", standalone_mode=False)
    except RunFailed as exc:  # the input was fine; the run was not
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        sys.exit(EXIT_RUN_FAILED)
    except InvalidInput as exc:  # in the language the numbers were read in
        _fail(exc.localized(_language(args)))
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


def _language(args: list[str]) -> str:
    """The language of the command's --lang (a valid one), else of the environment's locale."""
    from dpscale._validate import language as validate_lang
    from dpscale.errors import InvalidInput
    from dpscale.i18n import language_from_env

    for i, arg in enumerate(args):
        if arg == "--lang" or arg.startswith("--lang="):
            value = args[i + 1] if arg == "--lang" and i + 1 < len(args) else arg.partition("=")[2]
            try:
                return validate_lang(value)  # fr_FR and en-GB as --lang itself reads them
            except InvalidInput:
                break
    return language_from_env()


def _fail(message: str) -> None:
    print(f"error: {_one_line(message)}", file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)


def _one_line(message: str) -> str:
    """``message`` on one line, any control character left in it (an argument's ESC) escaped, not obeyed."""
    from dpscale.errors import escaped, one_line

    return escaped(one_line(message))
