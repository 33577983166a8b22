"""What every command shares: --lang and --json, reading optional values, and how a command ends
(:func:`respond`: the chart saved if asked, then the JSON object or the tables)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from dpscale._validate import language as validate_lang
from dpscale.errors import N_, InvalidInput
from dpscale.i18n import Lang, language_from_env

if TYPE_CHECKING:
    from dpscale.calculators.shown import Shown

__all__ = [
    "JsonOption",
    "LangOption",
    "emit_json",
    "lang_of",
    "one_of",
    "respond",
]


LangOption = Annotated[
    str | None,
    typer.Option("--lang", help="fr or en: how numbers are read and shown [default: from the locale, else en]."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print a JSON object instead of a table.")]


R = TypeVar("R")


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


def emit_json(payload: Mapping[str, object]) -> None:
    print(json.dumps(payload, ensure_ascii=False))


def respond(
    result: R,
    lang: Lang,
    *,
    as_json: bool,
    payload: Callable[[R], Mapping[str, Any]],
    present: Callable[[R, Lang], Shown],
    plot: str | None = None,
    chart: Callable[[R, Lang], Any] | None = None,
) -> None:
    """How a command ends: ``chart`` saved where ``--plot`` says, then ``payload`` as JSON, or what the
    calculator's ``present`` shows, printed.

    ``chart`` imports what it needs itself, and the tables are printed by a module that loads Rich, so
    that ``--json`` loads neither Rich nor Altair. An error raised on the way ends the command (exit 2,
    see :func:`dpscale.cli.main`).
    """
    if plot is not None and chart is not None:
        _save_plot(plot, lambda: chart(result, lang), lang)
    if as_json:
        emit_json(payload(result))
        return
    from dpscale.cli.render import print_shown

    print_shown(present(result, lang), lang)


def _save_plot(path: str, chart: Callable[[], Any], lang: Lang) -> None:
    from dpscale.chart_files import save_chart

    try:
        written = save_chart(chart(), path, lang=lang)
    except OSError as exc:
        raise InvalidInput(
            "plot", path, N_("a path that can be written (%(reason)s)"), params={"reason": exc.strerror}
        ) from exc
    from dpscale.i18n import translation

    print(translation(lang).gettext(N_("chart written to %(path)s")) % {"path": written}, file=sys.stderr)
