"""The pages' templates write their escaped output as text rather than as a Markup per value, and call macros and
plain functions without asking each what it takes: the same text as Jinja's own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment, Undefined, pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

from dpscale.i18n import Lang, translation
from dpscale.web.jinja_compiler import escaped, macro_text
from dpscale.web.templating import environment


class _Html:
    def __html__(self) -> str:
        return "<b>safe</b>"


@pytest.mark.parametrize(
    "value",
    ["", "plain", "<script>&'\"</script>", Markup("<i>x</i>"), 12, 1.5, None, True, _Html(), Undefined(), ["<a>"]],
)
def test_a_value_is_written_as_escape_writes_it(value: Any) -> None:
    assert escaped(value) == str(escape(value))
    assert type(escaped(value)) is str


@given(st.text())
def test_any_text_is_written_as_escape_writes_it(text: str) -> None:
    assert escaped(text) == str(escape(text))


SOURCE = """{% macro m(x) %}<p title="{{ x }}">{{ x }}{{ caller() if caller }}</p>{% endmacro %}
{{ m(value) }}{% call m(value) %}{{ value }}{% endcall %}{% set held %}{{ value }}{% endset %}{{ held }}
{{ value | upper }}{% autoescape false %}{{ value }}{% endautoescape %}{{ [value] | join(', ') }}"""


@given(st.text(alphabet="<>&'\" ab", max_size=8))
def test_a_template_writes_what_jinja_writes(value: str) -> None:
    ours = environment("en").from_string(SOURCE).render(value=value)
    jinja = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string(SOURCE).render(value=value)
    assert ours == jinja


@pass_context
def _named(context: Context, key: str) -> str:
    return f"{key}={context.get(key)}"


def _stops() -> str:
    raise StopIteration


CALLS = """{% macro m(x, y=2) %}[{{ x }}{{ y }}{{ caller(x) if caller }}]{% endmacro %}
{{ m(1) }}{{ m(1, y='<') }}{% call(v) m(3) %}<{{ v }}>{% endcall %}
{% for i in [1, 2] %}{{ m(i) }}{{ plain(i, k=loop.index) }}{{ named('value') }}{% endfor %}
{{ named('value') }}{{ stops() is undefined }}{{ dict(a=1) | length }}{{ '%s' | format(value) }}{{ range(2) | list }}"""


def test_a_template_calls_what_jinja_calls() -> None:
    # Macros, plain functions, functions that take the context, builtins, in and out of loops: as Jinja calls them.
    names = {"plain": lambda i, k: f"<{i}:{k}>", "named": _named, "stops": _stops, "value": "<v>"}
    ours = environment("en").from_string(CALLS).render(**names)
    jinja = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string(CALLS).render(**names)
    assert ours == jinja
    assert "value=&lt;v&gt;" in ours


MESSAGES = """<p title="{{ _('The cluster behaves like %(n)s ideal devices out of %(d)s.',
                             n=value, d=value | upper) }}">
{{ _('Read as %(read)s; for %(other)s, write %(other)s, without a comma.', read=value, other=value) }}
{{ _('warning: efficiency %(e)s is above 100%% (superlinear scaling); check the single-device throughput', e=value) }}
{{ _('Not a message of the catalog: %(x)s', x=value) }}
{{ _('The cluster behaves like %(n)s ideal devices out of %(d)s.', n=1, d=2) }}</p>"""


@pytest.mark.parametrize("lang", ["fr", "en"])
@given(value=st.text(alphabet="<>&'\" a%", max_size=6))
def test_a_message_with_variables_is_written_as_gettext_writes_it(lang: Lang, value: str) -> None:
    # Its translation's text around each variable, escaped as gettext escapes them, in place of the call.
    jinja = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.i18n"])
    jinja.install_gettext_translations(translation(lang), newstyle=True)  # type: ignore[attr-defined]
    ours = environment(lang).from_string(MESSAGES).render(value=value)
    assert ours == jinja.from_string(MESSAGES).render(value=value)


class _Shaped:
    """An object whose attributes a template reads: one plain, one a property that fails, one it lacks."""

    plain = "<p>"

    @property
    def failing(self) -> str:
        raise AttributeError("failing")

    def __getitem__(self, key: str) -> str:
        return f"item {key}"


ATTRIBUTES = """{{ o.plain }}|{{ o.failing }}|{{ o.absent }}|{{ d.key }}|{{ d.items is defined }}|{{ n.x is undefined }}
{{ nested.inner.plain }}|{{ [o.plain, d.key] | join }}|{% for row in rows if row.keep %}{{ row.name }}{% endfor %}
{{ (o.plain ~ d.key) | length }}|{{ 'a'.upper() }}|{{ o.plain if d.key else o.absent }}"""


@given(st.text(alphabet="<>&'\" a", max_size=6))
def test_a_template_reads_attributes_as_jinja_reads_them(value: str) -> None:
    # An attribute, an item where the attribute is missing (or its property fails), undefined where neither is,
    # nested, inside calls, filters, a loop's filter and a condition: as Jinja's environment.getattr gives them.
    names = {
        "o": _Shaped(),
        "d": {"key": value},
        "n": None,
        "nested": {"inner": _Shaped()},
        "rows": [{"keep": True, "name": value}, {"keep": False, "name": "no"}],
    }
    ours = environment("en").from_string(ATTRIBUTES).render(**names)
    jinja = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string(ATTRIBUTES).render(**names)
    assert ours == jinja
    assert "item failing" in ours  # the property failed: the item was read, as Jinja reads it


MACROS = "{% macro m(x, y='<d>') %}[{{ x }}{{ y }}]{% endmacro %}"


def test_a_macro_called_from_python_writes_what_its_call_writes() -> None:
    module: Any = environment("en").from_string(MACROS).module
    for args in [("<a>",), ("<a>", "b"), ("<a>", Markup("<i>"))]:
        assert macro_text(module.m, *args) == str(module.m(*args))
    assert macro_text(module.m, "<a>") == "[&lt;a&gt;&lt;d&gt;]"  # the default, as the call fills it in
