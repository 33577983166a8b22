"""The web calculator through Starlette's test client: pages, API, errors, headers."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app

NBSP, NNBSP = "\u00a0", "\u202f"


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def text_of(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</', html, flags=re.S)
    assert match, f"no #{element_id}"
    return re.sub(r"[ \t\n]+", " ", match.group(1)).strip()  # keeps no-break spaces


def test_home_is_french_with_the_seed_example(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-language"] == "fr"
    assert '<html lang="fr">' in r.text
    assert "<h1>Mise à l'échelle en parallélisme de données</h1>" in r.text
    assert text_of(r.text, "ideal_throughput") == f"128{NNBSP}000 échantillons/s"
    assert text_of(r.text, "actual_throughput") == f"115{NNBSP}200 échantillons/s"
    assert text_of(r.text, "speedup") == f"57,6{NBSP}×"
    assert text_of(r.text, "lost_throughput") == f"12{NNBSP}800 échantillons/s"
    assert 'value="2 000"' in r.text
    assert 'value="90 %"' in r.text
    assert "<math" in r.text


def test_accept_language_english(client: TestClient) -> None:
    r = client.get("/", headers={"accept-language": "en-GB,en;q=0.9"})
    assert r.headers["content-language"] == "en"
    assert text_of(r.text, "actual_throughput") == "115,200 samples/s"
    assert "Frequently asked questions" in r.text


def test_query_lang_wins_over_header(client: TestClient) -> None:
    r = client.get("/?lang=fr", headers={"accept-language": "en"})
    assert r.headers["content-language"] == "fr"


def test_other_languages_fall_back_to_english_and_none_to_french(client: TestClient) -> None:
    assert client.get("/", headers={"accept-language": "de-DE,de;q=0.9"}).headers["content-language"] == "en"
    assert client.get("/", headers={"accept-language": "es, de;q=0.5, fr;q=0.1"}).headers["content-language"] == "fr"
    assert client.get("/", headers={"accept-language": ""}).headers["content-language"] == "fr"


def test_inputs_in_the_query_give_results_and_a_worked_example(client: TestClient) -> None:
    r = client.get("/", params={"lang": "en", "devices": "8", "per_device_throughput": "1,000", "efficiency": "75%"})
    assert text_of(r.text, "actual_throughput") == "6,000 samples/s"
    assert "I = 8 × 1,000 = 8,000" in r.text
    assert "A = 8,000 × 0.75 = 6,000" in r.text
    assert "S = 8 × 0.75 = 6" in r.text


def test_empty_field_shows_the_placeholder_and_its_own_error(client: TestClient) -> None:
    r = client.get("/", params={"lang": "fr", "devices": "", "per_device_throughput": "2 000", "efficiency": "90 %"})
    assert "Saisissez une valeur pour afficher les résultats." in r.text
    assert text_of(r.text, "devices-error") == "Ce champ est vide."
    assert 'id="actual_throughput"' not in r.text


def test_invalid_field_names_what_is_accepted(client: TestClient) -> None:
    r = client.get("/", params={"lang": "en", "devices": "64", "per_device_throughput": "2000", "efficiency": "190"})
    error = text_of(r.text, "efficiency-error")
    assert "at most 100" in error
    assert "at most 1" in error
    assert 'aria-invalid="true"' in r.text


def test_language_switch_keeps_the_inputs(client: TestClient) -> None:
    r = client.get("/", params={"lang": "en", "devices": "16", "per_device_throughput": "500", "efficiency": "80%"})
    href = re.search(r'class="lang-switch" href="([^"]+)"', r.text)
    assert href
    query = parse_qs(urlparse(href.group(1).replace("&amp;", "&")).query)
    assert query["lang"] == ["fr"]
    assert query["devices"] == ["16"]
    assert query["efficiency"] == ["80%"]


def test_fragment_is_what_the_page_swaps_in(client: TestClient) -> None:
    r = client.get(
        "/fragment/scaling",
        params={"lang": "fr", "devices": "32", "per_device_throughput": "1 000", "efficiency": "80 %"},
    )
    assert text_of(r.text, "actual_throughput") == f"25{NNBSP}600 échantillons/s"  # the unit left out: the page's own
    assert 'id="example"' in r.text


def test_script_in_a_field_comes_back_as_text(client: TestClient) -> None:
    attack = "<script>alert(1)</script>"
    r = client.get("/", params={"devices": attack, "per_device_throughput": "1", "efficiency": "1", "unit": attack})
    assert attack not in r.text
    assert "&lt;script&gt;" in r.text


def test_security_headers(client: TestClient) -> None:
    for path in ("/", "/api/v1/scaling?devices=1&per_device_throughput=1&efficiency=1", "/static/dpscale.js"):
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert "unsafe-inline" not in csp
        # The API's JSON may load and be framed by nothing; a page, only its own files.
        assert ("default-src 'none'" if path.startswith("/api/") else "default-src 'self'") in csp
        assert "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        # frame-ancestors obsoletes X-Frame-Options (CSP Level 2); a page keeps it for older browsers, JSON has no UI
        assert r.headers.get("x-frame-options") == (None if path.startswith("/api/") else "DENY")


def test_page_has_no_inline_script_or_style(client: TestClient) -> None:
    html = client.get("/").text
    assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html) is None
    assert "<style" not in html
    assert " style=" not in html


def test_over_long_query_gets_414(client: TestClient) -> None:
    r = client.get("/?devices=" + "1" * 5000)
    assert r.status_code == 414
    assert r.json()["errors"][0]["field"] == "query"


def test_api_returns_the_stable_json(client: TestClient) -> None:
    r = client.get("/api/v1/scaling", params={"devices": 64, "per_device_throughput": 2000, "efficiency": 0.9})
    assert r.status_code == 200
    assert r.json() == {
        "devices": 64,
        "per_device_throughput": 2000.0,
        "efficiency": 0.9,
        "ideal_throughput": 128000.0,
        "actual_throughput": 115200.0,
        "speedup": 57.6,
        "lost_throughput": 12800.0,
        "unit": "samples/s",
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"devices": 0, "per_device_throughput": 2000, "efficiency": 0.9}, "devices"),
        ({"devices": "x", "per_device_throughput": 2000, "efficiency": 0.9}, "devices"),
        ({"devices": 1.5, "per_device_throughput": 2000, "efficiency": 0.9}, "devices"),
        ({"devices": 64, "per_device_throughput": "nan", "efficiency": 0.9}, "per_device_throughput"),
        ({"devices": 64, "per_device_throughput": "inf", "efficiency": 0.9}, "per_device_throughput"),
        ({"devices": 64, "per_device_throughput": -1, "efficiency": 0.9}, "per_device_throughput"),
        ({"devices": 64, "per_device_throughput": 2000, "efficiency": 90}, "efficiency"),
        ({"devices": 64, "per_device_throughput": 2000}, "efficiency"),
        ({"devices": 64, "per_device_throughput": 1e308, "efficiency": 1}, "per_device_throughput"),
    ],
)
def test_api_bad_input_is_422_naming_the_field(client: TestClient, params: dict[str, object], field: str) -> None:
    r = client.get("/api/v1/scaling", params=params)
    assert r.status_code == 422
    errors = r.json()["errors"]
    assert errors[0]["field"] == field
    assert errors[0]["message"]


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity"])
def test_api_non_finite_numbers_are_named_as_such(client: TestClient, text: str) -> None:
    r = client.get("/api/v1/scaling", params={"devices": 64, "per_device_throughput": text, "efficiency": 0.9})
    assert r.status_code == 422
    assert r.json()["errors"] == [
        {"field": "per_device_throughput", "message": f"got {text!r}; expected a finite number"}
    ]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_json_body_s_non_finite_literal_is_named_as_such(client: TestClient, literal: str) -> None:
    # Python's JSON reads NaN and Infinity, which JSON itself does not have: not a bound's message, but what it is.
    body = f'{{"points": [{{"devices": 1, "throughput": {literal}}}, {{"devices": 2, "throughput": 3}}]}}'
    r = client.post("/api/v1/fit", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    (error,) = r.json()["errors"]
    assert error["field"] == "points.0.throughput"
    assert error["message"].endswith("; expected a finite number")


def test_a_json_body_s_missing_key_is_said_without_the_body(client: TestClient) -> None:
    sent = {"devices": [8], "per_device_throughput": 938, "note": "x" * 40}
    r = client.post("/api/v1/predict", json={k: v for k, v in sent.items() if k != "note"})
    assert r.status_code == 422
    errors = {error["field"]: error["message"] for error in r.json()["errors"]}
    assert errors["batch"] == errors["params"] == "Field required: the key was not sent"
    assert all("938" not in message for message in errors.values())  # the body is not quoted for a key it lacks


def test_openapi_and_local_docs(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    assert "/api/v1/scaling" in spec["paths"]
    docs = client.get("/docs").text
    assert "/static/vendor/swagger-ui/swagger-ui-bundle.js" in docs
    assert "http" not in re.sub(r'href="/|src="/', "", docs).split("<body>")[0].replace("http-equiv", "")
    bundle = client.get("/static/vendor/swagger-ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert len(bundle.content) > 100_000


def test_chart_svg(client: TestClient) -> None:
    r = client.get(
        "/chart/scaling.svg",
        params={"lang": "fr", "devices": "64", "per_device_throughput": "2 000", "efficiency": "90 %"},
    )
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    assert "64 appareils" in r.text
    page = client.get("/").text
    assert "/chart/scaling.svg?" in page


def test_chart_svg_bad_input_is_422(client: TestClient) -> None:
    r = client.get("/chart/scaling.svg", params={"devices": "0", "per_device_throughput": "1", "efficiency": "1"})
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "devices"


def test_an_unknown_api_path_answers_in_the_errors_shape(client: TestClient) -> None:
    r = client.get("/api/v1/nope")
    assert r.status_code == 404
    assert r.json() == {"errors": [{"field": "request", "message": "no such path: '/api/v1/nope'"}]}
    wrong_method = client.post("/api/v1/scaling")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["errors"][0]["field"] == "request"


@pytest.mark.parametrize(("lang", "heading"), [("fr", "Page introuvable"), ("en", "Page not found")])
def test_a_browser_lost_on_an_unknown_page_gets_a_page_with_the_menu(
    client: TestClient, lang: str, heading: str
) -> None:
    r = client.get("/nosuch", params={"lang": lang}, headers={"accept": "text/html,*/*"})
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert f"<h1>{heading}</h1>" in r.text
    assert f'href="/predict?lang={lang}"' in r.text  # the menu of calculators


def test_an_api_error_names_its_field_once(client: TestClient) -> None:
    r = client.get("/api/v1/predict", params={"devices": [8], "per_device_throughput": 9, "batch": 8, "params": 1e6})
    error = r.json()["errors"][0]
    assert error["field"] == "intra_bandwidth"
    assert not error["message"].startswith("intra_bandwidth")


def test_a_parameter_an_endpoint_does_not_take_is_refused_by_name(client: TestClient) -> None:
    # deadline for deadline_seconds: refused, not silently ignored (the answer would be to another question)
    query = {"devices": 64, "per_device_throughput": 100, "efficiency": 0.9, "work": 1e8, "deadline": 3600}
    r = client.get("/api/v1/plan", params=query)
    assert r.status_code == 422
    error = r.json()["errors"][0]
    assert error["field"] == "deadline"
    assert "deadline_seconds" in error["message"]


@pytest.mark.parametrize(
    ("body", "kind", "status", "said"),
    [
        (b"not json", "application/json", 400, "the body is not JSON: Expecting value at character 0"),
        (b'{"points": [1,', "application/json", 400, "the body is not JSON: Expecting value at character 14"),
        (b"{}", "text/plain", 422, "expected a JSON object, sent with Content-Type: application/json"),
        (b"", "application/json", 422, "the body is empty; expected a JSON object"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_told_what_to_send(
    client: TestClient, body: bytes, kind: str, status: int, said: str
) -> None:
    for path in ("/api/v1/fit", "/api/v1/predict"):
        r = client.post(path, content=body, headers={"content-type": kind})
        assert r.status_code == status, path
        [error] = r.json()["errors"]
        assert error["field"] == "request"
        assert said in error["message"], error


def test_a_parameter_that_takes_one_value_given_twice_is_refused(client: TestClient) -> None:
    """The answer would be to one of them, silently: refused by name, both values quoted; a list repeats its key."""
    r = client.get("/api/v1/scaling?devices=64&devices=32&per_device_throughput=2000&efficiency=0.9")
    assert r.status_code == 422
    assert r.json()["errors"] == [
        {"field": "devices", "message": "got '64 and 32'; expected one value (the parameter given once)"}
    ]
    listed = "/api/v1/predict?devices=8&devices=64&per_device_throughput=938&batch=256&params=1e8&intra=nvlink3"
    answer = client.get(listed)
    assert answer.status_code == 200
    assert [row["devices"] for row in answer.json()["predictions"]] == [8, 64]


def test_predicts_body_reads_numbers_sent_as_text_as_its_query_does(client: TestClient) -> None:
    """Only the fit's body holds JSON's types as written (its points); predict's reads "32" as its query reads it."""
    body = {"devices": [64], "per_device_throughput": 100, "batch": "32", "params": 1e9, "intra": "nvlink3"}
    assert client.post("/api/v1/predict", json=body).status_code == 200
    points = [{"devices": 1, "throughput": 367.29}, {"devices": 4, "throughput": 1449.48}]
    assert client.post("/api/v1/fit", json={"points": points, "models": []}).status_code == 200  # every model
