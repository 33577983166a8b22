"""/predict says where each term came from, what rests on an assumption, and what the measurements contradict."""

from __future__ import annotations

from html import unescape

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from tests.web.test_calculators import PREDICT_QUERY


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def sources_row(html: str) -> str:
    return html.split('id="sources"', 1)[1].split("</tr>", 1)[0]


def test_each_term_says_its_source_and_the_estimate_sits_inside_its_range(client: TestClient) -> None:
    r = client.get("/predict", params=PREDICT_QUERY)
    assert r.status_code == 200
    row = sources_row(r.text)
    assert 'data-source="measured">compute: measured</td>' in row  # one device's throughput, given
    assert row.count('data-source="assumed">assumed</td>') == 2  # the links and the variation
    assert 'id="prediction-warnings"' not in r.text  # nothing contradicts anything
    # the lever on the assumed variation says what it rests on
    assert "if the step-time variation is 2 %: balance the load: no step-time variation" in unescape(r.text)
    assert "Those on the links are as good as the links' assumed figures" in unescape(
        r.text.split('id="levers-note"')[1]
    )


def test_a_measurement_past_what_the_devices_allow_is_warned_of_on_the_page(client: TestClient) -> None:
    query = {**PREDICT_QUERY, "measured": "8:7600"}  # 1.3 % above d·v = 7 504: unlikely, not impossible
    r = client.get("/predict", params=query)
    assert r.status_code == 200
    warnings = unescape(r.text.split('id="prediction-warnings"', 1)[1].split("</ul>", 1)[0])
    assert "The measurement 8:7600 is above what 8 devices at the per-device throughput 938 give together" in warnings
    assert 'data-source="measured">compute: measured</td>' in sources_row(r.text)


def test_a_measurement_far_past_it_is_refused_beside_its_field(client: TestClient) -> None:
    r = client.get("/predict", params={**PREDICT_QUERY, "measured": "8:62000"})
    assert "expected at most what 8 devices at the per-device throughput 938 give together" in unescape(r.text)
    assert 'id="predictions"' not in r.text
