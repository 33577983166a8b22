"""The page as a person uses it, in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

NBSP, NNBSP = "\u00a0", "\u202f"
AXE = Path(__file__).parent / "assets" / "axe.min.js"


def new_page(browser: Any, **options: Any) -> Any:
    context = browser.new_context(**options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.errors = errors
    return page


def test_seed_numbers_in_french_and_live_update_without_reload(browser: Any, server: str) -> None:
    page = new_page(browser, locale="fr-FR")
    page.goto(server + "/")
    assert page.locator("#actual_throughput").inner_text() == f"115{NNBSP}200 échantillons/s"
    page.evaluate("window.__sameDocument = true")
    page.fill("#devices", "128")
    page.locator("#actual_throughput").filter(has_text="230").wait_for()
    assert page.locator("#actual_throughput").inner_text() == f"230{NNBSP}400 échantillons/s"
    assert page.locator("#speedup").inner_text() == f"115,2{NBSP}×"
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    assert "devices=128" in page.url  # the URL holds the inputs
    assert f"A = 256{NNBSP}000 × 0,9 = 230{NNBSP}400" in page.locator("#example").inner_text()
    assert page.errors == []


def test_english_and_shared_url(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/?lang=en&devices=8&per_device_throughput=1,000&efficiency=75%25")
    assert page.locator("#actual_throughput").inner_text() == "6,000 samples/s"
    page.fill("#efficiency", "50%")
    page.locator("#actual_throughput").filter(has_text="4,000").wait_for()
    reopened = new_page(browser, locale="en-US")
    reopened.goto(page.url)
    assert reopened.locator("#actual_throughput").inner_text() == "4,000 samples/s"


def test_cleared_field_shows_the_placeholder_and_its_error(browser: Any, server: str) -> None:
    page = new_page(browser, locale="fr-FR")
    page.goto(server + "/")
    page.fill("#per_device_throughput", "")
    page.locator("#placeholder").wait_for()
    assert page.locator("#placeholder").inner_text() == "Saisissez une valeur pour afficher les résultats."
    assert page.locator("#per_device_throughput-error").inner_text() == "Ce champ est vide."
    assert page.locator("#per_device_throughput").get_attribute("aria-invalid") == "true"
    page.fill("#per_device_throughput", "1 000")
    page.locator("#actual_throughput").wait_for()
    assert page.locator("#per_device_throughput-error").is_hidden()


def test_language_switch_keeps_the_inputs(browser: Any, server: str) -> None:
    page = new_page(browser, locale="fr-FR")
    page.goto(server + "/")
    page.fill("#devices", "16")
    page.locator("#actual_throughput").filter(has_text="28").wait_for()
    page.click(".lang-switch")
    page.wait_for_url(re.compile(r"lang=en"))
    assert page.locator("html").get_attribute("lang") == "en"
    assert page.input_value("#devices") == "16"
    assert page.locator("h1").inner_text() == "Data-parallel scaling"


def test_works_with_javascript_off(browser: Any, server: str) -> None:
    page = new_page(browser, java_script_enabled=False, locale="en-US")
    page.goto(server + "/?lang=en")
    page.fill("#devices", "32")
    page.press("#devices", "Enter")
    page.wait_for_url(re.compile(r"devices=32"))
    assert page.locator("#actual_throughput").inner_text() == "57,600 samples/s"


def test_keyboard_only(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/?lang=en")
    page.focus("#devices")
    page.keyboard.press("Control+A")
    page.keyboard.type("10")
    page.locator("#actual_throughput").filter(has_text="18,000").wait_for()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "per_device_throughput"


def test_chart_is_drawn(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/?lang=en")
    img = page.locator(".chart img")
    img.scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('.chart img').naturalWidth > 0")
    assert "115,200" in (img.get_attribute("alt") or "")


def test_phone_width_has_no_horizontal_scroll(browser: Any, server: str) -> None:
    page = new_page(browser, viewport={"width": 360, "height": 740}, locale="fr-FR")
    page.goto(server + "/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_axe_finds_no_serious_violation(browser: Any, server: str, lang: str) -> None:
    page = new_page(browser, bypass_csp=True)  # axe is injected as a script the page's CSP would refuse
    page.goto(f"{server}/?lang={lang}")
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps([(v["id"], v["help"], [n["target"] for n in v["nodes"]]) for v in serious])
