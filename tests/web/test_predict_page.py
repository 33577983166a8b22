"""/predict's network fields as a newcomer uses them: a typed bandwidth, French units, a missing network."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from tests.web.test_app import text_of
from tests.web.test_fields import query


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def table(html: str) -> str:
    return html.split('id="predictions"', 1)[1].split("</table>", 1)[0]


def test_a_typed_bandwidth_wins_over_the_preset_and_the_page_says_so(client: TestClient) -> None:
    typed = client.get("/predict", params=query("predict", "en", inter_bandwidth="10 Gb/s"))
    alone = client.get("/predict", params=query("predict", "en", inter="", inter_bandwidth="10 Gb/s"))
    assert text_of(typed.text, "inter_bandwidth-error") == ""
    assert table(typed.text) == table(alone.text)
    assert table(typed.text) != table(client.get("/predict", params=query("predict", "en")).text)
    assert "instead of the preset" in text_of(typed.text, "inter_bandwidth-hint")
    fr = client.get("/predict", params=query("predict", "fr"))
    assert "remplace le préréglage" in unescape(text_of(fr.text, "inter_bandwidth-hint"))


def test_an_error_echoes_the_bandwidth_as_typed(client: TestClient) -> None:
    r = client.get("/predict", params=query("predict", "en", inter_bandwidth="0.1 Mb/s"))
    error = unescape(text_of(r.text, "inter_bandwidth-error"))
    assert error.startswith("Got “0.1 Mb/s”")
    assert "12500.0" not in error


@pytest.mark.parametrize(
    ("field", "french", "same"),
    [
        ("inter_bandwidth", "12,5 Go/s", "100Gb/s"),
        ("inter_bandwidth", "100 Gbit/s", "12,5GB/s"),
        ("intra_latency", "5 µs", "5us"),
        ("bucket_bytes", "50 Mio", "50MiB"),
    ],
)
def test_french_unit_spellings_on_the_french_page(client: TestClient, field: str, french: str, same: str) -> None:
    typed = client.get("/predict", params=query("predict", "fr", **{field: french}))
    spelled = client.get("/predict", params=query("predict", "fr", **{field: same}))
    assert text_of(typed.text, f"{field}-error") == ""
    assert table(typed.text) == table(spelled.text)


def test_no_network_beyond_one_node_is_warned(client: TestClient) -> None:
    r = client.get("/predict", params=query("predict", "en", inter="", devices="8, 256"))
    assert "256 devices need more than one node of 8" in text_of(r.text, "no-network")
    one_node = client.get("/predict", params=query("predict", "en", inter="", devices="2, 8"))
    assert 'id="no-network"' not in one_node.text
    networked = client.get("/predict", params=query("predict", "en", devices="8, 256"))
    assert 'id="no-network"' not in networked.text


def test_the_page_says_where_its_interval_comes_from_and_what_it_calibrated(client: TestClient) -> None:
    plain = client.get("/predict", params={"lang": "en"})
    notes = unescape(plain.text.split('id="prediction-notes">', 1)[1].split("</ul>", 1)[0])
    assert "90% interval, from what the model cannot know" in notes
    assert "Calibrated" not in notes
    measured = client.get("/predict", params={"lang": "en", "measured": "8:7000"})
    notes = unescape(measured.text.split('id="prediction-notes">', 1)[1].split("</ul>", 1)[0])
    assert "Calibrated on 1 measurement: step-time variation" in notes


def test_levers_that_fit_come_first_and_the_heading_says_so(client: TestClient) -> None:
    r = client.get("/predict", params={"lang": "en", "params": "7B", "device_memory": "80GiB"})
    assert "those that fit first, each group best first</caption>" in r.text
    fits = re.findall(r"<td>(yes|no)</td></tr>", r.text.split('id="levers"', 1)[1])
    assert fits == sorted(fits, key=lambda f: f != "yes")
