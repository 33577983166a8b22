"""Every page at a phone's width and a desktop's, and through the language switch, in headless Chromium."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser

PAGES = ["/", "/batch", "/pipeline", "/plan", "/predict", "/fit", "/explain"]


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("path", ["/plan?deadline=1%20h&", "/predict?", "/fit?"])
def test_tables_are_whole_at_1280_px(browser: Any, server: str, path: str, lang: str) -> None:
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server}{path}lang={lang}")
    sizes = page.eval_on_selector_all("#results .scroll", "els => els.map(e => [e.scrollWidth, e.clientWidth])")
    assert sizes
    assert all(scroll <= client for scroll, client in sizes), sizes


@pytest.mark.parametrize("path", ["/", "/pipeline", "/predict", "/fit"])
def test_charts_keep_their_text_size_at_390_px(browser: Any, server: str, path: str) -> None:
    page = new_page(browser, viewport={"width": 390, "height": 844}, locale="fr-FR")
    page.goto(server + path)
    img = page.locator(".chart img")
    img.scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('.chart img').naturalWidth > 0")
    natural, shown = img.evaluate("i => [i.naturalWidth, i.clientWidth]")
    assert shown / natural >= 0.85, (natural, shown)  # 10 px labels stay about 9 px, not 5
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_table_wider_than_a_phone_scrolls_with_a_cue(browser: Any, server: str) -> None:
    page = new_page(browser, viewport={"width": 390, "height": 844}, locale="fr-FR")
    page.goto(server + "/predict")
    box = page.locator("#results .scroll").first
    assert box.evaluate("e => e.scrollWidth > e.clientWidth")
    assert "radial-gradient" in box.evaluate("e => getComputedStyle(e).backgroundImage")


@pytest.mark.parametrize("path", PAGES)
def test_the_language_switch_keeps_the_results_both_ways(browser: Any, server: str, path: str) -> None:
    page = new_page(browser, locale="fr-FR")
    page.goto(server + path)
    assert page.locator("#placeholder").count() == 0
    for lang in ("en", "fr"):
        page.click(".lang-switch")
        page.wait_for_url(re.compile(f"lang={lang}"))
        assert page.locator("html").get_attribute("lang") == lang
        assert page.locator("#placeholder").count() == 0, page.locator("[id$=-error]:visible").all_inner_texts()
    assert page.errors == []
