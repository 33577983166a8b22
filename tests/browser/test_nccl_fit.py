"""/predict after an nccl-tests log is read, in headless Chromium: the URL and the language link carry
what the log measured (nccl_fit), not the log, and give its numbers; emptying the log empties nccl_fit;
two logs pasted one after another travel together."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser

LOG = Path(__file__).resolve().parents[1] / "data" / "nccl" / "all_reduce_2nodes.txt"
# Two sizes past the log's 2 nodes of 8, so that the first row's efficiency rests on the network.
JOB = "devices=16,64&per_device_throughput=3&batch=4&params=8B&intra=nvlink4&inter=ib-ndr&param_bytes=2"
FIRST = "#predictions tbody tr:first-child td:nth-child(2)"
OTHER = {"fr": "en", "en": "fr"}


def efficiency(text: str) -> float:
    """The first row's efficiency, whatever the language writes (97,6 % or 97.6%), its interval left out."""
    found = re.match(r"\s*([\d.,]+)", text)
    assert found, text
    return float(found.group(1).replace(",", "."))


def fit_of(url: str) -> str | None:
    return parse_qs(urlsplit(url).query).get("nccl_fit", [None])[0]


def read_log(page: Any, how: str) -> None:
    """The log chosen as a file (read in the browser) or pasted into its field, then its result shown."""
    if how == "file":
        page.set_input_files("#nccl_log-file", str(LOG))
    else:
        page.fill("#nccl_log", LOG.read_text(encoding="utf-8"))
    page.locator("#network-used").wait_for()
    page.wait_for_function("() => document.querySelector('#nccl_fit').value !== ''")
    page.wait_for_url(re.compile(r"[?&]nccl_fit=n1_"))


@pytest.mark.parametrize(
    ("width", "lang", "how"), [(390, "fr", "file"), (1280, "fr", "paste"), (390, "en", "paste"), (1280, "en", "file")]
)
def test_the_url_and_the_language_link_carry_nccl_fit(
    browser: Any, server: str, width: int, lang: str, how: str
) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/predict?{JOB}&lang={lang}")
    presets = page.locator(FIRST).inner_text()
    read_log(page, how)
    logged = page.locator(FIRST).inner_text()
    assert efficiency(logged) != efficiency(presets)  # the log's network, not the presets'
    fit = fit_of(page.url)
    assert fit == page.locator("#nccl_fit").input_value()
    assert "nccl_log" not in page.url  # the log is data: the link carries what it measured instead
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={OTHER[lang]}"))
    assert fit_of(page.url) == fit
    assert "nccl_log" not in page.url
    assert page.locator("html").get_attribute("lang") == OTHER[lang]
    assert efficiency(page.locator(FIRST).inner_text()) == efficiency(logged)
    assert page.locator("#network-used").filter(has_text="nccl_fit").count() == 1  # said: it rests on the link
    assert fit_of(page.locator(".lang-switch").get_attribute("href")) == fit  # and back, as it came
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.errors == []


@pytest.mark.parametrize(("width", "lang"), [(390, "fr"), (1280, "en")])
def test_without_javascript_the_language_link_carries_nccl_fit(
    browser: Any, server: str, width: int, lang: str
) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900}, java_script_enabled=False)
    page.goto(f"{server}/predict?{JOB}&lang={lang}")
    page.fill("#nccl_log", LOG.read_text(encoding="utf-8"))
    page.click("button[type=submit]")  # posted: a log is too long for a link
    page.locator("#network-used").wait_for()
    logged = page.locator(FIRST).inner_text()
    fit = page.locator("#nccl_fit").input_value()
    assert fit.startswith("n1_")
    href = page.locator(".lang-switch").get_attribute("href")
    assert fit_of(href) == fit
    assert "nccl_log" not in href
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={OTHER[lang]}"))
    page.locator("#network-used").wait_for()
    assert fit_of(page.url) == fit
    assert efficiency(page.locator(FIRST).inner_text()) == efficiency(logged)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize(("width", "lang", "how"), [(390, "fr", "paste"), (1280, "en", "file")])
def test_emptying_the_log_empties_nccl_fit(browser: Any, server: str, width: int, lang: str, how: str) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/predict?{JOB}&lang={lang}")
    presets = page.locator(FIRST).inner_text()
    read_log(page, how)
    page.fill("#nccl_log", "")
    page.locator("#network-used").wait_for(state="detached")  # the presets again, not the log's run
    assert page.locator("#nccl_fit").input_value() == ""
    page.wait_for_url(lambda url: fit_of(url) is None)
    assert page.locator(FIRST).inner_text() == presets
    assert page.errors == []


def test_a_linked_nccl_fit_stays_while_the_log_is_empty(browser: Any, server: str) -> None:
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/predict?{JOB}&lang=en")
    read_log(page, "file")
    fit = fit_of(page.url)
    logged = page.locator(FIRST).inner_text()
    page.goto(f"{server}/predict?{JOB}&nccl_fit={fit}&lang=en")  # a link shared: its log is not here
    assert page.locator(FIRST).inner_text() == logged
    page.fill("#nccl_log", "x")  # a log begun, then emptied: the link's nccl_fit was not the log's
    page.locator("#nccl_log-error").wait_for()
    page.fill("#nccl_log", "")
    page.locator("#nccl_log-error").wait_for(state="hidden")
    page.locator("#network-used").filter(has_text="nccl_fit").wait_for()
    assert page.locator("#nccl_fit").input_value() == fit
    assert page.locator(FIRST).inner_text() == logged
    assert page.errors == []


ONE_NODE = LOG.with_name("all_reduce_1node.txt")
SECOND = "#predictions tbody tr:nth-child(2) td:nth-child(2)"  # 64 devices: past the 2-node run's own shape


@pytest.mark.parametrize(("width", "lang"), [(390, "fr"), (1280, "fr"), (390, "en"), (1280, "en")])
def test_two_logs_pasted_travel_together(browser: Any, server: str, width: int, lang: str) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/predict?{JOB}&lang={lang}")
    page.fill("#nccl_log", LOG.read_text(encoding="utf-8"))
    page.wait_for_url(re.compile(r"[?&]nccl_fit=n1_"))
    alone = page.locator(SECOND).inner_text()
    page.fill("#nccl_log", ONE_NODE.read_text(encoding="utf-8") + "\n" + LOG.read_text(encoding="utf-8"))
    page.wait_for_function("() => (document.querySelector('#nccl_fit').value.match(/_c/g) || []).length === 2")
    page.wait_for_url(lambda url: (fit_of(url) or "").count("_c") == 2)
    together = page.locator(SECOND).inner_text()
    assert efficiency(together) != efficiency(alone)  # the node's own run counts too
    fit = fit_of(page.url)
    assert page.locator("#prediction-notes li").filter(has_text="all_reduce").count() == 3  # the runs, each given back
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={OTHER[lang]}"))
    assert fit_of(page.url) == fit
    assert efficiency(page.locator(SECOND).inner_text()) == efficiency(together)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.errors == []
