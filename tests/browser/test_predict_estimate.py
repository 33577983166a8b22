"""/predict in headless Chromium: a measurement the inputs make unlikely is warned of as the user types it,
and each term's source is shown under the table's heading."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser


def test_a_measurement_past_d_v_is_warned_of_as_typed(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/predict?lang=en")
    assert page.locator("#prediction-warnings").count() == 0
    assert page.locator("#sources").inner_text().split() == ["compute:", "measured", "assumed", "assumed"]
    page.fill("#measured", "8:7600")  # 1.3 % above 8 devices at the page's 938 samples/s
    page.locator("#prediction-warnings").filter(has_text="The measurement 8:7600 is above").wait_for()
    assert "compute: measured" in page.locator("#sources").inner_text()
    assert page.errors == []
