"""Sharded data parallelism on the pages: /predict's strategy, memory and levers; /plan's fewest devices."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app

LLAMA = {
    "devices": "8, 64",
    "per_device_throughput": "3",
    "batch": "4",
    "params": "8B",
    "intra": "nvlink4",
    "inter": "ib-ndr",
    "param_bytes": "2",
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_predict_page_shows_each_devices_memory_and_what_does_not_fit(client: TestClient) -> None:
    page = client.get("/predict", params={**LLAMA, "sharding": "ddp", "device_memory": "80 GiB", "lang": "en"}).text
    assert "Memory per device" in page
    assert "134.1\u00a0GiB" in page  # 8 B parameters at 2 + 4 + 12 bytes each, whole on every device
    assert "✗" in page
    assert "shard with zero3 instead" in page
    sharded = client.get(
        "/predict", params={**LLAMA, "sharding": "full_shard", "device_memory": "80 GiB", "lang": "fr"}
    )
    assert "Mémoire par appareil" in sharded.text
    assert "18,6\u00a0Gio" in sharded.text  # 134.1 GiB / 8, and 1.9 GiB of buffers: two pieces gathered, one reduced
    assert "✗" not in sharded.text.split('id="levers"')[0]


def test_predict_chart_draws_the_memory_panel(client: TestClient) -> None:
    svg = client.get(
        "/chart/predict.svg", params={**LLAMA, "sharding": "zero3", "device_memory": "80GiB", "lang": "en"}
    )
    assert svg.status_code == 200
    assert "Memory per device (zero3)" in svg.text


def test_plan_page_says_the_fewest_devices_that_hold_the_model(client: TestClient) -> None:
    query = {
        "work": "1e12",
        "per_device_throughput": "3000",
        "efficiency": "90%",
        "devices": "64",
        "params": "70B",
        "sharding": "zero3",
        "device_memory": "80 GiB",
        "param_bytes": "2",
        "deadline": "",  # a field left out of a link keeps the page's example: this one is emptied
        "lang": "en",
    }
    page = client.get("/plan", params=query).text
    assert "The fewest devices that hold the model: 19." in page
    numbers = {"efficiency": 0.9, "params": 70e9, "device_memory": 80 * 2**30}
    sent = {k: v for k, v in {**query, **numbers}.items() if v != "" and k != "lang"}  # the API speaks English only
    api = client.get("/api/v1/plan", params=sent).json()
    assert api["memory"]["fewest_devices"] == 19
