"""/fit in headless Chromium: pasted measurement records are posted, and what is too large is said."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser

RECORDS = "\n".join(
    json.dumps({"devices": d, "throughput": t, "backend": "nccl", "notes": "x" * 580})
    for d, t in [(1, 367.29), (2, 730.1), (4, 1449.48), (8, 2887.65), (16, 5716.79)]
)


def test_pasted_records_are_posted_and_the_link_keeps_the_short_inputs(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/fit?lang=en")
    page.fill("#at", "48")
    page.fill("#measurements", RECORDS)
    page.locator("#models caption").filter(has_text="5 measurements").wait_for()
    assert "measurements=" not in page.url
    assert "at=48" in page.url
    assert len(page.url) < 2048
    page.click(".lang-switch")  # too long for a link: carried to the French page by a post
    page.locator("html[lang=fr]").wait_for()
    page.locator("#models caption").filter(has_text="5 mesures").wait_for()
    assert page.input_value("#measurements") == RECORDS
    assert page.errors == []


def test_too_large_a_paste_is_said_with_the_limit(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US", bypass_csp=True)  # evaluate runs a script
    page.goto(server + "/fit?lang=en")
    page.evaluate(
        """() => {
          const field = document.getElementById('measurements');
          field.value = 'devices,throughput\\n' + '1,100\\n'.repeat(200000);
          field.dispatchEvent(new Event('input', {bubbles: true}));
        }"""
    )
    page.locator("#refused").filter(has_text="1,048,576").wait_for()
    assert "1,048,576" in page.locator("#results").inner_text()  # the old results are not left standing
    assert page.locator("#chosen").count() == 0
