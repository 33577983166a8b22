"""The sibling pages and their API endpoints through the test client."""

from __future__ import annotations

import html
import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from dpscale.calculators.fit import EXAMPLE as FIT_EXAMPLE
from dpscale.web.app import create_app
from tests.web.test_app import NBSP, NNBSP, text_of


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(
    ("path", "fr_title", "en_title"),
    [
        ("/batch", "Taille de lot effective", "Effective batch size"),
        ("/pipeline", "Bulle du parallélisme de pipeline", "Pipeline bubble"),
        ("/plan", "Durée et coût d'un entraînement", "Time and cost of a training run"),
    ],
)
def test_pages_in_both_languages_with_details(client: TestClient, path: str, fr_title: str, en_title: str) -> None:
    fr = client.get(path)
    en = client.get(path, params={"lang": "en"})
    assert fr.status_code == en.status_code == 200
    assert f"<h1>{fr_title}</h1>" in fr.text.replace("&#39;", "'")
    assert f"<h1>{en_title}</h1>" in en.text
    for page in (fr.text, en.text):
        assert "<math" in page
        assert page.count("<details") == 3
        assert 'aria-current="page"' in page
    assert "Questions fréquentes" in fr.text
    assert "Frequently asked questions" in en.text


def test_batch_results(client: TestClient) -> None:
    r = client.get(
        "/batch",
        params={
            "lang": "fr",
            "micro_batch": "32",
            "accumulation": "4",
            "devices": "64",
            "sequence_length": "2 048",
            "base_learning_rate": "0,1",
            "base_batch": "256",
        },
    )
    assert text_of(r.text, "global_batch") == f"8{NNBSP}192"
    assert text_of(r.text, "global_batch_tokens") == f"16{NNBSP}777{NNBSP}216"
    assert text_of(r.text, "learning_rate") == "3,2"
    assert "η = 0,1 × 8" in r.text


def test_batch_learning_rate_needs_both_fields(client: TestClient) -> None:
    r = client.get(
        "/batch",
        params={
            "lang": "en",
            "micro_batch": "32",
            "accumulation": "1",
            "devices": "8",
            "base_learning_rate": "0.1",
            "base_batch": "",
        },
    )
    assert 'id="placeholder"' in r.text
    assert (
        text_of(r.text, "base_batch-error")
        == "Missing; expected a value, since the other learning-rate field is filled"
    )


def test_pipeline_results_and_chart(client: TestClient) -> None:
    query = {
        "lang": "en",
        "stages": "4",
        "micro_batches": "8",
        "schedule": "gpipe",
        "chunks": "1",
        "micro_batch_time": "120 ms",
    }
    r = client.get("/pipeline", params=query)
    assert text_of(r.text, "bubble_fraction") == "27.27%"
    assert text_of(r.text, "step_time") == "1.32 sec"
    assert text_of(r.text, "activations_in_flight") == "8"
    assert "/chart/pipeline.svg?" in r.text
    svg = client.get("/chart/pipeline.svg", params=query)
    assert svg.status_code == 200
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert "GPipe" in svg.text
    bad = client.get("/chart/pipeline.svg", params={**query, "stages": "0"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "stages"


def test_pipeline_interleaved_needs_a_multiple(client: TestClient) -> None:
    r = client.get(
        "/pipeline",
        params={"lang": "en", "stages": "4", "micro_batches": "6", "schedule": "interleaved", "chunks": "2"},
    )
    assert "a multiple of the 4 stages" in r.text


def test_plan_results_and_deadline_table(client: TestClient) -> None:
    r = client.get("/plan", params={"lang": "fr"})  # the page's own example: ImageNet, 90 epochs
    assert text_of(r.text, "requested.seconds") == f"16{NBSP}min 41{NNBSP}s"  # the run asked for, beside the deadline's
    assert "€" in text_of(r.text, "requested.cost")
    assert 'id="options"' in r.text
    assert "Le moins d'appareils qui terminent en 30\xa0min : 36" in html.unescape(r.text)


def test_plan_deadline_error_is_on_its_field(client: TestClient) -> None:
    r = client.get(
        "/plan",
        params={
            "lang": "en",
            "work": "1e12",
            "epochs": "1",
            "devices": "8",
            "per_device_throughput": "1",
            "efficiency": "50%",
            "deadline": "1 min",
        },
    )
    assert unescape(text_of(r.text, "deadline-error")).startswith("Got “1 min”; expected a deadline that at most")


def test_fragments_hold_results_and_every_error(client: TestClient) -> None:
    r = client.get("/fragment/plan", params={"lang": "en"})
    assert r.status_code == 200
    for name in ("results", "example", "work-error", "deadline-error", "watts_per_device-error"):
        assert f'id="{name}"' in r.text


def test_nav_links_every_page(client: TestClient) -> None:
    page = client.get("/", params={"lang": "en"}).text
    for path in ("/batch?lang=en", "/pipeline?lang=en", "/plan?lang=en"):
        assert f'href="{path}"' in page
        assert client.get(path).status_code == 200


def test_api_batch_pipeline_plan(client: TestClient) -> None:
    b = client.get(
        "/api/v1/batch",
        params={"micro_batch": 32, "accumulation": 4, "devices": 64, "base_learning_rate": 0.1, "base_batch": 256},
    )
    assert b.json()["global_batch"] == 8192
    assert b.json()["learning_rate"] == 3.2
    p = client.get(
        "/api/v1/pipeline", params={"stages": 8, "micro_batches": 16, "schedule": "interleaved", "chunks": 2}
    )
    assert p.json()["bubble_fraction"] == pytest.approx(7 / 39)
    plan = client.get(
        "/api/v1/plan",
        params={"work": 1.28e9, "per_device_throughput": 2000, "efficiency": 0.9, "deadline_seconds": 129600},
    )
    assert plan.json()["plan"]["devices"] == 6
    assert [o["devices"] for o in plan.json()["options"]] == [2, 4, 6, 8, 16]


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/api/v1/batch", {"micro_batch": 0}, "micro_batch"),
        ("/api/v1/batch", {"micro_batch": 8, "base_batch": 256}, "base_learning_rate"),
        ("/api/v1/pipeline", {"stages": 4, "micro_batches": 8, "chunks": 2}, "chunks"),
        ("/api/v1/pipeline", {"stages": 4, "micro_batches": 8, "schedule": "zigzag"}, "schedule"),
        ("/api/v1/plan", {"work": 1e9, "per_device_throughput": 2000, "efficiency": 0.9}, "devices"),
        (
            "/api/v1/plan",
            {"work": 1e9, "per_device_throughput": 1, "efficiency": 0.9, "deadline_seconds": 1},
            "deadline_seconds",
        ),
    ],
)
def test_api_bad_input_is_a_422_naming_the_field(
    client: TestClient, path: str, params: dict[str, object], field: str
) -> None:
    r = client.get(path, params=params)
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == field


def test_language_switch_rewrites_numbers(client: TestClient) -> None:
    query = {
        "lang": "fr",
        "from": "en",
        "work": "1,281,167",
        "epochs": "90",
        "devices": "64",
        "per_device_throughput": "2,000",
        "efficiency": "90%",
        "price_per_device_hour": "2.5",
        "currency": "EUR",
    }
    r = client.get("/plan", params=query)
    assert f'value="1{NNBSP}281{NNBSP}167"' in r.text
    assert 'value="2,5"' in r.text
    assert f'value="90{NBSP}%"' in r.text
    assert text_of(r.text, "requested.seconds") == f"16{NBSP}min 41{NNBSP}s"
    unreadable = client.get("/plan", params={**query, "price_per_device_hour": "2.5.1"})
    assert 'value="2.5.1"' in unreadable.text  # left as typed, with its error
    assert unescape(text_of(unreadable.text, "price_per_device_hour-error")).startswith(
        "Reçu «\u00a02.5.1\u00a0» ; attendu"
    )


PREDICT_QUERY = {
    "lang": "en",
    "devices": "8,64",
    "per_device_throughput": "938",
    "batch": "256",
    "params": "25.6M",
    "grad_bytes": "4",
    "accumulation": "1",
    "devices_per_node": "8",
    "intra": "nvlink3",
    "intra_bandwidth": "",
    "inter": "ib-hdr",
    "inter_bandwidth": "",
    "nics": "4",
    "algorithm": "auto",
    "overlap": "on",
    "jitter": "2%",
}


def test_predict_page_table_chart_and_levers(client: TestClient) -> None:
    r = client.get("/predict", params=PREDICT_QUERY)
    assert r.status_code == 200
    assert 'id="predictions"' in r.text
    assert 'id="levers"' in r.text
    assert "<td>95.9% (89–100)</td>" in r.text  # E, the median of its 90 % interval, which stops at 100 %
    assert "balance the load: no step-time variation" in r.text
    chart = client.get("/chart/predict.svg", params=PREDICT_QUERY)
    assert chart.status_code == 200
    assert "<svg" in chart.text
    assert "Where the step time goes" in chart.text


def test_predict_page_in_french_by_default(client: TestClient) -> None:
    r = client.get("/predict")
    assert "<h1>Efficacité de mise à l&#39;échelle prédite</h1>" in r.text or "prédite</h1>" in r.text
    assert "équilibrer la charge" in r.text


def test_predict_page_errors_by_field(client: TestClient) -> None:
    r = client.get("/predict", params={**PREDICT_QUERY, "intra": "", "params": "lots"})
    assert text_of(r.text, "params-error").startswith("Got “lots”; expected a number")
    r = client.get(
        "/predict",
        params={**PREDICT_QUERY, "intra": "", "intra_bandwidth": "300 GB/s", "inter": "", "inter_bandwidth": "100Gb/s"},
    )
    assert 'id="predictions"' in r.text


def test_api_predict(client: TestClient) -> None:
    r = client.get(
        "/api/v1/predict",
        params={
            "devices": [1, 8, 64],
            "per_device_throughput": 938,
            "batch": 256,
            "params": 25.6e6,
            "intra": "nvlink3",
            "inter": "ib-hdr",
            "nics": 4,
        },
    )
    assert r.status_code == 200
    rows = r.json()["predictions"]
    assert [row["devices"] for row in rows] == [1, 8, 64]
    assert rows[0]["efficiency"] == 1.0
    assert r.json()["levers"]
    bad = client.get(
        "/api/v1/predict", params={"devices": [8], "per_device_throughput": 938, "batch": 256, "params": 25.6e6}
    )
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "intra_bandwidth"


def test_predict_with_an_input_pipeline_on_the_page_and_the_api(client: TestClient) -> None:
    # A node's loader at 6 000 images/s cannot feed 8 GPUs at 938/s: the page and the API say so.
    r = client.get("/predict", params={**PREDICT_QUERY, "input_throughput": "6000"})
    assert '<th scope="col">Input wait</th>' in r.text
    assert "<td>68.4 ms</td>" in r.text  # 8·256/6000 − 256/938 s
    assert "input wait 68.4 ms" in text_of(r.text, "example")
    assert "double the input pipeline&#39;s throughput" in r.text
    french = client.get(
        "/predict", params={**PREDICT_QUERY, "lang": "fr", "params": "25,6M", "input_throughput": "6 000"}
    )
    assert "Attente des données" in french.text
    plain = client.get("/predict", params=PREDICT_QUERY)
    assert "Input wait" not in plain.text  # not given: not modelled, no empty column
    refused = client.get("/predict", params={**PREDICT_QUERY, "input_throughput": "500"})
    assert unescape(text_of(refused.text, "input_throughput-error")).startswith(
        "Got “500”; expected at least the per-device"
    )
    api = client.get(
        "/api/v1/predict",
        params={"devices": [8], "per_device_throughput": 938, "batch": 256, "params": 25.6e6, "intra": "nvlink3"}
        | {"input_throughput": 6000},
    )
    row = api.json()["predictions"][0]
    assert row["bottleneck"] == "input"
    assert row["step_time"]["input_wait"] == pytest.approx(8 * 256 / 6000 - 256 / 938)
    assert api.json()["assumptions"]["input_throughput"] == 6000


def test_fit_page_with_its_example(client: TestClient) -> None:
    r = client.get("/fit", params={"lang": "en"})
    assert r.status_code == 200
    assert "Chosen model: amdahl" in r.text
    assert 'id="fit-predictions"' in r.text
    assert "<textarea" in r.text
    assert client.get("/chart/fit.svg", params={"lang": "en"}).status_code == 200


def test_fit_page_reads_a_french_spreadsheet(client: TestClient) -> None:
    pasted = "devices\tthroughput\n1\t367,29\n4\t1 449,48\n8\t2 887,65\n16\t5 716,79"
    r = client.get("/fit", params={"lang": "fr", "measurements": pasted, "at": "32", "model": "auto"})
    assert 'id="fit-predictions"' in r.text
    assert "amdahl" in r.text
    english = client.get("/fit", params={"lang": "en", "measurements": pasted, "at": "32", "model": "auto"})
    assert "column throughput: got “367,29”" in english.text  # in English, 367,29 is no number


def test_fit_page_errors_on_the_measurements_field(client: TestClient) -> None:
    r = client.get("/fit", params={"lang": "en", "measurements": "gpus,samples\n1,2", "at": "", "model": "auto"})
    assert "found gpus, samples" in text_of(r.text, "measurements-error")
    assert 'id="placeholder"' in r.text


def test_api_fit(client: TestClient) -> None:
    points = [{"devices": d, "throughput": a} for d, a in [(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)]]
    r = client.post("/api/v1/fit", json={"points": points, "at": [32]})
    assert r.status_code == 200
    assert r.json()["chosen"] == "amdahl"
    bad = client.post("/api/v1/fit", json={"points": points[:1]})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "points"
    whole = client.post("/api/v1/fit", json={"points": [{"devices": 1, "throughput": 300}, *points[1:]]})
    assert whole.status_code == 200  # a whole number is a throughput too


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"at": [True]}, "at.0"),
        ({"points": [{"devices": True, "throughput": 1.0}, {"devices": 2, "throughput": 2.0}]}, "points.0.devices"),
        ({"points": [{"devices": "8", "throughput": 1.0}, {"devices": 2, "throughput": 2.0}]}, "points.0.devices"),
        ({"points": [{"devices": 1, "throughput": False}, {"devices": 2, "throughput": 2.0}]}, "points.0.throughput"),
    ],
)
def test_api_fit_takes_json_types_as_written(client: TestClient, change: dict[str, object], field: str) -> None:
    # true is not a device count and "8" is a string: the schema says integer, so they are refused.
    points = [{"devices": d, "throughput": a} for d, a in [(1, 367.29), (4, 1449.48)]]
    r = client.post("/api/v1/fit", json={"points": points, **change})
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == field


def test_fit_page_with_too_few_points_shows_no_nan(client: TestClient) -> None:
    r = client.get(
        "/fit", params={"lang": "en", "measurements": "devices,throughput\n1,100\n2,190", "at": "4", "model": "auto"}
    )
    assert 'id="fit-predictions"' in r.text
    assert "NaN" not in r.text


def test_field_errors_in_the_language_of_the_page(client: TestClient) -> None:
    query = {"devices": "0", "per_device_throughput": "2000", "efficiency": "190"}
    french = client.get("/", params={**query, "lang": "fr"})
    assert (
        unescape(text_of(french.text, "devices-error"))
        == "Reçu «\u00a00\u00a0» ; attendu un nombre entier d'au moins 1"
    )
    assert "attendu un pourcentage" in unescape(text_of(french.text, "efficiency-error"))
    english = client.get("/", params={**query, "lang": "en"})
    assert unescape(text_of(english.text, "devices-error")) == "Got “0”; expected a whole number of at least 1"
    api = client.get(
        "/api/v1/predict", params={"devices": [8], "per_device_throughput": 938, "batch": 256, "params": 1e6}
    )
    assert api.json()["errors"][0]["message"] == (
        "missing; expected a bandwidth inside a node (such as 300GB/s) or a preset (such as nvlink3)"
    )


def test_fit_page_warnings_in_the_language_of_the_page(client: TestClient) -> None:
    query = {"measurements": FIT_EXAMPLE, "at": "512", "model": "auto"}
    french = unescape(client.get("/fit", params={**query, "lang": "fr"}).text)
    assert "prédire à 512 appareils, plus de 4× la plus grande taille mesurée (16)" in french
    english = unescape(client.get("/fit", params={**query, "lang": "en"}).text)
    assert "predicting at 512 devices, more than 4× the largest measured (16)" in english


def test_fit_chart_refuses_sizes_past_a_billion(client: TestClient) -> None:
    # at=1e300 once reached the chart renderer as a 301-digit integer and ended in a 500.
    query = {"measurements": FIT_EXAMPLE, "at": "1e300", "model": "auto", "lang": "en"}
    r = client.get("/chart/fit.svg", params=query)
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "at"
    assert client.get("/chart/fit.svg", params={**query, "at": "1e9"}).status_code == 200


def test_the_unit_speaks_the_page_language_and_follows_the_switch(client: TestClient) -> None:
    french = client.get("/", params={"lang": "fr"})
    assert text_of(french.text, "actual_throughput").endswith("échantillons/s")
    switched = client.get(
        "/",
        params={
            "lang": "en",
            "from": "fr",
            "devices": "64",
            "per_device_throughput": "2 000",
            "efficiency": "90 %",
            "unit": "échantillons/s",
        },
    )
    assert text_of(switched.text, "actual_throughput") == "115,200 samples/s"  # untouched: the English page's own
    typed = client.get(
        "/",
        params={
            "lang": "en",
            "from": "fr",
            "devices": "64",
            "per_device_throughput": "2 000",
            "efficiency": "90 %",
            "unit": "tokens/s",
        },
    )
    assert text_of(typed.text, "actual_throughput") == "115,200 tokens/s"  # typed: kept


def test_the_switch_keeps_quantities_with_a_suffix_or_a_unit(client: TestClient) -> None:
    # The French default 25,6M used to reach the English page as it was, and no result showed.
    query = {
        "lang": "en",
        "from": "fr",
        "devices": "1..256",
        "per_device_throughput": "938",
        "batch": "256",
        "params": "25,6M",
        "grad_bytes": "4",
        "accumulation": "1",
        "devices_per_node": "8",
        "intra": "nvlink3",
        "inter": "ib-hdr",
        "nics": "4",
        "jitter": "2,5 %",
        "intra_latency": "3us",
        "overlap": "on",
    }
    r = client.get("/predict", params=query)
    assert 'value="25.6M"' in r.text  # its form kept, in the English spelling
    assert 'value="2.5%"' in r.text
    assert 'value="3us"' in r.text  # the same in both languages: kept as typed
    assert 'id="placeholder"' not in r.text
    plan = client.get(
        "/plan",
        params={
            "lang": "en",
            "from": "fr",
            "work": "1 000",
            "epochs": "1",
            "devices": "8",
            "per_device_throughput": "10",
            "efficiency": "90 %",
            "deadline": "1,5 j",
        },
    )
    assert 'value="1.5 d"' in plan.text
    memory = client.get("/predict", params={**query, "device_memory": "80 Go", "params": "7B"})
    assert 'value="80 GB"' in memory.text
    assert 'value="7B"' in memory.text
    back = client.get(
        "/predict", params={**query, "lang": "fr", "from": "en", "device_memory": "80GiB", "params": "1.5B"}
    )
    assert 'value="80Gio"' in back.text
    assert 'value="1,5B"' in back.text


def test_a_typed_bandwidth_stands_in_for_the_preset_beside_it(client: TestClient) -> None:
    """The page shows a link's preset menu beside its bandwidth field (the input's ``Page.replaces``): the one
    typed is the one meant, where the command line, given both, refuses (see tests/cli)."""
    typed = {"intra_bandwidth": "100 GB/s", "inter_bandwidth": "25 GB/s"}
    both = client.get("/predict", params={**PREDICT_QUERY, **typed})
    alone = client.get("/predict", params={**PREDICT_QUERY, **typed, "intra": "", "inter": ""})
    presets = client.get("/predict", params=PREDICT_QUERY)
    table = re.compile(r'<table[^>]*id="predictions".*?</table>', flags=re.S)
    assert table.search(both.text) is not None
    assert table.search(both.text).group(0) == table.search(alone.text).group(0)  # type: ignore[union-attr]
    assert table.search(both.text).group(0) != table.search(presets.text).group(0)  # type: ignore[union-attr]
    from dpscale.calculators.predict import PREDICT

    replaced = {item.page.replaces for item in PREDICT.inputs if item.page.replaces}
    assert replaced == {"intra", "inter"}
    assert replaced <= {item.name for item in PREDICT.inputs}
