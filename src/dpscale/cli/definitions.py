"""A command's options made from a calculator's definition (dpscale.inputs): one per input.

Each input becomes ``--its-name`` (or the spelling the definition gives), read as its kind says
(:mod:`dpscale.kinds`: text in the language of ``--lang``; a switch is a flag, a table a file).
The command's own options (``--json``, ``--lang``, what to print) come after. Typer reads a
function's signature, so the command is a function whose ``__signature__`` lists those options.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any

import typer

from dpscale.cli.options import JsonOption, LangOption, one_of
from dpscale.errors import InvalidInput, MissingInput
from dpscale.i18n import Lang
from dpscale.inputs import Definition, Input
from dpscale.kinds import kind_of

__all__ = ["OUTPUT", "build", "command", "named_as_options", "own", "read_values"]


TWIN = "_option"  # the name of a positional input's option form: devices_option for --devices


def _parameters(item: Input) -> list[inspect.Parameter]:
    """The command's parameters for ``item``: an option; or an argument, and its option form where
    the definition spells one (``dpscale scale 64 …`` or ``dpscale scale --devices 64 …``)."""
    names = [item.cli_option, *([item.cli.short] if item.cli.short else [])]
    shown = item.shown_default
    help_text = (
        item.help if not shown or "[default" in item.help else f"{item.help}  [default: {shown}]"
    )  # spaced as Click spaces its own
    kind = kind_of(item)
    if kind.flag:  # --no-overlap turns off what is on by default, --x turns on what is off
        annotation: Any = Annotated[bool, typer.Option(*names, help=help_text)]
        return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=annotation)]
    option = typer.Option(*names, help=help_text, show_default=False, metavar=kind.metavar)
    if not item.cli.positional:  # repeatable: --measured 8:7500 --measured 64:52000
        annotation = Annotated[list[str] | None, option] if item.cli.repeatable else Annotated[str | None, option]
        return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)]
    metavar = item.name.upper()
    if item.cli.repeatable:  # every argument left: dpscale explain rank0.json rank1.json; Click says when none is given
        many = typer.Argument(help=help_text, show_default=False, metavar=metavar + "...")
        if item.required_on("cli"):
            needed = Annotated[list[str], many]
            return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, annotation=needed)]
        maybe = Annotated[list[str] | None, many]
        return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=maybe)]
    argument = Annotated[str | None, typer.Argument(help=help_text, show_default=False, metavar=metavar)]
    out = [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=argument)]
    if item.cli.option or item.cli.short:
        option = Annotated[str | None, typer.Option(*names, help=f"{metavar}, as an option.", show_default=False)]
        out.append(inspect.Parameter(item.name + TWIN, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option))
    return out


def own(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    """A command's own option, after those its definition makes."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


OUTPUT = [
    own("as_json", JsonOption, False),
    own("lang", LangOption, None),
]  # what every command prints, and in which language


def read_values(definition: Definition, given: dict[str, Any], lang: Lang) -> dict[str, Any]:
    """The values of the options given, read as their kinds read what the command line gives (text
    in ``lang``, a flag, a file); None where an option was not given."""
    return {item.name: kind_of(item).read_cli(item, given.get(item.name), lang) for item in definition.on("cli")}


@contextlib.contextmanager
def named_as_options(definition: Definition, typed: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Errors about an input name it as the command line spells it (``intra_bw``, not ``intra_bandwidth``),
    and quote what was typed there (``100Mb/s``), not the number it was read as (12500000.0).

    The one place the command line says which option was wrong and how it was typed, for every
    command made from a definition; an error about anything else (a Slurm variable, a file's
    line) is left as it is.
    """
    try:
        yield
    except InvalidInput as exc:
        item = definition.get(exc.field)
        if item is None:
            raise
        text = (typed or {}).get(item.name)
        if isinstance(text, str) and exc.value is not None and not isinstance(exc, MissingInput):
            raise exc.as_given(item.cli_name, text) from None
        raise exc.renamed(item.cli_name) from None


def build(
    definition: Definition, given: dict[str, Any], lang: Lang, *, context: Mapping[str, Any] | None = None
) -> Any:
    """What ``definition`` builds from the options given, read in ``lang``; errors name the options.

    ``context``: values the build reads besides the options (measure's and probe's: the environment,
    where srun says where they run).
    """
    with named_as_options(definition, given):
        return definition.build({**read_values(definition, given, lang), **(context or {})})


def command(
    definition: Definition,
    run: Callable[..., None],
    own: list[inspect.Parameter],
    doc: str,
) -> Callable[..., None]:
    """A function Typer registers as a command: the definition's options, then ``own``.

    ``run(values, **own)`` is called with the values read (see :func:`read_values`, in the language
    of ``own``'s ``lang``, which ``run`` reads itself) and the command's own options.
    """
    options = [p for item in definition.on("cli") for p in _parameters(item)]
    names = {p.name for p in options}
    twins = [item for item in definition.on("cli") if item.name + TWIN in names]

    def invoked(**kwargs: Any) -> None:
        given = {k: v for k, v in kwargs.items() if k in names}
        for item in twins:  # an argument given as an option: given once, either way
            given[item.name] = one_of(item.cli_name, given[item.name], given.pop(item.name + TWIN))
        run(given, **{k: v for k, v in kwargs.items() if k not in names})

    parameters = [*options, *own]
    invoked.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    invoked.__annotations__ = {p.name: p.annotation for p in parameters}
    invoked.__doc__ = doc
    invoked.__name__ = definition.name
    return invoked
