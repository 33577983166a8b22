"""/predict with an nccl-tests log chosen in the browser, read there and posted with the form, in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_page import new_page

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data" / "nccl"


def test_a_chosen_log_is_read_in_the_browser_and_predicts_with_its_network(browser: Any, server: str) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/predict?lang=en")
    assert page.locator("#network-used").count() == 0
    before = page.locator("#predictions").inner_text()
    page.set_input_files("#nccl_log-file", str(DATA / "all_reduce_2nodes.txt"))
    page.locator("#network-used").filter(has_text="16 ranks on 2 hosts").wait_for()
    assert "# Using devices" in page.locator("#nccl_log").input_value()  # pasted into its field, not uploaded
    assert page.locator("#predictions").inner_text() != before
    assert "nccl_log" not in page.url  # a log is data: the link keeps the short inputs
    assert "devices=" in page.url
    assert page.errors == []


def test_a_bad_log_is_said_beside_its_field(browser: Any, server: str, tmp_path: Path) -> None:
    page = new_page(browser, locale="en-US")
    page.goto(server + "/predict?lang=en")
    broken = tmp_path / "broken.txt"
    broken.write_text(
        (DATA / "all_reduce_1node.txt").read_text(encoding="utf-8").replace("  13.53  ", "  x13.5  ", 1),
        encoding="utf-8",
    )
    page.set_input_files("#nccl_log-file", str(broken))
    error = page.locator("#nccl_log-error")
    error.filter(has_text="a number in column time").wait_for()
    assert "line" in error.inner_text()
    assert page.locator("#nccl_log").get_attribute("aria-invalid") == "true"
    assert page.errors == []


def test_without_javascript_a_pasted_log_is_posted(browser: Any, server: str) -> None:
    page = new_page(browser, java_script_enabled=False, locale="en-US")
    page.goto(server + "/predict?lang=en")
    page.fill("#nccl_log", (DATA / "all_reduce_1node.txt").read_text(encoding="utf-8"))
    page.click("button[type=submit]")
    page.locator("#network-used").filter(has_text="8 ranks on 1 host,").wait_for()
