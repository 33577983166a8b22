"""How fields read what is typed, live, in headless Chromium."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_page import NNBSP, new_page

pytestmark = pytest.mark.browser


def test_a_comma_before_three_digits_shows_both_readings_as_you_type(browser: Any, server: str) -> None:
    page = new_page(browser, locale="fr-FR")
    page.goto(server + "/")
    assert page.locator("#per_device_throughput-reading").is_hidden()
    page.fill("#per_device_throughput", "2,500")
    page.locator("#per_device_throughput-reading").filter(has_text="Lu 2,5").wait_for()
    assert f"écrivez 2{NNBSP}500" in page.locator("#per_device_throughput-reading").inner_text()
    page.fill("#per_device_throughput", "2 500")
    page.locator("#per_device_throughput-reading").wait_for(state="hidden")
    assert page.errors == []


def test_a_bare_number_in_a_percent_field_gives_results_as_you_type(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/?lang=en")
    page.fill("#efficiency", "85")
    page.locator("#actual_throughput").filter(has_text="108,800").wait_for()
    assert page.locator("#efficiency-error").is_hidden()


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_nav_keeps_each_link_on_one_line_and_shows_the_current_page(browser: Any, server: str, lang: str) -> None:
    page = new_page(browser, viewport={"width": 1280, "height": 800})
    page.goto(f"{server}/plan?lang={lang}")
    lines = page.eval_on_selector_all(".top nav a", "links => links.map(a => a.getClientRects().length)")
    assert lines
    assert set(lines) == {1}
    current = page.locator('.top nav a[aria-current="page"]')
    assert current.evaluate("a => getComputedStyle(a).fontWeight") == "700"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    assert page.locator(".skip").is_visible()
