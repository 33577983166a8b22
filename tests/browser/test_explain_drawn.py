"""/explain without JavaScript, in headless Chromium: the server's answer shows the timeline it drew."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_page import new_page
from tests.explain_support import cpu_run

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(("lang", "rank"), [("fr", "rang"), ("en", "rank")])
@pytest.mark.parametrize("width", [390, 1280])
def test_without_javascript_the_timeline_is_shown(
    browser: Any, server: str, tmp_path: Path, width: int, lang: str, rank: str
) -> None:
    page = new_page(browser, java_script_enabled=False, viewport={"width": width, "height": 900})
    page.goto(f"{server}/explain?lang={lang}")
    page.set_input_files("#trace", [str(f) for f in cpu_run(tmp_path)])
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    svg = page.locator("#timeline svg")
    assert svg.is_visible()
    assert svg.locator("g.rank").count() == 3
    assert svg.locator("text", has_text=rank).count() == 3
    box = svg.bounding_box()
    assert box is not None
    assert box["width"] <= min(width, 640)
    assert box["height"] > 3 * 16 * box["width"] / 640  # scaled as a whole: the bands keep their shape
    assert page.locator("#timeline .legend li").count() == 3
    assert page.evaluate("document.documentElement.scrollWidth") <= width
