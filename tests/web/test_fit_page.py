"""/fit as a newcomer uses it: measurements posted, not linked; what is too large said with its limit."""

from __future__ import annotations

import json
import re
from html import unescape
from urllib.parse import parse_qs, urlparse

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from dpscale.web.security import MAX_QUERY
from tests.web.test_app import NNBSP, text_of

# Four records as dpscale measure writes them (~650 characters each): past a link's 2 048.
RECORDS = "\n".join(
    json.dumps({"devices": d, "throughput": t, "backend": "nccl", "host": "node-1", "notes": "x" * 560})
    for d, t in [(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)]
)


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_the_fit_form_posts_its_measurements(client: TestClient) -> None:
    page = client.get("/fit", params={"lang": "en"})
    form = re.search(r'<form id="calc"[^>]*>', page.text)
    assert form
    assert 'method="post"' in form.group(0)
    assert len(RECORDS) > MAX_QUERY
    r = client.post("/fit?lang=en", data={"lang": "en", "measurements": RECORDS, "at": "32", "model": "auto"})
    assert r.status_code == 200
    assert text_of(r.text, "measurements-error") == ""
    assert "Chosen model" in text_of(r.text, "chosen")
    assert "data:image/svg+xml;base64," in r.text  # its chart's URL would be too long: drawn inline


def test_the_live_update_posts_too(client: TestClient) -> None:
    r = client.post("/fragment/fit?lang=fr", data={"measurements": RECORDS, "at": "32", "model": "auto"})
    assert r.status_code == 200
    assert "Modèle retenu" in text_of(r.text, "chosen")


def test_short_inputs_stay_in_the_link(client: TestClient) -> None:
    r = client.post("/fit?lang=en", data={"lang": "en", "measurements": RECORDS, "at": "32; 64", "model": "usl"})
    href = unescape(re.search(r'class="lang-switch" href="([^"]+)"', r.text).group(1))  # type: ignore[union-attr]
    assert len(href) <= MAX_QUERY
    query = parse_qs(urlparse(href).query)
    assert query["model"] == ["usl"]
    assert query["lang"] == ["fr"]
    assert "measurements" not in query


@pytest.mark.parametrize(
    ("lang", "limit", "sends"),
    [("en", "1,048,576", "2,000,013"), ("fr", f"1{NNBSP}048{NNBSP}576", f"2{NNBSP}000{NNBSP}013")],
)
def test_a_body_too_large_is_said_in_a_page_with_the_limit(
    client: TestClient, lang: str, limit: str, sends: str
) -> None:
    body = b"measurements=" + b"1" * 2_000_000
    headers = {"accept": "text/html", "content-type": "application/x-www-form-urlencoded"}
    r = client.post(f"/fit?lang={lang}", content=body, headers=headers)
    assert r.status_code == 413
    assert r.headers["content-type"].startswith("text/html")
    said = unescape(text_of(r.text, "refusal"))
    assert limit in said
    assert sends in said
    assert "MiB" in said or "Mio" in said


def test_a_query_too_long_is_said_in_a_page_and_stays_json_for_the_api(client: TestClient) -> None:
    long = "/fit?lang=fr&measurements=" + "1" * 3000
    page = client.get(long, headers={"accept": "text/html"})
    assert page.status_code == 414
    assert f"2{NNBSP}048" in unescape(text_of(page.text, "refusal"))
    api = client.get(long)
    assert api.status_code == 414
    assert api.json()["errors"][0]["field"] == "query"
