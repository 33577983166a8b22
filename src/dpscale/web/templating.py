"""The pages' Jinja2 environments, one per language, and the page a browser gets for a refused request.

Apart from :mod:`dpscale.web.pages` so that the security middleware, which refuses requests
before any page route runs, can write that page without importing the routes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FunctionType
from typing import Any, NamedTuple
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, nodes, select_autoescape
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context, Macro
from jinja2.visitor import NodeTransformer
from markupsafe import Markup, escape

try:
    from markupsafe._speedups import _escape_inner  # what markupsafe.escape writes, as text
except ImportError:  # pragma: no cover - markupsafe without its C speedups

    def _escape_inner(s: str, /) -> str:
        return str(escape(s))


from dpscale._version import __version__
from dpscale.format import format_number
from dpscale.i18n import Lang, translation
from dpscale.web.delivery import static_url
from dpscale.web.language import lang_of

__all__ = ["TEMPLATES", "environment", "macro_text", "missing_page", "refusal_page"]

TEMPLATES = Path(__file__).parent / "templates"


@functools.cache
def environment(lang: Lang) -> Environment:
    """The pages' environment in ``lang``: made once per language and process, its templates compiled once."""
    env = _Translating(
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
    env.globals["_"] = env.globals["gettext"] = _gettext(lang)
    env.globals["static"] = static_url  # a static file's URL with its version: browsers keep it
    env.globals.update(_drawing(env), invalid=_invalid, chosen=_chosen, opened=_opened)
    return env


def _gettext(lang: Lang) -> Callable[..., Markup]:
    """What ``_()`` and ``{% trans %}`` call: Jinja's new-style gettext (the message is markup, its
    variables are escaped, ``%%`` reads ``%``) without its three context lookups per call; a page
    translates dozens of messages per request, and those without variables are the same each time."""
    catalog = translation(lang)  # our own messages: trusted markup, as Jinja's i18n treats them

    @functools.lru_cache(maxsize=2048)
    def translated(message: str) -> str:
        return catalog.gettext(message)

    @functools.lru_cache(maxsize=2048)
    def constant(message: str) -> Markup:
        return Markup(translated(message)) % {}  # noqa: S704

    def gettext(message: str, /, **variables: Any) -> Markup:
        if not variables:
            return constant(message)
        # As Markup(text) % variables gives it (the messages' fields are all %(name)s): each variable escaped.
        return Markup(translated(message) % {name: _escaped(value) for name, value in variables.items()})  # noqa: S704

    return gettext


_GETTEXT = frozenset({"_", "gettext"})
_FIELD = re.compile(r"%\((\w+)\)s")  # a message's variable


class _Constants(NodeTransformer):
    """A template's translations that no request changes, written into it: a call of ``_()``, ``gettext()`` or a
    ``{% trans %}`` block whose message and variables are all literal becomes its translation, which Jinja then
    joins to the text around it. An environment speaks one language, so its templates may be compiled in it."""

    def __init__(self, gettext: Callable[..., Markup], translated: Callable[[str], str] | None) -> None:
        self.gettext = gettext
        self.translated = translated  # None: a message with variables stays a call (output not escaped)

    def visit_Call(self, node: nodes.Call) -> nodes.Node:
        self.generic_visit(node)  # the calls in its arguments first
        named, args, keywords = node.node, node.args, node.kwargs
        if not (isinstance(named, nodes.Name) and named.name in _GETTEXT and len(args) == 1):
            return node
        message = args[0]
        values = [keyword.value for keyword in keywords]
        if not isinstance(message, nodes.Const) or not isinstance(message.value, str):
            return node
        if node.dyn_args is not None or node.dyn_kwargs is not None:
            return node
        if not all(isinstance(value, nodes.Const) for value in values):
            return node
        variables = {keyword.key: keyword.value.as_const() for keyword in keywords}
        return nodes.MarkSafe(nodes.Const(str(self.gettext(message.value, **variables))), lineno=node.lineno)

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        """``{{ _('… %(n)s …', n=x) }}``, whose message is literal and variables are not: its translation's text
        around each variable, written as ``{{ x }}`` writes it (escaped), without the call, the dictionary and the
        formatting that gettext makes on each request."""
        self.generic_visit(node)  # the literal ones first
        node.nodes = [piece for child in node.nodes for piece in self._spliced(child)]
        return node

    def _spliced(self, node: nodes.Expr) -> list[nodes.Expr]:
        if self.translated is None or not isinstance(node, nodes.Call) or node.dyn_args or node.dyn_kwargs:
            return [node]
        named, args = node.node, node.args
        if not (isinstance(named, nodes.Name) and named.name in _GETTEXT and len(args) == 1):
            return [node]
        if not (isinstance(args[0], nodes.Const) and isinstance(args[0].value, str)):
            return [node]
        pieces = _FIELD.split(self.translated(args[0].value))
        values = {keyword.key: keyword.value for keyword in node.kwargs}
        names = pieces[1::2]
        # Each variable given a field %(name)s, once; no other % than %%: else the call stays, as the page wrote it.
        if len(set(names)) != len(names) or set(names) != values.keys():
            return [node]
        if any("%" in text.replace("%%", "") for text in pieces[::2]):
            return [node]
        out: list[nodes.Expr] = []
        for index, piece in enumerate(pieces):
            if index % 2:
                out.append(values[piece])
            elif piece:
                out.append(nodes.TemplateData(piece.replace("%%", "%"), lineno=node.lineno))
        return out


def _escaped(value: Any) -> str:
    """What ``{{ value }}`` writes where output is escaped: the text of ``markupsafe.escape(value)``, without the
    Markup made of each value (a page writes dozens; the output is joined, and a macro's whole result is marked
    safe as Jinja marks it)."""
    if type(value) is str:
        return _escape_inner(value)
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return _escape_inner(str(value))


def _called(context: Context, f: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``context.call(f, *args, **kwargs)``: a template's call of a macro or a plain function (a page makes a dozen:
    its parts, their messages, its translations), without Jinja's inspection of each for what it takes first."""
    kind = type(f)
    if kind is Macro or (kind is FunctionType and not hasattr(f, "jinja_pass_arg")):
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
        try:
            if kind is Macro and not kwargs and _whole(f, args):
                text = f._func(*args)
                return Markup(text) if context.eval_ctx.autoescape else text  # noqa: S704 - as Macro's call marks it
            return f(context.eval_ctx, *args, **kwargs) if kind is Macro else f(*args, **kwargs)
        except StopIteration:
            return context.environment.undefined(
                "value was undefined because a callable raised a StopIteration exception"
            )
    return context.call(f, *args, **kwargs)


def macro_text(macro: Macro, /, *args: Any) -> str:
    """What ``macro(*args)`` writes, as text: called with every argument, its body runs without ``Macro.__call__``'s
    sorting of them (about 1 µs a call; a page's route calls four)."""
    return str(macro._func(*args) if _whole(macro, args) else macro(*args))


def _whole(macro: Macro, args: tuple[Any, ...]) -> bool:
    """Whether ``args`` are every argument of ``macro``, which takes no caller and no more: its body may then be
    called with them as they are, as ``Macro.__call__`` would call it after sorting them (about 0.5 µs a call)."""
    return len(args) == macro._argument_count and not (macro.caller or macro.catch_kwargs or macro.catch_varargs)


class _TranslatingGenerator(CodeGenerator):
    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        # Unless the template gives either name a meaning of its own (a variable, a macro's parameter).
        if not any(name.name in _GETTEXT and name.ctx != "load" for name in node.find_all(nodes.Name)):
            gettext: Callable[..., Markup] = self.environment.globals["_"]  # type: ignore[assignment]
            # Its variables written as its output writes values: only where that is escaped, throughout.
            autoescape = self.environment.autoescape
            escaped = autoescape(self.name) if callable(autoescape) else autoescape
            if any(node.find_all((nodes.EvalContextModifier, nodes.ScopedEvalContextModifier))):
                escaped = False
            catalog: Any = getattr(self.environment, "catalog", None)
            _Constants(gettext, catalog.gettext if escaped and catalog is not None else None).visit(node)
        super().visit_Template(node, frame)

    def write(self, x: str) -> None:
        # Jinja writes every call in a template as ``context.call(f, ...)``: see _called.
        super().write("environment.called(context, " if x == "context.call(" else x)

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: CodeGenerator._FinalizeInfo) -> None:
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape:
            super()._output_child_pre(node, frame, finalize)
            return
        # Escaped text, not a Markup (see _escaped); a text, as most values are, escaped there without a call of
        # _escaped: ``(escape_inner(v) if type(v := X) is str else escaped(v))``, X written between.
        self.write("(environment.escape_inner(_dpscale_v) if type(_dpscale_v := ")
        if finalize.src is not None:
            self.write(finalize.src)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: CodeGenerator._FinalizeInfo) -> None:
        if frame.eval_ctx.volatile or not frame.eval_ctx.autoescape:
            super()._output_child_post(node, frame, finalize)
            return
        if finalize.src is not None:
            self.write(")")
        self.write(") is str else environment.escaped(_dpscale_v))")

    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        """``x.name`` as ``environment.getattr(x, 'name')`` gives it, the attribute read without that call where the
        object has it: ``(a if (a := getattr((o := X), 'name', missing)) is not missing else environment.getattr(o,
        'name'))``, where a missing attribute still goes to the item, then to undefined. A page reads dozens."""
        if self.environment.is_async or self.optimizer is None or frame.eval_ctx.volatile:
            super().visit_Getattr(node, frame)
            return
        folded = self.optimizer.visit(node, frame.eval_ctx)  # as Jinja's own visit_Getattr folds constants
        if folded != node:
            self.visit(folded, frame)
            return
        self.write("(_dpscale_a if (_dpscale_a := getattr((_dpscale_o := ")
        self.visit(node.node, frame)
        self.write(f"), {node.attr!r}, missing)) is not missing else environment.getattr(_dpscale_o, {node.attr!r}))")


class _Translating(Environment):
    """An environment of one language, whose templates are compiled with its literal translations in them, and
    write their escaped output as text (:func:`_escaped`)."""

    code_generator_class = _TranslatingGenerator
    catalog: Any = None  # its language's translations (dpscale.i18n.translation)
    escaped = staticmethod(_escaped)
    escape_inner = staticmethod(_escape_inner)
    called = staticmethod(_called)


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
        return self.form.mark(lambda form: _escaped(form.values[name]))


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
