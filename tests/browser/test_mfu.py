"""/predict in headless Chromium, one device's throughput given as an MFU (issue 27, item 10): typed beside
the page's throughput it is refused by its field; that emptied, the result takes it (the MFU on one device
is the one typed, the compute said assumed and where the throughput came from), the URL and the language
link carry it, at a phone's width and a desktop's, in French and in English, and without JavaScript."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser

# An 8B model of 8192 tokens per sample on H100 SXM nodes; the page's example throughput (938) left in place.
JOB = (
    "devices=1,8,64&batch=1&params=8B&intra=nvlink4&inter=ib-ndr&nics=8&tokens_per_sample=8192"
    "&peak_flops=H100+SXM&layers=32&hidden=4096"
)
OTHER = {"fr": "en", "en": "fr"}
SAID = {
    "en": ("One device's throughput alone, 0.7932 samples/s, is derived from an MFU of 40%", "40%"),
    "fr": ("0,7932", "40 %"),
}


def plain(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").replace("\u202f", " ").split())


def first_mfu(page: Any) -> str:
    """The first row's MFU, found by its column's heading."""
    headings = [plain(h) for h in page.locator("#predictions thead tr:first-child th").all_inner_texts()]
    column = next(i for i, h in enumerate(headings) if "MFU" in h)
    return plain(page.locator(f"#predictions tbody tr:first-child td:nth-child({column + 1})").inner_text())


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def check_result(page: Any, lang: str) -> None:
    note, percent = SAID[lang]
    page.locator("#prediction-notes li").filter(has_text=note).wait_for()
    assert first_mfu(page) == percent  # the MFU on one device is the one typed
    assert "assumed" in page.locator("#sources td[data-source]").first.get_attribute("data-source")
    example = plain(page.locator("#example-tokens").inner_text())  # the worked example speaks tokens
    assert ("jetons/s sur la grappe" if lang == "fr" else "tokens/s on the cluster") in example


@pytest.mark.parametrize(("width", "lang"), [(390, "fr"), (1280, "fr"), (390, "en"), (1280, "en")])
def test_the_mfu_typed_in_place_of_the_throughput(browser: Any, server: str, width: int, lang: str) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/predict?{JOB}&lang={lang}")
    page.locator("#predictions").wait_for()
    assert page.locator("#mfu").input_value() == ""
    page.fill("#mfu", "40")
    error = page.locator("#mfu-error")
    error.wait_for()
    assert "MFU" in error.inner_text()
    assert page.locator("#mfu").get_attribute("aria-invalid") == "true"
    page.fill("#per_device_throughput", "")  # the throughput emptied: the MFU stands in its place
    error.wait_for(state="hidden")
    check_result(page, lang)
    page.wait_for_url(re.compile(r"[?&]mfu=40(&|$)"))
    assert query(page.url)["per_device_throughput"] == [""]  # emptied in the link too, not the example again
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={OTHER[lang]}"))
    page.locator("#predictions").wait_for()
    check_result(page, OTHER[lang])
    assert plain(page.locator("#mfu").input_value()) in ("40", "40 %", "40%")  # as typed, or in the language's way
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.errors == []


@pytest.mark.parametrize(("width", "lang"), [(390, "fr"), (1280, "en")])
def test_without_javascript_the_mfu_is_taken(browser: Any, server: str, width: int, lang: str) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto(f"{server}/predict?{JOB}&lang={lang}")
    page.fill("#mfu", "40")
    page.click("button[type=submit]")
    page.locator("#mfu-error").filter(has_text="MFU").wait_for()  # the example's throughput still there
    assert page.locator("#predictions").count() == 0
    page.fill("#per_device_throughput", "")
    page.fill("#mfu", "40")
    page.click("button[type=submit]")
    check_result(page, lang)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
