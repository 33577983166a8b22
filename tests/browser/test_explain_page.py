"""/explain in headless Chromium: the page's script computes what dpscale.explain computes.

static/trace_rules.js mirrors explain/rank_trace.py, intervals.py, timeline.py and breakdown.py; these tests load the
same trace files into the page and into the core and compare every number the page shows.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dpscale.calculators.explain import ranks_grid, summary_rows
from dpscale.explain import Explanation, explain, read_trace
from dpscale.explain.timeline import step_drawing
from tests.browser.test_page import new_page
from tests.explain.test_explain import op, step, write
from tests.explain_support import cpu_run, gpu_run, random_run

pytestmark = pytest.mark.browser


def analysed(browser: Any, server: str, files: list[Path], *, lang: str = "en", width: int = 1280) -> Any:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}/explain?lang={lang}")
    page.set_input_files("#trace", [str(f) for f in files])
    page.locator("#ranks").wait_for()
    page.locator("#timeline svg").wait_for()
    return page


def close(shown: str | None, expected: float | None) -> bool:
    if expected is None or shown is None:
        return shown is None and expected is None
    return abs(float(shown) - expected) <= 1e-9 * max(1e-6, abs(expected))


def check_parity(page: Any, found: Explanation, lang: str) -> None:
    summary = page.eval_on_selector_all("#summary dd", "els => els.map(e => [e.dataset.key, e.dataset.value])")
    c = found.calibration
    expected = {
        "slowest_rank": found.slowest_rank,
        "step_time": found.step_time,
        "efficiency": found.efficiency,
        "single_device_step": c.single_device_step,
        "communication_time": c.communication_time,
        "straggler_wait": c.straggler_wait,
        "step_time_cv": c.step_time_cv,
        **({"bandwidth": c.bandwidth} if c.bandwidth is not None else {}),
    }
    assert [k for k, _ in summary] == list(expected)
    for key, value in summary:
        assert close(value, expected[key]), (key, value, expected[key])
    rows = page.eval_on_selector_all(
        "#ranks tbody tr", "rows => rows.map(r => Array.from(r.cells, c => c.dataset.value ?? null))"
    )
    assert len(rows) == len(found.ranks)
    for row, r in zip(rows, found.ranks, strict=True):
        wanted = [r.rank, r.steps, r.step_time.mean, r.compute.mean, r.exposed_communication.mean]
        wanted += [r.other.mean, r.compute.mean + r.other.mean, r.overlap]
        assert all(close(s, w) for s, w in zip(row, wanted, strict=True)), (row, wanted)
        step, compute, exposed, other = (float(v) for v in row[2:6])  # the columns add to the step
        assert compute + exposed + other == pytest.approx(step, rel=1e-9, abs=1e-12)
    texts = page.eval_on_selector_all("#summary dd", "els => els.map(e => e.textContent)")
    assert [" ".join(t.split()) for t in texts] == [" ".join(r.value.split()) for r in summary_rows(found, lang)]  # type: ignore[arg-type]
    # What is shown, to the displayed precision: the same text as the server's (and the CLI's) table.
    shown = page.eval_on_selector_all(
        "#ranks tbody tr", "rows => rows.map(r => Array.from(r.cells, c => c.textContent))"
    )
    grid = ranks_grid(found, lang)  # type: ignore[arg-type]
    assert [[" ".join(cell.split()) for cell in row] for row in shown] == [
        [" ".join(cell.split()) for cell in row] for row in grid.rows
    ]
    assert page.locator("#ranks tr.current td").first.inner_text() == str(found.slowest_rank)
    levers = page.eval_on_selector_all(
        "#levers tbody tr", "rows => rows.map(r => Array.from(r.cells).slice(1).map(c => c.dataset.value ?? null))"
    )
    assert len(levers) == len(found.levers)
    for (saving, speedup), lever in zip(levers, found.levers, strict=True):
        assert close(saving, lever.saving)
        assert close(speedup, lever.speedup)
    assert page.locator("#notes li").count() == len(found.notes)


def check_drawing(page: Any, files: list[Path], step: int = -1) -> None:
    """The timeline's rows hold the intervals dpscale.explain.timeline gives (files in rank order)."""
    drawn = page.eval_on_selector_all(
        "#timeline g.rank",
        "rows => rows.map(g => [g.querySelectorAll('rect.compute').length, g.querySelectorAll('rect.exposed').length])",
    )
    expected = [step_drawing(read_trace(f), step) for f in files]
    assert drawn == [[len(e.compute), len(e.exposed)] for e in expected]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_page_computes_what_the_core_computes_on_a_cpu_run(
    browser: Any, server: str, tmp_path: Path, lang: str
) -> None:
    files = cpu_run(tmp_path)
    found = explain(files)
    assert found.ranks[0].skipped == 3
    assert found.slowest_rank == 2
    page = analysed(browser, server, files, lang=lang)
    check_parity(page, found, lang)
    check_drawing(page, files)
    assert page.errors == []


def test_the_page_computes_what_the_core_computes_on_a_gpu_run(browser: Any, server: str, tmp_path: Path) -> None:
    files = gpu_run(tmp_path)
    found = explain(files)
    assert found.calibration.bandwidth is not None
    assert found.notes
    page = analysed(browser, server, files)
    check_parity(page, found, "en")
    assert page.errors == []


def test_random_runs_read_alike_in_the_page_and_the_core(browser: Any, server: str, tmp_path: Path) -> None:
    page = new_page(browser, viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/explain?lang=en")
    for seed in range(8):
        files = random_run(tmp_path / str(seed), seed)
        found = explain(files)
        page.evaluate("document.getElementById('explain').removeAttribute('data-done')")
        page.set_input_files("#trace", [str(f) for f in files])
        page.locator("#explain[data-done]").wait_for()
        check_parity(page, found, "en")
        check_drawing(page, files)
    assert page.errors == []


def test_a_real_profiler_trace(browser: Any, server: str, tmp_path: Path) -> None:
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch (the `measure` extra, installed in CI) makes the real trace")
    trace = tmp_path / "rank0.json"
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-m", "tests.browser.real_trace", str(trace)],
        cwd=root,
        check=True,
        timeout=120,
        capture_output=True,
    )
    found = explain(trace)
    assert found.ranks[0].steps == 3
    assert found.calibration.communication_time > 0
    page = analysed(browser, server, [trace])
    check_parity(page, found, "en")
    assert page.errors == []


def test_the_timeline_draws_each_rank_and_fits_a_phone(browser: Any, server: str, tmp_path: Path) -> None:
    files = cpu_run(tmp_path)
    page = analysed(browser, server, files, lang="fr", width=390)
    svg = page.locator("#timeline svg")
    assert svg.locator("text", has_text="rank").count() == 0  # French labels: « rang »
    assert svg.locator("text", has_text="rang").count() == 3
    for part in ("compute", "exposed", "other"):
        assert svg.locator(f"rect.{part}").count() >= 3
    assert page.locator("#timeline .legend li").count() == 3
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert svg.evaluate("s => s.getBoundingClientRect().right") <= 390
    page.select_option("#step-choice", "0")
    page.locator("#timeline-title", has_text="5").wait_for()
    check_drawing(page, files, 0)
    assert page.errors == []


def test_wide_screen_keeps_the_table_whole(browser: Any, server: str, tmp_path: Path) -> None:
    page = analysed(browser, server, cpu_run(tmp_path), width=1280)
    sizes = page.eval_on_selector_all("#results .scroll", "els => els.map(e => [e.scrollWidth, e.clientWidth])")
    assert sizes
    assert all(scroll <= client for scroll, client in sizes), sizes


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: [d / "notes.json"], "notes.json"),
        (lambda d: [write(d / "empty.json", [op("aten::mm", 0, 5)])], "ProfilerStep"),
    ],
)
def test_a_bad_file_is_named_in_the_page(browser: Any, server: str, tmp_path: Path, make: Any, said: str) -> None:
    (tmp_path / "notes.json").write_text("not a trace")
    page = new_page(browser)
    page.goto(f"{server}/explain?lang=en")
    page.set_input_files("#trace", [str(f) for f in make(tmp_path)])
    error = page.locator("#explain-error")
    error.wait_for()
    assert said in error.inner_text()
    assert page.locator("#ranks").count() == 0


def test_ranks_with_other_steps_are_refused(browser: Any, server: str, tmp_path: Path) -> None:
    files = cpu_run(tmp_path)
    files[2] = write(tmp_path / "rank2.json", [step(1, 0, 100), op("aten::mm", 0, 5)], rank=2, world=3)
    page = new_page(browser)
    page.goto(f"{server}/explain?lang=en")
    page.set_input_files("#trace", [str(f) for f in files])
    page.locator("#explain-error").wait_for()
    assert "rank2.json" in page.locator("#explain-error").inner_text()


def test_nothing_is_sent_unless_asked(browser: Any, server: str, tmp_path: Path) -> None:
    files = cpu_run(tmp_path)
    page = new_page(browser)
    posted: list[str] = []
    page.on("request", lambda request: posted.append(request.url) if request.method == "POST" else None)
    page.goto(f"{server}/explain?lang=en")
    page.set_input_files("#trace", [str(f) for f in files])
    page.locator("#ranks").wait_for()
    page.click("button[type=submit]")
    page.locator("#ranks").wait_for()
    assert posted == []
    page.check("#server")
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    page.locator("#timeline svg").wait_for()  # the server sends the last step of each rank to draw
    assert page.locator("#timeline g.rank").count() == 3
    assert len(posted) == 1
    assert posted[0].startswith(f"{server}/explain")
    assert page.locator("#ranks tbody tr").count() == 3


def test_without_javascript_the_server_explains(browser: Any, server: str, tmp_path: Path) -> None:
    page = new_page(browser, java_script_enabled=False, locale="fr-FR")
    page.goto(server + "/explain")
    assert page.locator("h1").inner_text() == "Où passe la durée d'une étape"
    page.set_input_files("#trace", [str(f) for f in cpu_run(tmp_path)])
    page.click("button[type=submit]")
    page.locator("#analysed").wait_for()
    assert page.locator("#ranks tbody tr").count() == 3


def test_the_page_has_no_serious_accessibility_violation(browser: Any, server: str, tmp_path: Path) -> None:
    from tests.browser.test_page import AXE

    page = new_page(browser, bypass_csp=True)
    page.goto(f"{server}/explain?lang=fr")
    page.set_input_files("#trace", [str(f) for f in cpu_run(tmp_path)])
    page.locator("#timeline svg").wait_for()
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps([(v["id"], v["help"], [n["target"] for n in v["nodes"]]) for v in serious])
