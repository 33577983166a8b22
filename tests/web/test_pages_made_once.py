"""What a request need not do again: the routes are made with the application, the translations no request
changes are compiled into the templates, and a query string is written as urllib writes it."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from babel.messages.pofile import read_po
from fastapi.routing import APIRoute
from markupsafe import Markup
from starlette.routing import Route

from dpscale.i18n import LOCALE_DIR, Lang, translation
from dpscale.web import api
from dpscale.web.app import create_app
from dpscale.web.export import query_string
from dpscale.web.templating import environment


def test_the_routes_are_the_applications_own_and_made_with_it() -> None:
    first, second = create_app(), create_app()
    paths = {getattr(route, "path", None): route for route in first.router.routes}
    assert isinstance(paths["/api/v1/scaling"], APIRoute)  # matched once, not through an included router
    assert isinstance(paths["/"], Route)
    assert (
        paths["/api/v1/scaling"] is not {getattr(r, "path", None): r for r in second.router.routes}["/api/v1/scaling"]
    )
    assert not hasattr(api, "router")  # nothing routed at import


def test_the_api_is_tried_first_and_the_schema_last() -> None:
    """The router tries each route in turn: the API's routes come first (a page's GET is answered in front of the
    router, tests/web/test_page_front.py), then the pages' other routes; FastAPI's own /openapi.json, asked once
    by a docs page, is the last route with a path (the explain pages' router is included after)."""
    routes = create_app().router.routes
    paths = [getattr(route, "path", None) for route in routes]
    assert all(path.startswith("/api/v1/") for path in paths[: paths.index("/")])
    assert paths.index("/api/v1/scaling") == 0
    assert paths.index("/api/v1/fit") < paths.index("/") < paths.index("/fragment/scaling") < paths.index("/static")
    assert [path for path in paths if path is not None][-1] == "/openapi.json"  # the explain router included after
    assert len(paths) == len(set(map(id, routes)))  # each route once


def test_a_literal_translation_is_compiled_into_the_template() -> None:
    env = environment("fr")
    source = "<p>{{ _('Devices') }}</p><p>{% trans %}Calculate{% endtrans %}</p>"
    code = env.compile(source, raw=True)
    assert "Appareils" in code
    assert "'Devices'" not in code
    assert env.from_string(source).render() == "<p>Appareils</p><p>Calculer</p>"


@pytest.mark.parametrize(
    "source",
    [
        "{{ _('Devices', n=count) }}",  # a variable: translated as the page renders
        "{% for _ in [1] %}{{ _ }}{% endfor %}{{ _('Devices') }}",  # the name given another meaning
        "{% macro m(gettext) %}{{ gettext('Devices') }}{% endmacro %}{{ m(str) }}",
    ],
)
def test_a_translation_that_a_request_may_change_is_left_to_the_request(source: str) -> None:
    assert "Appareils" not in environment("fr").compile(source, raw=True)


def test_a_literal_variable_is_escaped_as_the_request_would() -> None:
    env = environment("en")
    folded = env.from_string(
        "{{ _('The command line does not take %(names)s: the API call below does.', names='<b>') }}"
    )
    assert "&lt;b&gt;" in folded.render()


@pytest.mark.parametrize(
    "values",
    [
        {"devices": "64", "per_device_throughput": "2000", "efficiency": "90 %", "lang": "fr"},
        {"unit": "échantillons/s", "x": "a+b&c=d", "y": "", "z": "~._-", "w": "100%", "v": "1 000\u00a0000"},
        {"log": "#  size count\n  8 2 float sum -1", "q": "<script>", "": "é", "tab": "\t"},
    ],
)
def test_a_query_string_is_written_as_urllib_writes_it(values: dict[str, str]) -> None:
    assert query_string(values) == urlencode(values)
    assert query_string(list(values.items())) == urlencode(list(values.items()))


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_a_message_with_variables_is_escaped_as_markup_escapes_it(lang: Lang) -> None:
    with (LOCALE_DIR / "fr" / "LC_MESSAGES" / "dpscale.po").open("rb") as po:
        messages = [m.id for m in read_po(po) if isinstance(m.id, str) and "%(" in m.id]
    assert len(messages) > 50
    gettext = environment(lang).globals["_"]
    catalog = translation(lang)
    typed = "<b>\"x\" & 'y'</b> 100%"
    for message in messages:
        names = set(re.findall(r"%\((\w+)\)s", message))
        variables = {name: typed if i % 2 else Markup("<i>kept</i>") for i, name in enumerate(sorted(names))}
        expected = Markup(catalog.gettext(message)) % variables  # noqa: S704  # our own messages
        assert gettext(message, **variables) == expected, message
