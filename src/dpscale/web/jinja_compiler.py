"""How the pages' templates are compiled: what Jinja2 would do on each request, done once or done quicker.

- A translation whose message and variables are literal is written into the template; one whose
  variables are not becomes its translated text around them (:class:`_Constants`): an environment
  speaks one language, so its templates may be compiled in it.
- ``{{ value }}`` is written as escaped text, not a Markup made of each value (:func:`escaped`); a
  ``str`` is escaped by markupsafe's C function where it stands, without a Python call.
- ``x.name`` reads the attribute with the builtin ``getattr``, and goes through Jinja's
  ``environment.getattr`` (the item, then undefined) only where the attribute is missing.
- A call of a macro or a plain function skips ``context.call``'s inspection (:func:`_called`); a
  macro given every argument runs its body directly, from a template or from Python
  (:func:`macro_text`).

Each is held to Jinja's own output by ``tests/web/test_page_speed_templates.py`` and
``tests/web/test_macro_calls.py``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from types import FunctionType
from typing import Any

from jinja2 import Environment, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context, Macro
from jinja2.visitor import NodeTransformer
from markupsafe import Markup, escape

from dpscale.i18n import Lang, translation

try:
    from markupsafe._speedups import _escape_inner  # what markupsafe.escape writes, as text
except ImportError:  # pragma: no cover - markupsafe without its C speedups

    def _escape_inner(s: str, /) -> str:
        return str(escape(s))


__all__ = ["Translating", "compiled_gettext", "escaped", "macro_text"]


def compiled_gettext(lang: Lang) -> Callable[..., Markup]:
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
        return Markup(translated(message) % {name: escaped(value) for name, value in variables.items()})  # noqa: S704

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


def escaped(value: Any) -> str:
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
        # Escaped text, not a Markup (see escaped); a text, as most values are, escaped there without a call of
        # escaped: ``(escape_inner(v) if type(v := X) is str else escaped(v))``, X written between.
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
        'name'))``, where a missing attribute still goes to the item, then to undefined. A page reads dozens. A
        property that raises AttributeError runs twice (once here, once in environment.getattr), where Jinja runs
        it once: the same text, and no property a page reads has a side effect."""
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


class Translating(Environment):
    """An environment of one language, whose templates are compiled with its literal translations in them, and
    write their escaped output as text (:func:`escaped`)."""

    code_generator_class = _TranslatingGenerator
    catalog: Any = None  # its language's translations (dpscale.i18n.translation)
    escaped = staticmethod(escaped)
    escape_inner = staticmethod(_escape_inner)
    called = staticmethod(_called)
