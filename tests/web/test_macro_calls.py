"""A macro called in a template with every argument runs its body straight (jinja_compiler._called): the same text as
Jinja's own call of it, escaped once, whatever the macro takes."""

from __future__ import annotations

import pytest
from jinja2 import Environment

from dpscale.web.templating import environment

MACROS = """
{%- macro row(label, value) %}<dt>{{ label }}</dt><dd>{{ value }}</dd>{% endmacro -%}
{%- macro some(a, b='<b>') %}[{{ a }}|{{ b }}]{% endmacro -%}
{%- macro called() %}({{ caller() }}){% endmacro -%}
{%- macro rest(a) %}{{ a }}{{ varargs | join(',') }}{{ kwargs | dictsort | join(',') }}{% endmacro -%}
"""

CALLS = [
    "{{ row('<i>', x) }}",
    "{{ row(label='a', value=x) }}",
    "{{ some(x) }}{{ some(x, '&') }}{{ some(a=x) }}",
    "{% call called() %}<u>{{ x }}</u>{% endcall %}",
    "{{ rest(x, 1, 2, k='<v>') }}{{ rest(x) }}",
    "{% set m = row %}{{ m(x, x) | length }}",
]


@pytest.mark.parametrize("call", CALLS)
def test_as_jinja_calls_it(call: str) -> None:
    source = MACROS + call
    ours = environment("en").from_string(source).render(x="<&>")
    plain = Environment(autoescape=True).from_string(source).render(x="<&>")
    assert ours == plain
    assert "&amp;lt;" not in ours  # a macro's text is markup: not escaped again
