"""Results to take away, in Chromium: the command and the API call follow the inputs as typed, fit a
phone's width without widening the page, and the files download with the page's figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_command_follows_the_inputs_and_fits_the_screen(browser: Any, server: str, width: int, lang: str) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/predict?lang={lang}")
    command = page.locator("#command")
    assert "--per-device 938" in command.inner_text()
    page.fill("#per_device_throughput", "1000")
    page.wait_for_function("() => document.querySelector('#command').textContent.includes('--per-device 1000')")
    assert "per_device_throughput=1000" in page.locator("#api-call").inner_text()
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    box = page.locator(".takeaway pre").first.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= width
    assert page.errors == []
    page.context.close()


def test_the_json_downloads_with_the_page_figures(browser: Any, server: str, tmp_path: Path) -> None:
    page = new_page(browser, accept_downloads=True)
    page.goto(f"{server}/?lang=en&devices=12")
    with page.expect_download() as waited:
        page.click("#export-json")
    saved = tmp_path / "answer.json"
    waited.value.save_as(saved)
    answer = json.loads(saved.read_text())
    assert answer["devices"] == 12
    assert waited.value.suggested_filename == "dpscale-scaling.json"
    page.context.close()
