"""How a page's fields read what a user types: units shown beside a field, numbers in each language."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from dpscale.web.forms import CALCULATORS
from tests.web.test_app import text_of


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def query(name: str, lang: str, **change: str) -> dict[str, Any]:
    """The page's own example in ``lang``, with ``change`` typed over it."""
    values = {k: f.example(lang) for k, f in CALCULATORS[name].fields.items()}
    return {**values, **change, "lang": lang}


@pytest.mark.parametrize(
    ("name", "field", "typed", "shown_id", "shown"),
    [
        ("scaling", "efficiency", "85", "actual_throughput", "108,800 samples/s"),
        ("scaling", "efficiency", "100", "actual_throughput", "128,000 samples/s"),
        ("scaling", "efficiency", "0.85", "actual_throughput", "108,800 samples/s"),  # at most 1: a fraction, as said
        ("plan", "efficiency", "85", "requested.actual_throughput", "108,800 samples/s"),
    ],
)
def test_a_bare_number_in_a_percent_field_is_in_percent(
    client: TestClient, name: str, field: str, typed: str, shown_id: str, shown: str
) -> None:
    path = CALCULATORS[name].path
    r = client.get(path, params=query(name, "en", **{field: typed}))
    assert text_of(r.text, f"{field}-error") == ""
    assert text_of(r.text, shown_id) == shown


def predictions(html: str) -> str:
    assert 'id="predictions"' in html
    return html.split('id="predictions"', 1)[1].split("</table>", 1)[0]


@pytest.mark.parametrize(("lang", "typed", "written"), [("en", "3", "3%"), ("en", "0.5", "0.5%"), ("fr", "1", "1 %")])
def test_predict_variation_reads_every_bare_number_in_percent(
    client: TestClient, lang: str, typed: str, written: str
) -> None:
    # A variation of a few per cent or less is the usual one: 0.5 is 0.5 %, not a fraction (50 %).
    bare = client.get("/predict", params=query("predict", lang, jitter=typed))
    with_sign = client.get("/predict", params=query("predict", lang, jitter=written))
    assert text_of(bare.text, "jitter-error") == ""
    assert predictions(bare.text) == predictions(with_sign.text)


@pytest.mark.parametrize("path", ["/", "/plan", "/predict"])
def test_every_percent_field_says_so_beside_it(client: TestClient, path: str) -> None:
    for lang, fraction in (("en", "0.85"), ("fr", "0,85")):
        r = client.get(path, params={"lang": lang})
        ids = ["efficiency"] if path != "/predict" else ["jitter", "intra_efficiency", "inter_efficiency"]
        for field in ids:
            hint = unescape(text_of(r.text, f"{field}-hint"))
            if field == "jitter":  # a variation: every bare number in %
                assert ("0.5" if lang == "en" else "0,5") in hint, (path, lang, field)
                continue
            assert "85" in hint, (path, lang, field)
            assert fraction in hint, (path, lang, field)
            label = unescape(r.text.split(f'for="{field}">', 1)[1].split("</label>", 1)[0])
            assert "%" in label


def test_a_wrong_value_is_not_called_an_empty_field(client: TestClient) -> None:
    wrong = client.get("/", params=query("scaling", "en", efficiency="185"))
    assert "expected a percentage" in unescape(text_of(wrong.text, "efficiency-error"))
    assert "Enter a value" not in wrong.text
    assert "Correct the value marked above" in wrong.text
    empty = client.get("/", params=query("scaling", "fr", efficiency=""))
    assert "Saisissez une valeur pour afficher les résultats." in empty.text


@pytest.mark.parametrize(
    ("name", "field", "typed", "read", "other"),
    [
        ("scaling", "per_device_throughput", "2,500", "2,5", "2\u202f500"),
        ("predict", "params", "25,600M", "25,6M", "25\u202f600M"),
        ("predict", "inter_bandwidth", "1,500 Go/s", "1,5 Go/s", "1\u202f500 Go/s"),
        ("plan", "work", "1 281,167", "1\u202f281,167", "1\u202f281\u202f167"),
    ],
)
def test_a_comma_before_three_digits_on_the_french_page_shows_both_readings(
    client: TestClient, name: str, field: str, typed: str, read: str, other: str
) -> None:
    r = client.get(CALCULATORS[name].path, params=query(name, "fr", **{field: typed}))
    assert text_of(r.text, f"{field}-error") == ""
    said = unescape(text_of(r.text, f"{field}-reading"))
    assert said == f"Lu {read} ; pour {other}, écrivez {other}, sans virgule."
    fragment = client.get(f"/fragment/{name}", params=query(name, "fr", **{field: typed}))
    assert unescape(text_of(fragment.text, f"{field}-reading")) == said


@pytest.mark.parametrize(("lang", "typed"), [("fr", "2,5"), ("fr", "2 500"), ("fr", "0,250"), ("en", "2,500")])
def test_no_second_reading_where_there_is_none(client: TestClient, lang: str, typed: str) -> None:
    r = client.get("/", params=query("scaling", lang, per_device_throughput=typed))
    assert text_of(r.text, "per_device_throughput-reading") == ""
    assert 'id="per_device_throughput-reading" hidden' in r.text


def test_a_list_of_counts_keeps_its_commas(client: TestClient) -> None:
    r = client.get("/predict", params=query("predict", "fr", devices="8,128,256"))
    assert 'id="devices-reading" hidden' in r.text
