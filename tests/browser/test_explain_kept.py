"""/explain without JavaScript, in headless Chromium: a real profiler trace posted, then the language switch,
which shows the same results in the other language, and their link to /predict (issue 27, points 3 and 12).

The server keeps the result a while under a token that the page's address and its language link carry
(dpscale.web.explain_page); a browser without JavaScript keeps nothing itself.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from dpscale.calculators.explain import ranks_grid, summary_rows
from dpscale.explain import Explanation, explain
from dpscale.predict.linked import traced_text
from tests.browser.test_page import new_page
from tests.explain_support import cpu_run

pytestmark = pytest.mark.browser

TOKEN = re.compile(r"[?&]result=([A-Za-z0-9_-]{32})(?:&|$)")


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A real torch.profiler trace (tests/browser/real_trace.py, run apart); made-up ones where torch is missing."""
    folder = tmp_path_factory.mktemp("traces")
    if importlib.util.find_spec("torch") is None:
        return cpu_run(folder)
    trace = folder / "rank0.json"
    subprocess.run(
        [sys.executable, "-m", "tests.browser.real_trace", str(trace)],
        cwd=Path(__file__).resolve().parents[2],
        check=True,
        timeout=120,
        capture_output=True,
    )
    return [trace]


def shown(page: Any) -> tuple[list[list[str]], list[list[str]]]:
    """The summary's rows (label, value) and the ranks' table, as the page writes them."""
    summary = page.eval_on_selector_all(
        "#summary > div",
        "rows => rows.map(r => [r.querySelector('dt'), r.querySelector('dd')].map(e => e.textContent.trim()))",
    )
    ranks = page.eval_on_selector_all(
        "#ranks tbody tr", "rows => rows.map(r => Array.from(r.cells, c => c.textContent.trim()))"
    )
    return summary, ranks


def expected(found: Explanation, lang: Any) -> tuple[list[list[str]], list[list[str]]]:
    summary = [[row.label, row.value] for row in summary_rows(found, lang)]
    return summary, [list(row) for row in ranks_grid(found, lang).rows]


def check_results(page: Any, found: Explanation, lang: str, width: int) -> None:
    page.locator("#analysed").wait_for()
    assert page.evaluate("document.documentElement.lang") == lang
    assert shown(page) == expected(found, lang)
    href = page.locator("#to-predict a").get_attribute("href")
    query = parse_qs(urlsplit(href).query)
    assert urlsplit(href).path == "/predict"
    assert query == {"lang": [lang], "traced": [traced_text(found)]}  # the same figures, in this language's page
    assert page.locator("#kept-for").is_visible()  # how long the server keeps them, said
    box = page.locator("#to-predict a").bounding_box()
    assert box is not None
    assert box["x"] + box["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("width", [390, 1280])
def test_without_javascript_the_results_survive_the_language_switch(
    browser: Any, server: str, traces: list[Path], width: int, lang: str
) -> None:
    other = "en" if lang == "fr" else "fr"
    found = explain(traces)
    page = new_page(browser, java_script_enabled=False, viewport={"width": width, "height": 900})
    page.goto(f"{server}/explain?lang={lang}")
    page.set_input_files("#trace", [str(f) for f in traces])
    page.click("button[type=submit]")
    page.wait_for_url(TOKEN)  # the post is redirected to an address that names its result
    token = TOKEN.search(page.url).group(1)  # type: ignore[union-attr]
    check_results(page, found, lang, width)

    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={other}"))
    assert TOKEN.search(page.url).group(1) == token  # type: ignore[union-attr]
    check_results(page, found, other, width)  # the same figures, nothing chosen again

    page.reload()  # a reload asks for the results, not for the files
    check_results(page, found, other, width)
    page.click(".lang-switch")  # and back
    page.wait_for_url(re.compile(f"lang={lang}"))
    check_results(page, found, lang, width)

    page.click("#to-predict a")
    page.wait_for_url("**/predict?**")
    page.locator("#prediction-notes").wait_for()
    assert page.evaluate("document.documentElement.lang") == lang
    assert page.locator("#traced").input_value() == traced_text(found)


def test_without_javascript_an_address_no_longer_kept_says_so(browser: Any, server: str) -> None:
    page = new_page(browser, java_script_enabled=False, viewport={"width": 390, "height": 900})
    page.goto(f"{server}/explain?lang=fr&result={'A' * 32}")
    assert page.locator("#gone").is_visible()
    assert page.locator("#waiting").is_visible()
    assert page.locator("#ranks").count() == 0
    assert page.locator("#trace").is_visible()  # the files may be chosen again at once
