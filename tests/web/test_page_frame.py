"""A page's frame is rendered once per language, as the application is made; each request renders its own fields
and results."""

from __future__ import annotations

from html import unescape

import pytest
from fastapi.testclient import TestClient
from jinja2 import Template
from jinja2.runtime import Macro

from dpscale.web import pages
from dpscale.web.app import create_app
from tests.web.test_app import text_of
from tests.web.test_fields import query


def test_the_frame_is_rendered_once_per_language_and_the_results_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[str | None] = []
    original = Template.render

    def counted(self: Template, *args: object, **kwargs: object) -> str:
        rendered.append(self.name)
        return original(self, *args, **kwargs)

    called: list[str] = []
    macro_text = pages.macro_text  # how the route calls each part's macro

    def counted_macro(macro: Macro, /, *args: object) -> str:
        called.append(macro.name)
        return macro_text(macro, *args)

    monkeypatch.setattr(Template, "render", counted)
    monkeypatch.setattr(pages, "macro_text", counted_macro)
    client = TestClient(create_app())
    actual = set()
    for lang, devices in [("fr", "8"), ("fr", "16"), ("fr", "32"), ("en", "8"), ("en", "16")]:
        r = client.get("/", params=query("scaling", lang, devices=devices))
        actual.add(text_of(r.text, "actual_throughput"))
    assert rendered.count("scaling.html") == 2  # French and English, once each, by create_app()
    # Every request renders its fields, results and example: no cache by query string.
    assert (called.count("inputs"), called.count("results"), called.count("example")) == (5, 5, 5)
    assert len(actual) == 5


def test_a_typed_marker_cannot_cut_the_page() -> None:
    client = TestClient(create_app())
    typed = "<!--dpscale:cut--><!--dpscale:slot:results-->"
    r = client.get("/", params=query("scaling", "en", unit=typed))
    assert r.status_code == 200
    assert typed not in r.text
    assert unescape(typed) in unescape(r.text)  # shown, escaped, in its field
    assert r.text.count('id="results"') == 1
    assert "<h1>Data-parallel scaling</h1>" in r.text
    assert "<math" in r.text
    assert r.text.rstrip().endswith("</html>")
