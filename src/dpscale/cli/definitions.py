"""A command's options made from a calculator's definition (dpscale.inputs): one per input.

Each input becomes ``--its-name`` (or the spelling the definition gives), read as text in the
language of ``--lang`` by ``dpscale.reading.read_input``; a switch becomes a flag. The command's
own options (``--json``, ``--lang``, what to print) come after. Typer reads a function's
signature, so the command is a function whose ``__signature__`` lists those options.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any

import typer

from dpscale.cli.options import JsonOption, LangOption, one_of
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.i18n import Lang
from dpscale.inputs import Definition, Input

__all__ = ["OUTPUT", "build", "command", "named_as_options", "own", "read_values"]


TWIN = "_option"  # the name of a positional input's option form: devices_option for --devices


def _parameters(item: Input) -> list[inspect.Parameter]:
    """The command's parameters for ``item``: an option; or an argument, and its option form where
    the definition spells one (``dpscale scale 64 …`` or ``dpscale scale --devices 64 …``)."""
    names = [item.cli_option, *([item.short] if item.short else [])]
    shown = item.shown_default
    help_text = item.help if not shown or "[default" in item.help else f"{item.help} [default: {shown}]"
    if item.kind == "switch":  # --no-overlap turns off what is on by default, --x turns on what is off
        annotation: Any = Annotated[bool, typer.Option(*names, help=help_text)]
        return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=annotation)]
    if item.repeatable:  # --measured 8:7500 --measured 64:52000
        annotation = Annotated[list[str] | None, typer.Option(*names, help=help_text, show_default=False)]
        return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)]
    if not item.positional:
        annotation = Annotated[str | None, typer.Option(*names, help=help_text, show_default=False)]
        return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)]
    metavar = item.name.upper()
    argument = Annotated[str | None, typer.Argument(help=help_text, show_default=False, metavar=metavar)]
    out = [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=argument)]
    if item.option or item.short:
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
    """The values of the options given (text read in ``lang``); None where an option was not given."""
    from dpscale.reading import read_input

    values: dict[str, Any] = {}
    for item in definition.on("cli"):
        text = given.get(item.name)
        if item.kind == "switch":
            values[item.name] = (not item.default) if text else None
        elif item.kind == "reference" and text is not None:
            values[item.name] = _references(item, text if isinstance(text, list) else [text], lang)
        elif text is None and item.kind == "text" and item.example and item.default == item.example[1]:
            # a label whose default is its English example (samples/s, USD): the user's language's,
            # as the page is prefilled (échantillons/s, EUR in French)
            values[item.name] = item.example[0] if lang == "fr" else item.example[1]
        else:
            values[item.name] = None if text is None else read_input(item, text, lang)
    return values


def _references(item: Input, given: list[str], lang: Lang) -> tuple[tuple[int, float], ...] | None:
    """Measurements as typed (``8:7500``, ``8:7500; 64:52000``) or in a records file (the command line
    reads files; no page or API does): a value without a colon, or naming a file, is a file's path."""
    import os

    from dpscale.reading import read_input

    found: list[tuple[int, float]] = []
    for text in given:
        if ":" not in text and not os.path.isfile(text):
            raise InvalidInput(
                item.cli_name, text, N_("devices:throughput (8:7500), or an existing file of measurements")
            )
        if os.path.isfile(text):
            from dpscale.fit import read_points

            found += [(p.devices, p.throughput) for p in read_points(text)]
        else:
            found += read_input(item, text, lang)
    return tuple(found) or None


@contextlib.contextmanager
def named_as_options(definition: Definition | None, typed: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Errors about an input name it as the command line spells it (``intra_bw``, not ``intra_bandwidth``),
    and quote what was typed there (``100Mb/s``), not the number it was read as (12500000.0).

    The one place the command line says which option was wrong and how it was typed: the
    commands made from a definition, and those whose errors name their options already
    (``definition`` None: measure's and probe's, whose fields are their options' names).
    """
    try:
        yield
    except InvalidInput as exc:
        if definition is None:
            name = key = exc.field
        else:
            item = definition.get(exc.field)
            if item is None:
                raise
            name, key = item.cli_name, item.name
        text = (typed or {}).get(key)
        if isinstance(text, str) and exc.value is not None and not isinstance(exc, MissingInput):
            raise exc.as_given(name, text) from None
        if definition is None:
            raise
        raise exc.renamed(name) from None


def build(definition: Definition, given: dict[str, Any], lang: Lang) -> Any:
    """What ``definition`` builds from the options given, read in ``lang``; errors name the options."""
    with named_as_options(definition, given):
        return definition.build(read_values(definition, given, lang))


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
