"""The pages' templates write their escaped output as text rather than as a Markup per value: the same text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment, Undefined
from markupsafe import Markup, escape

from dpscale.web.templating import _escaped, environment


class _Html:
    def __html__(self) -> str:
        return "<b>safe</b>"


@pytest.mark.parametrize(
    "value",
    ["", "plain", "<script>&'\"</script>", Markup("<i>x</i>"), 12, 1.5, None, True, _Html(), Undefined(), ["<a>"]],
)
def test_a_value_is_written_as_escape_writes_it(value: Any) -> None:
    assert _escaped(value) == str(escape(value))
    assert type(_escaped(value)) is str


@given(st.text())
def test_any_text_is_written_as_escape_writes_it(text: str) -> None:
    assert _escaped(text) == str(escape(text))


SOURCE = """{% macro m(x) %}<p title="{{ x }}">{{ x }}{{ caller() if caller }}</p>{% endmacro %}
{{ m(value) }}{% call m(value) %}{{ value }}{% endcall %}{% set held %}{{ value }}{% endset %}{{ held }}
{{ value | upper }}{% autoescape false %}{{ value }}{% endautoescape %}{{ [value] | join(', ') }}"""


@given(st.text(alphabet="<>&'\" ab", max_size=8))
def test_a_template_writes_what_jinja_writes(value: str) -> None:
    ours = environment("en").from_string(SOURCE).render(value=value)
    jinja = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string(SOURCE).render(value=value)
    assert ours == jinja
