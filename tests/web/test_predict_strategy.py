"""/predict says what the chosen strategy does, and the example only while the fields hold it."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app

LLAMA = {"devices": "8, 64", "per_device_throughput": "0.9", "batch": "1", "params": "8B", "intra": "nvlink4"}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def strategy(html: str) -> tuple[str, str]:
    found = re.search(r'<p id="strategy" data-sharding="(\w+)">(.*?)</p>', html, re.S)
    assert found, "no strategy paragraph"
    return found.group(1), " ".join(found.group(2).split())


@pytest.mark.parametrize(
    ("sharding", "chosen", "said"),
    [
        ("ddp", "ddp", "in buckets of 25"),
        ("zero1", "zero1", "only its share of the optimizer states"),
        ("shard_grad_op", "zero2", "each bucket of gradients is reduce-scattered"),
        ("full_shard", "zero3", "Each of the 32 layers is all-gathered"),
        ("hsdp", "hybrid", "ZeRO-3 inside each group of 8 devices"),
    ],
)
def test_the_model_text_describes_the_chosen_strategy(
    client: TestClient, sharding: str, chosen: str, said: str
) -> None:
    page = client.get("/predict", params={**LLAMA, "sharding": sharding, "lang": "en"}).text
    shown, text = strategy(page)
    assert shown == chosen
    assert said in text
    if chosen != "ddp":
        assert "bucket" not in text or chosen in ("zero1", "zero2")
        assert "DDP sends them in buckets" not in page
    fragment = client.get("/fragment/predict", params={**LLAMA, "sharding": sharding, "lang": "en"}).text
    assert strategy(fragment) == (shown, text)  # the live update says it too


def test_the_overlap_menu_names_no_strategy(client: TestClient) -> None:
    page = client.get("/predict", params={**LLAMA, "sharding": "zero3", "lang": "en"}).text
    menu = page.split('<select id="overlap"', 1)[1].split("</select>", 1)[0]
    assert "DDP" not in menu
    off = client.get("/predict", params={**LLAMA, "sharding": "zero3", "overlap": "off", "lang": "en"}).text
    assert "Overlap is off" in strategy(off)[1]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_example_note_only_while_the_fields_hold_the_example(client: TestClient, lang: str) -> None:
    assert 'id="defaults"' in client.get("/predict", params={"lang": lang}).text
    assert 'id="defaults"' not in client.get("/predict", params={**LLAMA, "lang": lang}).text


def test_the_worked_example_in_tokens(client: TestClient) -> None:
    query = {**LLAMA, "tokens_per_sample": "8192", "peak_flops": "h100-sxm", "lang": "en"}
    page = client.get("/predict", params=query).text
    said = re.search(r'<p id="example-tokens">(.*?)</p>', page, re.S)
    assert said
    assert "tokens/s on the cluster" in said.group(1)
    assert "MFU = " in said.group(1)
    assert 'id="example-tokens"' not in client.get("/predict", params={**LLAMA, "lang": "en"}).text
