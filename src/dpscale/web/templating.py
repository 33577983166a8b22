"""The pages' Jinja2 environments, one per language, and the page a browser gets for a refused request.

Apart from :mod:`dpscale.web.pages` so that the security middleware, which refuses requests
before any page route runs, can write that page without importing the routes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from dpscale._version import __version__
from dpscale.format import format_number
from dpscale.i18n import Lang, translation
from dpscale.web.delivery import static_url
from dpscale.web.jinja_compiler import Translating, compiled_gettext, escaped
from dpscale.web.language import lang_of

__all__ = ["TEMPLATES", "environment", "missing_page", "refusal_page"]

TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment(lang: Lang) -> Environment:
    """The pages' environment in ``lang``: made once per language and process, its templates compiled once."""
    env = Translating(
        loader=FileSystemLoader(TEMPLATES),
        auto_reload=False,  # templates ship with the package; no stat() per request
        autoescape=select_autoescape(default=True, default_for_string=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["ext.i18n.trimmed"] = True
    env.catalog = translation(lang)
    env.install_gettext_translations(translation(lang), newstyle=True)  # type: ignore[attr-defined]
    env.globals["_"] = env.globals["gettext"] = compiled_gettext(lang)
    env.globals["static"] = static_url  # a static file's URL with its version: browsers keep it
    env.globals.update(_drawing(env), invalid=_invalid, chosen=_chosen, opened=_opened)
    return env


# What no request changes in a calculator's fields is drawn once per language (defined_fields); where a request's form
# shows, ``_fields.html`` calls the helpers below, which write it for a form and, while the fields are drawn once
# (for a _Quiet form), leave a marker there, each with what writes it for a request.
Fill = Callable[[Any], str]  # what a marker stands for: a form's text in its place
_MARKER = re.compile(r"<!--dpscale:field:(\d+)-->")
_INVALID, _SELECTED, _OPEN, _NOTHING = Markup(' aria-invalid="true"'), Markup(" selected"), Markup(" open"), Markup()


class _Quiet(NamedTuple):
    """A form as the fields are drawn once: no field wrong, none read two ways, each value a marker."""

    values: _Markers
    errors: Mapping[str, str]
    readings: Mapping[str, tuple[str, str]]
    fills: list[Fill]  # what each marker stands for, by its number

    def mark(self, fill: Fill) -> Markup:
        self.fills.append(fill)
        return Markup(f"<!--dpscale:field:{len(self.fills) - 1}-->")  # noqa: S704 - a marker of our own


class _Markers(dict[str, Markup]):
    """A _Quiet form's values: in place of each, a marker for the value, escaped as ``{{ value }}`` writes it."""

    def __init__(self) -> None:
        super().__init__()
        self.form: _Quiet | None = None

    def __missing__(self, name: str) -> Markup:
        assert self.form is not None  # noqa: S101 - set as the form is made
        return self.form.mark(lambda form: escaped(form.values[name]))


def _quiet() -> _Quiet:
    values = _Markers()
    form = values.form = _Quiet(values, {}, {}, [])
    return form


def _invalid(form: Any, name: str) -> Markup:
    """`` aria-invalid="true"`` in the field of ``name``, where its value is wrong."""
    if type(form) is _Quiet:
        return form.mark(lambda form: _invalid(form, name))
    return _INVALID if form.errors.get(name) else _NOTHING


def _chosen(form: Any, name: str, option: str) -> Markup:
    """`` selected`` in a menu's option, where it is the field's value."""
    if type(form) is _Quiet:
        return form.mark(lambda form: _chosen(form, name, option))
    return _SELECTED if form.values[name] == option else _NOTHING


def _opened(form: Any, items: list[Any]) -> Markup:
    """`` open`` in a group folded away, where one of its fields is wrong: it shows."""
    if type(form) is _Quiet:
        return form.mark(lambda form: _opened(form, items))
    return _OPEN if any(item.name in form.errors for item in items) else _NOTHING


class _Drawn(NamedTuple):
    """A calculator's fields as ``_fields.html``'s ``defined`` draws them in one language, split at each marker."""

    texts: tuple[str, ...]
    fills: tuple[Fill, ...]  # what goes after each text but the last


def _drawing(env: Environment) -> dict[str, Callable[..., Markup]]:
    """The environment's ``defined_fields(form, calc)``: ``_fields.html``'s ``defined(form, calc)``, whose labels,
    hints, ids and menus no request changes, drawn once per language and calculator; a request only writes in its
    form's values, messages, marks of a wrong field and options selected. Nothing is kept by value: a field's
    messages, where it has something to say, are written for the request, and drawn once only as they are with
    nothing to say. And ``said(form, name, reading)``: a field's messages (``_fields.html``'s ``messages``)."""
    fields: list[Any] = []  # the template's module, once loaded (not as the environment is made)
    drawn: dict[int, tuple[Any, _Drawn]] = {}  # by the calculator's id: it, and its drawing

    def macros() -> Any:
        if not fields:
            fields.append(env.get_template("_fields.html").module)
        return fields[0]

    def said(form: Any, name: str, reading: bool = True) -> Markup:
        if type(form) is _Quiet:
            quiet: Markup = macros().messages(form, name, reading=reading)  # with nothing to say
            return form.mark(
                lambda form: said(form, name, reading) if name in form.errors or name in form.readings else quiet
            )
        messages: Markup = macros().messages(form, name, reading=reading)
        return messages

    def defined_fields(form: Any, calc: Any) -> Markup:
        held = drawn.get(id(calc))
        if held is None or held[0] is not calc:
            quiet = _quiet()
            split = _MARKER.split(macros().defined(quiet, calc))
            held = drawn[id(calc)] = (calc, _Drawn(tuple(split[::2]), tuple(quiet.fills[int(i)] for i in split[1::2])))
        made = held[1]
        out = [made.texts[0]]
        for fill, text in zip(made.fills, made.texts[1:], strict=True):
            out += (fill(form), text)
        return Markup("".join(out))  # noqa: S704 - the drawing's own markup, each value escaped

    return {"defined_fields": defined_fields, "said": said}


def refusal_page(
    status: int,
    lang: str | None,
    accept_language: str,
    size: int | None,
    *,
    max_body: int,
    max_query: int,
    upload: bool = False,
) -> bytes:
    """The page a browser shows for a request refused as too large (413) or too long (414), with the limits.

    ``upload``: the body was trace files sent to be explained, whose advice differs from a fit's.
    """
    chosen = lang_of(lang, accept_language)
    page = (
        environment(chosen)
        .get_template("refused.html")
        .render(
            status=status,
            lang=chosen,
            size=None if size is None else format_number(size, chosen),
            max_body=format_number(max_body, chosen),
            max_body_mib=format_number(max_body / (1 << 20), chosen),
            max_query=format_number(max_query, chosen),
            upload=upload,
            version=__version__,
        )
    )
    return page.encode()


def missing_page(path: str, lang: str | None, accept_language: str) -> str:
    """The page a browser shows for an address that leads nowhere (404), with the menu of calculators."""
    chosen = lang_of(lang, accept_language)
    other = "en" if chosen == "fr" else "fr"
    return (
        environment(chosen)
        .get_template("missing.html")
        .render(
            path=path[:200],
            lang=chosen,
            other_lang=other,
            calc=None,
            slot=lambda name: f"{_same_path(path)}?lang={other}",  # the language switch: the same address
            version=__version__,
        )
    )


def _same_path(path: str) -> str:
    """``path`` as a link on this site may carry it: quoted, and one leading slash, never a link to another
    host (``//host``, ``/\\host`` as a browser reads them)."""
    return "/" + quote(path.lstrip("/\\")[:1000], safe="/")
