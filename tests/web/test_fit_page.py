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


def fit_page(client: TestClient, lang: str, measurements: str, at: str = "32", model: str = "auto") -> str:
    r = client.post(f"/fit?lang={lang}", data={"measurements": measurements, "at": at, "model": model})
    assert r.status_code == 200
    return r.text


def test_parameters_by_their_symbols_and_r2_not_rounded_to_one(client: TestClient) -> None:
    html = fit_page(client, "en", "devices,throughput\n1,367.29\n4,1449.48\n8,2887.65\n16,5716.79")
    models = unescape(html.split('id="models"', 1)[1].split("</table>", 1)[0])
    assert "λ = " in models
    assert "σ = " in models
    assert "lambda" not in models
    assert "sigma" not in models
    cells = re.findall(r"<td>([^<]*)</td><td>[^<]*</td></tr>", models)  # R², then AICc
    assert cells
    assert "1" not in cells  # 0.99998, not a rounded 1 that reads as a perfect fit


def test_the_star_of_an_extrapolated_size_is_explained(client: TestClient) -> None:
    html = fit_page(client, "fr", "devices,throughput\n1,100\n2,190\n4,350\n8,600", at="4; 32")
    assert "32 *" in html
    assert "* Au-delà de la plus grande taille mesurée (8 appareils)" in unescape(text_of(html, "extrapolated"))
    measured = fit_page(client, "fr", "devices,throughput\n1,100\n2,190\n4,350\n8,600", at="4")
    assert 'id="extrapolated"' not in measured


@pytest.mark.parametrize(
    ("lang", "pasted"),
    [
        ("en", "1,367.29\n4,1449.48\n8,2887.65\n16,5716.79"),
        ("fr", "1;367,29\n4;1 449,48\n8;2 887,65\n16;5 716,79"),
        ("fr", "1\t367,29\n4\t1449,48\n8\t2887,65\n16\t5716,79"),
        ("fr", "appareils;débit\n1;367,29\n4;1449,48\n8;2887,65\n16;5716,79"),
    ],
)
def test_two_columns_without_a_header_or_with_a_french_one(client: TestClient, lang: str, pasted: str) -> None:
    html = fit_page(client, lang, pasted)
    assert text_of(html, "measurements-error") == ""
    assert 'id="chosen"' in html


def test_an_interval_never_reaches_below_zero_throughput(client: TestClient) -> None:
    html = fit_page(client, "en", "devices,throughput\n1,100\n2,210\n4,450", at="8, 64, 512", model="amdahl")
    table = html.split('id="fit-predictions"', 1)[1].split("</table>", 1)[0]
    intervals = re.findall(r"<td>([-\d,.]+) – ([-\d,.]+)</td>", table)
    assert intervals
    assert all(not low.startswith("-") for low, _ in intervals)


def test_the_chosen_curve_is_drawn_over_the_others() -> None:
    from dpscale import fit
    from dpscale.charts import fit_chart
    from dpscale.fit import read_points

    points = read_points("x", text="devices,throughput\n1,100\n2,190\n4,350\n8,600")
    result = fit.fit(points, at=[32])
    spec = fit_chart(result, "en").to_dict()
    lines = [layer for layer in spec["layer"] if layer["mark"]["type"] == "line"]
    assert {v["model"] for v in lines[-1]["data"]["values"]} == {f"{result.chosen} ← chosen"}
    assert lines[-1]["mark"]["strokeWidth"] > lines[0]["mark"]["strokeWidth"]


@pytest.mark.parametrize(
    "pasted", ["devices;throughput\n1;367,29\n4;1 449,48\n8;2 887,65\n16;5 716,79", "1;367,29\n4;1449,48\n8;2887,65"]
)
def test_french_measurements_survive_the_language_switch(client: TestClient, pasted: str) -> None:
    r = client.post(
        "/fit?lang=en", data={"lang": "en", "from": "fr", "measurements": pasted, "at": "32", "model": "auto"}
    )
    assert text_of(r.text, "measurements-error") == ""
    assert "Chosen model" in text_of(r.text, "chosen")
    assert "367.29" in r.text  # written again as both languages read it


def test_json_lines_are_kept_as_typed_through_the_switch(client: TestClient) -> None:
    r = client.post("/fit?lang=fr", data={"lang": "fr", "from": "en", "measurements": RECORDS, "at": "32"})
    assert text_of(r.text, "measurements-error") == ""
    assert unescape(r.text).count('"backend": "nccl"') == 4


@pytest.mark.parametrize(("lang", "constant"), [("en", "constant efficiency"), ("fr", "efficacité constante")])
def test_the_menu_of_models_is_the_catalogue(client: TestClient, lang: str, constant: str) -> None:
    """Every law of dpscale.fit.laws, and all of them ranked, as the page's menu: a new law shows by itself."""
    from dpscale.fit.laws import MODELS

    page = client.get("/fit", params={"lang": lang}).text
    menu = page.split('<select id="model"', 1)[1].split("</select>", 1)[0]
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', menu)
    assert [value for value, _ in options] == ["auto", *MODELS]
    assert dict(options)["constant"] == constant
    assert dict(options)["amdahl"] == "Amdahl"


def test_a_model_named_in_capitals_in_a_link_is_the_option_selected(client: TestClient) -> None:
    page = client.get("/fit", params={"lang": "en", "model": "AMDAHL"}).text
    menu = page.split('<select id="model"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r'<option value="([^"]*)" selected', menu) == ["amdahl"]


def test_the_fit_chart_is_log_log_and_its_band_stays_above_its_floor() -> None:
    # Perfect scaling is a straight line on log-log axes; a band cut at 0 (a USL past its peak) is drawn to the floor.
    from dpscale import fit
    from dpscale.charts import fit_chart

    result = fit.fit([(1, 100), (2, 150), (4, 170), (8, 160)], at=[8, 1024], models=["usl"])
    assert any(p.floored for p in result.best.predictions)
    spec = fit_chart(result, "en").to_dict()
    floor = 100 / 10
    for layer in spec["layer"]:
        encoding = layer["encoding"]
        assert encoding["x"]["scale"]["type"] == "log"
        assert encoding["y"]["scale"]["type"] == "log"
        for row in layer["data"]["values"]:
            assert all(row[key] >= floor for key in ("low", "high", "throughput") if key in row)
    band = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "area")
    assert min(row["low"] for row in band["data"]["values"]) == floor
