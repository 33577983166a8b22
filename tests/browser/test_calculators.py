"""The sibling pages as a person uses them, in headless Chromium."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.browser.test_page import AXE, NNBSP, new_page

pytestmark = pytest.mark.browser


def test_batch_updates_as_you_type(browser: Any, server: str) -> None:
    page = new_page(browser, locale="fr-FR")
    page.goto(server + "/batch")
    assert page.locator("#global_batch").inner_text() == f"8{NNBSP}192"
    page.fill("#devices", "128")
    page.locator("#global_batch").filter(has_text="16").wait_for()
    assert page.locator("#global_batch").inner_text() == f"16{NNBSP}384"
    assert "devices=128" in page.url
    assert page.errors == []


def test_pipeline_schedule_select_and_chart(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US", bypass_csp=True)  # wait_for_function evaluates a script
    page.goto(server + "/pipeline?lang=en")
    page.select_option("#schedule", "gpipe")
    page.locator("#activations_in_flight").filter(has_text="8").wait_for()
    assert "schedule=gpipe" in page.url
    page.fill("#micro_batches", "")
    page.locator("#placeholder").wait_for()
    assert page.locator("#micro_batches-error").inner_text() == (
        "Missing; expected a number of micro-batches, or the largest bubble to allow"
    )
    page.fill("#micro_batches", "16")
    page.locator("#bubble_fraction").filter(has_text="15.79%").wait_for()
    page.wait_for_function(
        "document.querySelector('.chart img') && document.querySelector('.chart img').naturalWidth > 0"
    )
    assert page.errors == []


def test_plan_deadline_and_language_switch(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/plan?lang=en")
    page.fill("#deadline", "1 h")
    page.locator("#deadline-title").filter(has_text="18").wait_for()
    page.click(".lang-switch")
    page.wait_for_url(re.compile(r"lang=fr"))
    assert page.input_value("#deadline") == "1 h"
    assert page.input_value("#work") == f"1{NNBSP}281{NNBSP}167"  # rewritten the French way
    assert page.input_value("#price_per_device_hour") == "2,5"
    assert "Le moins d'appareils" in page.locator("#deadline-title").inner_text()


def test_plan_works_with_javascript_off(browser: Any, server: str) -> None:
    page = new_page(browser, java_script_enabled=False, locale="en-US")
    page.goto(server + "/plan?lang=en")
    page.fill("#devices", "128")
    page.press("#devices", "Enter")
    page.wait_for_url(re.compile(r"devices=128"))
    assert page.locator('[id="requested.seconds"]').inner_text() == "8 min 20 sec"


@pytest.mark.parametrize("path", ["/batch", "/pipeline", "/plan", "/predict", "/fit"])
def test_axe_finds_no_serious_violation(browser: Any, server: str, path: str) -> None:
    page = new_page(browser, bypass_csp=True)
    page.goto(f"{server}{path}?lang=fr")
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps([(v["id"], v["help"], [n["target"] for n in v["nodes"]]) for v in serious])


@pytest.mark.parametrize("path", ["/batch", "/pipeline", "/plan", "/predict", "/fit"])
def test_phone_width(browser: Any, server: str, path: str) -> None:
    page = new_page(browser, viewport={"width": 360, "height": 740}, locale="fr-FR")
    page.goto(server + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_predict_updates_and_draws(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US", bypass_csp=True)
    page.goto(server + "/predict?lang=en")
    before = page.locator("#predictions").inner_text()
    page.select_option("#inter", "eth-10g")
    page.wait_for_url(re.compile(r"inter=eth-10g"))
    page.wait_for_function(f"document.querySelector('#predictions').innerText !== {json.dumps(before)}")
    assert "double the network bandwidth between nodes" in page.locator("#levers").inner_text()
    page.wait_for_function(
        "document.querySelector('.chart img') && document.querySelector('.chart img').naturalWidth > 0"
    )
    assert page.errors == []


def test_fit_paste_and_upload(browser: Any, server: str, tmp_path: Any) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/fit?lang=en")
    assert "amdahl" in page.locator("#chosen").inner_text()
    page.fill("#measurements", "devices,throughput\n1,1000\n2,1900\n4,3400\n8,5600\n16,7000\n32,6000")
    page.locator("#peak").wait_for()
    assert "usl" in page.locator("#chosen").inner_text()
    upload = tmp_path / "runs.csv"
    upload.write_text("devices,throughput\n1,100\n2,199\n4,396\n8,785\n", encoding="utf-8")
    page.set_input_files("#measurements-file", str(upload))
    page.wait_for_function("document.querySelector('#measurements').value.includes('785')")
    page.locator("#chosen").filter(has_text="constant").or_(
        page.locator("#chosen").filter(has_text="amdahl")
    ).wait_for()
    assert page.errors == []


def test_a_value_too_long_for_a_link_is_refused_beside_its_field(browser: Any, server: str) -> None:
    # 5 000 characters pasted into the unit: the live update posts them, and the field says what it
    # accepts, as for any wrong value, rather than a refusal of the whole request.
    page = new_page(browser, locale="en-US")
    page.goto(f"{server}/?lang=en")
    page.fill("#unit", "x" * 5000)
    page.locator("#unit-error").filter(has_text="40").wait_for()
    assert page.locator("#refused").is_hidden()
    page.fill("#unit", "tokens/s")
    page.locator("#actual_throughput").filter(has_text="tokens/s").wait_for()
    page.close()
