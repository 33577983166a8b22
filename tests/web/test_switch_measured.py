"""The language switch rewrites measurements ``devices:throughput`` in the other language's way."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(
    ("typed", "source", "target", "shown"),
    [
        ("8:62 000", "fr", "en", "8:62,000"),
        ("8:62 000; 16:120 000,5", "fr", "en", "8:62,000; 16:120,000.5"),
        ("8:62,000", "en", "fr", "8:62\u202f000"),
    ],
)
def test_measurements_are_rewritten_by_the_switch(
    client: TestClient, typed: str, source: str, target: str, shown: str
) -> None:
    page = client.get(
        "/predict", params={"lang": target, "from": source, "measured": typed, "per_device_throughput": ""}
    )
    found = re.search(r'<input id="measured" name="measured" value="([^"]*)"', page.text)
    assert found is not None
    assert unescape(found.group(1)) == shown
    assert 'id="measured-error" hidden' in page.text or 'id="measured-error"  hidden' in page.text
