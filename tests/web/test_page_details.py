"""The smaller things a newcomer meets on the pages (issue 15, point 10)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from tests.web.test_app import text_of
from tests.web.test_fields import query

client = TestClient(create_app())


def test_predict_says_what_its_example_is() -> None:
    assert "ResNet-50" in text_of(client.get("/predict", params={"lang": "en"}).text, "defaults")
    assert "ResNet-50" in unescape(text_of(client.get("/predict", params={"lang": "fr"}).text, "defaults"))


def test_predict_chart_claims_no_measurement_and_names_its_unit() -> None:
    from dpscale.charts import prediction_chart
    from dpscale.web.forms import CALCULATORS, read_form

    form = read_form(CALCULATORS["predict"], "en", {})
    spec = str(prediction_chart(form.result.prediction, "en").to_dict())
    assert "measured" not in spec
    assert "Throughput (samples/s)" in spec


def test_a_partial_link_keeps_the_other_fields_as_shown() -> None:
    r = client.get("/", params={"lang": "en", "devices": "128"})
    assert text_of(r.text, "actual_throughput") == "230,400 samples/s"  # 128 × 2,000 × 90 %
    switched = client.get("/", params={"lang": "fr", "from": "en", "devices": "128"})
    assert text_of(switched.text, "actual_throughput") == "230\u202f400 échantillons/s"


def test_skip_link_current_page_and_a_nav_that_keeps_each_link_whole() -> None:
    r = client.get("/plan", params={"lang": "fr"})
    assert 'class="skip" href="#content"' in r.text
    assert '<main id="content"' in r.text
    assert 'aria-current="page">Durée et coût' in r.text
    css = client.get("/static/dpscale.css").text
    assert ".top nav a { white-space: nowrap; }" in css  # at least from 40rem
    assert 'nav a[aria-current="page"]' in css


def test_docs_has_a_way_back_and_says_something_without_javascript() -> None:
    r = client.get("/docs")
    assert 'href="/?lang=en"' in r.text
    assert "<noscript>" in r.text
    assert 'href="/openapi.json"' in r.text


def test_favicon_ico_is_served() -> None:
    r = client.get("/favicon.ico")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")


def test_errors_are_sentences_with_the_language_quotes() -> None:
    en = client.get("/", params=query("scaling", "en", devices="lots"))
    assert text_of(en.text, "devices-error").startswith("Got “lots”; expected")
    fr = client.get("/", params=query("scaling", "fr", devices="beaucoup"))
    assert unescape(text_of(fr.text, "devices-error")).startswith("Reçu «\u00a0beaucoup\u00a0» ; attendu")
    zero = client.get("/", params=query("scaling", "fr", devices="0"))
    assert (
        unescape(text_of(zero.text, "devices-error")) == "Reçu «\u00a00\u00a0» ; attendu un nombre entier d'au moins 1"
    )


def test_the_plan_example_writes_3600_in_the_page_language() -> None:
    en = client.get("/plan", params={"lang": "en"})
    assert "/ 3,600 =" in en.text
    fr = client.get("/plan", params={"lang": "fr"})
    assert "/ 3\u202f600 =" in fr.text


def test_the_french_faq_heading_is_the_seed_s() -> None:
    assert "<h3>Questions fréquentes (FAQ)</h3>" in client.get("/batch", params={"lang": "fr"}).text


def test_one_chunk_is_singular_and_a_model_name_takes_no_bare_de() -> None:
    fr = client.get("/pipeline", params={"lang": "fr"}).text
    assert "1 morceau par appareil" in fr
    assert "morceau(x)" not in fr
    assert "1 chunk per device" in client.get("/pipeline", params={"lang": "en"}).text
    fit = unescape(client.get("/fit", params={"lang": "fr"}).text)
    assert "du modèle " in fit
    assert not re.search(r"\bde (amdahl|gustafson|usl|comm|constant)\b", fit)


def test_charts_come_in_a_phone_width_and_refuse_an_unbounded_one() -> None:
    wide = client.get("/chart/scaling.svg", params={"lang": "en"}).text
    narrow = client.get("/chart/scaling.svg", params={"lang": "en", "width": "290"}).text
    width = re.compile(r'<svg[^>]*width="([\d.]+)"')
    assert float(width.search(narrow).group(1)) < float(width.search(wide).group(1)) - 200  # type: ignore[union-attr]
    assert client.get("/chart/scaling.svg", params={"width": "100000"}).status_code == 422
    page = client.get("/", params={"lang": "en"}).text
    assert '<source media="(max-width: 40rem)" srcset="/chart/scaling.svg?' in page
