"""What a user gave stays as given, in headless Chromium: a link's strategy through the first edit, /explain's
results through the language switch (with their link to /predict), /predict's chart at the page's width after a
log."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from dpscale.explain import explain
from dpscale.predict.defaults import SHARDING_SYNONYMS
from dpscale.predict.linked import traced_text
from tests.browser.test_page import new_page
from tests.explain_support import cpu_run
from tests.predict.test_traced import slow_rank_traces

pytestmark = pytest.mark.browser

NCCL = Path(__file__).resolve().parents[1] / "data" / "nccl"
LLAMA = "devices=8,64&per_device_throughput=3&batch=4&params=8B&intra=nvlink4&inter=ib-ndr&param_bytes=2"


MEMORY = {"fr": "Mémoire par appareil", "en": "Memory per device"}


def memory_cells(page: Any, lang: str) -> list[str]:
    """The memory column's cells, found by its title (the table is the terminal's: not the last column)."""
    return page.evaluate(
        """title => {
          const heads = [...document.querySelectorAll('#predictions thead tr:first-child th')];
          const i = heads.findIndex(th => th.textContent.trim() === title);
          if (i < 0) throw new Error('no column ' + title);
          return [...document.querySelectorAll('#predictions tbody tr')].map(r => r.cells[i].textContent.trim());
        }""",
        MEMORY[lang],
    )


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize(("given", "meant"), [("full_shard", "zero3"), ("hsdp", "hybrid"), ("shard_grad_op", "zero2")])
def test_a_links_strategy_shows_and_survives_the_first_edit(
    browser: Any, server: str, given: str, meant: str, lang: str
) -> None:
    assert (given, meant) in SHARDING_SYNONYMS
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/predict?{LLAMA}&sharding={given}&lang={lang}")
    assert page.locator("#sharding").input_value() == meant
    memory = memory_cells(page, lang)
    throughput = page.locator("#predictions tbody tr td:nth-child(3)").first.inner_text()
    page.fill("#per_device_throughput", "4")  # an edit elsewhere: the form sends the menu as shown
    page.wait_for_function(
        "old => document.querySelector('#predictions tbody tr td:nth-child(3)').textContent.trim() !== old",
        arg=throughput,
    )
    assert f"sharding={meant}" in page.url
    assert memory_cells(page, lang) == memory  # the same strategy: the same memory per device
    assert page.errors == []


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("width", [390, 1280])
def test_after_a_log_the_chart_keeps_the_pages_width(browser: Any, server: str, width: int, lang: str) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/predict?lang={lang}")
    img = page.locator("#results figure.chart img")
    before = img.evaluate("i => i.getBoundingClientRect().width")
    page.set_input_files("#nccl_log-file", str(NCCL / "all_reduce_2nodes.txt"))
    page.locator("#network-used").wait_for()
    page.wait_for_function(
        "() => { const i = document.querySelector('#results figure.chart img');"
        " return i.currentSrc.startsWith('data:') && i.complete && i.naturalWidth > 0; }"
    )
    shown, natural = img.evaluate("i => [i.getBoundingClientRect().width, i.naturalWidth]")
    assert shown == pytest.approx(before, abs=1)
    if width == 1280:
        assert shown >= 600
        assert natural >= 640  # drawn at the page's width, not a phone's (372 px) blown up
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.errors == []


def explained(page: Any, server: str, files: list[Path], lang: str) -> None:
    page.goto(f"{server}/explain?lang={lang}")
    page.set_input_files("#trace", [str(f) for f in files])
    page.locator("#ranks").wait_for()
    page.locator("#timeline svg").wait_for()


def ranks_table(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#ranks tbody tr", "rows => rows.map(r => Array.from(r.cells, c => c.textContent.trim()))"
    )


HEADER = {"fr": "Rang", "en": "Rank"}


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("width", [390, 1280])
def test_explained_in_the_browser_the_results_survive_the_language_switch(
    browser: Any, server: str, tmp_path: Path, width: int, lang: str
) -> None:
    other = "en" if lang == "fr" else "fr"
    page = new_page(browser, viewport={"width": width, "height": 900})
    explained(page, server, cpu_run(tmp_path), lang)
    rows = ranks_table(page)
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={other}"))
    page.locator("#ranks").wait_for()
    assert page.locator("#ranks th").first.inner_text() == HEADER[other]
    assert len(ranks_table(page)) == len(rows) == 3
    assert [r[0] for r in ranks_table(page)] == [r[0] for r in rows]
    page.locator("#timeline svg").wait_for()
    assert page.locator("#timeline g.rank").count() == 3
    assert page.locator("#kept").is_visible()
    page.click(".lang-switch")  # and back: the same table as first shown
    page.wait_for_url(re.compile(f"lang={lang}"))
    page.locator("#ranks").wait_for()
    assert ranks_table(page) == rows
    assert page.errors == []


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_explained_on_the_server_the_results_survive_the_language_switch(
    browser: Any, server: str, tmp_path: Path, lang: str
) -> None:
    other = "en" if lang == "fr" else "fr"
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/explain?lang={lang}")
    page.check("#server")
    page.set_input_files("#trace", [str(f) for f in cpu_run(tmp_path)])
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    rows = ranks_table(page)
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"lang={other}"))
    page.locator("#analysed").wait_for()
    assert page.locator("#ranks th").first.inner_text() == HEADER[other]
    assert [r[0] for r in ranks_table(page)] == [r[0] for r in rows]
    page.locator("#timeline svg").wait_for()
    assert page.locator("#timeline g.rank").count() == 3
    assert page.errors == []


def test_new_files_replace_what_was_kept(browser: Any, server: str, tmp_path: Path) -> None:
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    explained(page, server, cpu_run(tmp_path), "en")
    (tmp_path / "bad.json").write_text("not a trace")
    page.set_input_files("#trace", [str(tmp_path / "bad.json")])
    page.locator("#explain-error").filter(has_text="bad.json").wait_for()
    page.click(".lang-switch")
    page.wait_for_url(re.compile("lang=fr"))
    page.locator("#waiting").wait_for()  # the results of the files before are not shown for these
    assert page.locator("#ranks").count() == 0
    assert page.errors == []


def test_a_new_tab_starts_empty(browser: Any, server: str, tmp_path: Path) -> None:
    page = new_page(browser)
    explained(page, server, cpu_run(tmp_path), "en")
    fresh = page.context.new_page()  # sessionStorage is the tab's: another tab keeps nothing
    fresh.goto(f"{server}/explain?lang=en")
    fresh.locator("#waiting").wait_for()
    assert fresh.locator("#ranks").count() == 0


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_other_languages_copy_of_the_servers_results_links_to_predict(
    browser: Any, server: str, tmp_path: Path, lang: str
) -> None:
    """The results the tab kept in the other language hold the link to /predict too (issue 27, point 12)."""
    other = "en" if lang == "fr" else "fr"
    files = cpu_run(tmp_path)
    traced = traced_text(explain(files))
    page = new_page(browser, viewport={"width": 390, "height": 900})
    page.goto(f"{server}/explain?lang={lang}")
    page.check("#server")
    page.set_input_files("#trace", [str(f) for f in files])
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    assert predict_query(page) == {"lang": [lang], "traced": [traced]}
    page.click(f"header nav a[href='/explain?lang={lang}']")  # the menu's link names no result: the tab's copy
    page.wait_for_url(re.compile(r"/explain\?lang=" + lang + "$"))
    page.click(".lang-switch")
    page.wait_for_url(re.compile(r"/explain\?lang=" + other + "$"))
    page.locator("#kept").wait_for()  # shown from sessionStorage, in the other language
    assert page.locator("#ranks th").first.inner_text() == HEADER[other]
    assert page.locator("#to-predict a").count() == 1
    assert predict_query(page) == {"lang": [other], "traced": [traced]}
    page.locator("#timeline svg").wait_for()
    page.click("#to-predict a")
    page.wait_for_url("**/predict?**")
    assert page.locator("#traced").input_value() == traced
    assert page.errors == []


def test_files_read_in_the_browser_unname_the_servers_results(browser: Any, server: str, tmp_path: Path) -> None:
    """An address whose results the server no longer keeps shows the tab's copy only if it is theirs; on one that
    names the server's results, files then read in the browser take their place, and neither the address nor the
    language link names the server's any more."""
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/explain?lang=en")
    page.check("#server")
    page.set_input_files("#trace", [str(f) for f in cpu_run(tmp_path)])
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    address = page.url
    assert "result=" in address
    assert "result=" in page.locator(".lang-switch").get_attribute("href")
    assert page.errors == []
    unknown = f"{server}/explain?lang=fr&result={'A' * 32}"
    assert page.goto(unknown).status == 404  # not these results: the tab's copy is not shown for it
    page.locator("#gone").wait_for()
    assert page.locator("#ranks").count() == 0
    page.evaluate(  # as if the server had kept these under that token, and kept them no longer
        "() => { const k = 'dpscale:explain', s = JSON.parse(sessionStorage.getItem(k));"
        " s.result = 'A'.repeat(32); sessionStorage.setItem(k, JSON.stringify(s)); }"
    )
    page.goto(unknown)
    page.locator("#kept").wait_for()  # the tab's copy of them, since the server has them no more
    assert len(ranks_table(page)) == 3
    assert page.locator("#gone").count() == 0
    assert all("404" in e for e in page.errors), page.errors  # the page's own status, which Chromium logs
    page.errors.clear()

    page.goto(address)
    page.locator("#analysed").wait_for()
    page.uncheck("#server")
    (tmp_path / "two").mkdir()
    two = sorted(slow_rank_traces(tmp_path / "two").iterdir())
    page.set_input_files("#trace", [str(f) for f in two])
    page.locator("#explain[data-done]").wait_for()
    assert "result=" not in page.url
    assert page.locator(".lang-switch").get_attribute("href") == "/explain?lang=fr"
    page.click(".lang-switch")
    page.wait_for_url(re.compile(r"lang=fr$"))
    page.locator("#kept").wait_for()
    assert len(ranks_table(page)) == 2  # the files read last, not the server's three ranks
    assert page.errors == []


def predict_query(page: Any) -> dict[str, list[str]]:
    href = page.locator("#to-predict a").get_attribute("href")
    assert urlsplit(href).path == "/predict"
    return parse_qs(urlsplit(href).query)
