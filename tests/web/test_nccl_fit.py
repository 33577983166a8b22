"""/predict after an nccl-tests log is read: its link carries nccl_fit (what it measured), not the log (issue 27)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app

LOG = (Path(__file__).resolve().parents[1] / "data" / "nccl" / "all_reduce_2nodes.txt").read_text(encoding="utf-8")
JOB = {"params": "8B", "per_device_throughput": "3", "batch": "4", "devices": "8,16,64,256"}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def table(html: str) -> str:
    return html.split('id="predictions"', 1)[1].split("</table>", 1)[0]


def switch_link(html: str) -> str:
    found = re.search(r'<a class="lang-switch" href="([^"]*)"', html)
    assert found
    return unescape(found.group(1))


def fit_in_field(html: str) -> str:
    found = re.search(r'<input id="nccl_fit" name="nccl_fit" value="([^"]*)"', html)
    assert found
    return unescape(found.group(1))


def test_the_language_link_carries_what_the_log_measured_and_gives_the_same_numbers(client: TestClient) -> None:
    english = client.post("/predict?lang=en", data={**JOB, "nccl_log": LOG})
    assert english.status_code == 200
    fit = fit_in_field(english.text)
    assert fit.startswith("n1_car_r16_h2_")
    link = switch_link(english.text)
    query = parse_qs(urlsplit(link).query)
    assert query["nccl_fit"] == [fit]
    assert "nccl_log" not in query  # too long for a link: left out, what it measured carried instead
    french = client.get("/predict" + link)  # the language link, followed without JavaScript
    assert french.status_code == 200
    logged_french = client.post("/predict?lang=fr", data={**JOB, "nccl_log": LOG})
    assert table(french.text) == table(logged_french.text)  # the log's numbers, not the presets'
    plain = client.post("/predict?lang=fr", data=JOB)
    assert table(plain.text) != table(logged_french.text)
    note = unescape(re.search(r'id="network-used"[^>]*>(.*?)</p>', french.text, re.S).group(1))  # type: ignore[union-attr]
    assert "d'après le journal nccl-tests (all_reduce), 16 rangs sur 2 hôtes" in note
    assert "nccl_fit" in note  # said: the result rests on the link's text, not on a log sent


def test_a_link_with_nccl_fit_says_so_and_one_with_the_log_does_not(client: TestClient) -> None:
    logged = client.post("/predict?lang=en", data={**JOB, "nccl_log": LOG})
    fit = fit_in_field(logged.text)
    linked = client.get("/predict", params={**JOB, "lang": "en", "nccl_fit": fit})
    said = unescape(re.search(r'id="network-used"[^>]*>(.*?)</p>', linked.text, re.S).group(1))  # type: ignore[union-attr]
    assert said.startswith("Network: from the nccl-tests log (all_reduce), 16 ranks on 2 hosts")
    assert "Read from the link (nccl_fit): the log's run it carries" in said
    assert "Read from the link" not in logged.text
    assert table(linked.text) == table(logged.text)
    bad = client.get("/predict", params={**JOB, "lang": "en", "nccl_fit": "n1_nope"})
    error = re.search(r'id="nccl_fit-error"\s*>(.*?)</p>', bad.text, re.S)
    assert error
    assert "the text /predict's link gives for an nccl-tests log" in unescape(error.group(1))


def test_the_live_update_hands_the_field_its_value(client: TestClient) -> None:
    fragment = client.post("/fragment/predict?lang=en", data={**JOB, "nccl_log": LOG})
    found = re.search(r'id="network-fit" data-field="nccl_fit" data-value="([^"]*)"', fragment.text)
    assert found
    assert unescape(found.group(1)).startswith("n1_car_r16_h2_")
    plain = client.post("/fragment/predict?lang=en", data=JOB)
    assert 'data-field="nccl_fit"' not in plain.text
