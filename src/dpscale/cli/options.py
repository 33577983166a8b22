"""What every command shares: --lang and --json, reading optional values, writing JSON and charts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from dpscale._validate import language as validate_lang
from dpscale.errors import N_, InvalidInput
from dpscale.i18n import Lang, language_from_env

__all__ = [
    "JsonOption",
    "LangOption",
    "emit_json",
    "lang_of",
    "one_of",
    "save_plot",
]


LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="fr or en: how numbers are read and shown [default: from the locale, else en]."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print a JSON object instead of a table.")]


def lang_of(value: str | None) -> Lang:
    return validate_lang(value) if value is not None else language_from_env()


def one_of(field: str, positional: str | None, option: str | None) -> str | None:
    if positional is not None and option is not None and positional != option:
        raise InvalidInput(
            field,
            f"{positional} and {option}",
            N_("%(field)s given once, as an argument or an option"),
            params={"field": field},
        )
    return positional if positional is not None else option


def emit_json(payload: dict[str, object]) -> None:
    print(json.dumps(payload, ensure_ascii=False))


def save_plot(path: str, write: Callable[[], Path], lang: Lang) -> None:
    try:
        written = write()
    except OSError as exc:
        raise InvalidInput(
            "plot", path, N_("a path that can be written (%(reason)s)"), params={"reason": exc.strerror}
        ) from exc
    from dpscale.i18n import translation

    print(translation(lang).gettext(N_("chart written to %(path)s")) % {"path": written}, file=sys.stderr)
