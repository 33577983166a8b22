"""The scale page's fields are drawn from its calculator's definition, as every other page's: an input added to
the definition appears on the page with no template edit, and one drawn beside another is on that one's line."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request

from dpscale.calculators.scale import SCALING
from dpscale.errors import N_
from dpscale.i18n import Lang
from dpscale.inputs import Definition, Input, Page
from dpscale.web import pages
from dpscale.web.forms import CALCULATORS, Calculator, fields_of


def _with(*added: Input) -> Calculator:
    """The scale calculator, its definition with ``added`` inputs."""
    calc = CALCULATORS["scaling"]
    definition = Definition(SCALING.name, SCALING.inputs + added, SCALING.build, SCALING.groups)
    return dataclasses.replace(calc, definition=definition, fields=fields_of(definition))


def _inputs(calc: Calculator, lang: Lang, query: str = "") -> str:
    request = Request({"type": "http", "method": "GET", "path": "/", "query_string": query.encode(), "headers": []})
    form = pages._asked(calc, request, None).form
    return str(pages.speeches()[lang].parts["scaling"].inputs(form, calc))


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_an_input_added_to_the_definition_is_a_field_of_the_scale_page(lang: Lang) -> None:
    added = Input("warmup", "count", "Steps before timing.", page=Page(label=N_("Devices"), group="cluster"))
    text = _inputs(_with(added), lang, f"lang={lang}&warmup=12")
    assert re.search(r'<label for="warmup">[^<]+</label>\s*<input id="warmup" name="warmup" value="12"', text)
    assert 'aria-describedby="warmup-error warmup-reading"' in text
    assert 'id="warmup-error"' in text
    assert 'name="warmup"' not in _inputs(CALCULATORS["scaling"], lang, f"lang={lang}")


def test_an_input_drawn_beside_another_is_on_its_line() -> None:
    # A second short field beside the devices: on their line, labelled by its small label, described by it.
    added = Input("node", "text", "A node's name.", page=Page(label=N_("unit"), group="cluster", beside="devices"))
    text = _inputs(_with(added), "en", "lang=en&node=a%3Cb")
    line = text.split('<label for="devices">', 1)[1].split('<div class="field">', 1)[0]
    assert '<span class="with-unit">' in line
    assert 'aria-describedby="devices-error devices-reading node-label"' in line
    assert '<label for="node" id="node-label" class="unit-label">unit</label>' in line
    assert 'value="a&lt;b"' in line
    assert 'id="node-error"' in line
    assert 'id="node-reading"' not in line  # a text has one reading


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_scale_page_draws_what_its_definition_says(lang: Lang) -> None:
    text = _inputs(CALCULATORS["scaling"], lang, f"lang={lang}")
    for item in SCALING.on("page"):
        assert f'<input id="{item.name}" name="{item.name}"' in text
    # The unit beside the throughput, on its line; the efficiency in % (its kind), with the hint that says so.
    line = text.split('<label for="per_device_throughput">', 1)[1].split("</span>", 1)[0]
    assert '<span class="with-unit">' in line
    assert '<input id="unit"' in line
    assert 'aria-describedby="efficiency-error efficiency-reading efficiency-hint"' in text
    assert re.search(r'<label for="efficiency">[^<]*\(%\)</label>', text)


class _Form(NamedTuple):
    values: dict[str, str]
    errors: dict[str, str]
    readings: dict[str, tuple[str, str]]


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("name", list(CALCULATORS))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_the_fields_drawn_once_are_those_drawn_whole(name: str, lang: Lang, data: Any) -> None:
    # defined_fields writes a request's values, messages, marks of a wrong field and options selected into the
    # fields drawn once per language: the same text as _fields.html's defined draws whole for that form.
    calc = CALCULATORS[name]
    typed = st.text(alphabet="<>&'\" a2,", max_size=6)
    values = {}
    for field, each in calc.fields.items():
        options = [value for value, _, _ in each.kind.options(each.spec)]
        values[field] = data.draw(st.sampled_from(options) | typed if options else typed)
    names = st.sampled_from(list(values))
    errors = data.draw(st.dictionaries(names, st.sampled_from(["empty", "Got “<b>”; expected a number & more"])))
    readings = data.draw(st.dictionaries(names, st.just(("2,5", "2\u202f500"))))
    env = pages.page_environment(lang)
    whole = env.get_template("_fields.html").module.defined  # type: ignore[attr-defined]
    for form in (_Form(values, {}, {}), _Form(values, errors, readings)):
        assert env.globals["defined_fields"](form, calc) == whole(form, calc)
