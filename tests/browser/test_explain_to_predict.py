"""/explain hands its figures to /predict in one click (issue 27, point 12), read in the browser or on the server.

The link's ``traced`` text, drawn by explain.js from what the browser computed or written by the
server, reads back into the Calibration dpscale.explain gives, and /predict then says its result
rests on the run's traces, as ``dpscale predict --from-trace`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from dpscale.explain import explain
from dpscale.predict.linked import read_traced
from tests.browser.test_page import new_page
from tests.explain_support import cpu_run, gpu_run
from tests.predict.test_traced import slow_rank_traces

pytestmark = pytest.mark.browser


def traced_of(href: str) -> str:
    query = parse_qs(urlsplit(href).query)
    return query["traced"][0]


def same_calibration(text: str, files: list[Path]) -> None:
    carried = read_traced(text).calibration.to_dict()
    for key, value in explain(files).calibration.to_dict().items():
        if value is None:
            assert carried[key] is None, key
        else:
            assert carried[key] == pytest.approx(value, rel=1e-9, abs=1e-15), key


@pytest.mark.parametrize(("lang", "width"), [("en", 1280), ("fr", 390)])
def test_the_browser_s_results_link_to_predict(
    browser: Any, server: str, tmp_path: Path, lang: str, width: int
) -> None:
    files = sorted(slow_rank_traces(tmp_path).iterdir())
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/explain?lang={lang}")
    page.set_input_files("#trace", [str(f) for f in files])
    link = page.locator("#to-predict a")
    link.wait_for()
    href = link.get_attribute("href")
    assert href.startswith(f"/predict?lang={lang}&traced=t1_")
    same_calibration(traced_of(href), files)
    assert read_traced(traced_of(href)).slowest_rank == 1  # the rank slow at every step, carried
    box = link.bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= width  # within the page at its width
    link.click()
    page.wait_for_url("**/predict?**")
    page.locator("#prediction-notes").wait_for()
    said = page.locator("#prediction-notes").inner_text()
    assert ("From the traces of 2 ranks" if lang == "en" else "2 rangs") in said
    assert page.errors == []


def test_a_gpu_run_s_link_carries_its_bandwidth(browser: Any, server: str, tmp_path: Path) -> None:
    files = gpu_run(tmp_path)
    page = new_page(browser)
    page.goto(f"{server}/explain?lang=en")
    page.set_input_files("#trace", [str(f) for f in files])
    page.locator("#to-predict a").wait_for()
    text = traced_of(page.locator("#to-predict a").get_attribute("href"))
    same_calibration(text, files)
    assert read_traced(text).calibration.bandwidth is not None


def test_the_server_s_results_link_to_predict_without_javascript(browser: Any, server: str, tmp_path: Path) -> None:
    files = cpu_run(tmp_path)
    page = new_page(browser, java_script_enabled=False, locale="fr-FR")
    page.goto(server + "/explain")
    page.set_input_files("#trace", [str(f) for f in files])
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    href = page.locator("#to-predict a").get_attribute("href")
    same_calibration(traced_of(href), files)
    page.locator("#to-predict a").click()
    page.wait_for_url("**/predict?**")
    assert "3 rangs" in page.locator("#prediction-notes").inner_text()
