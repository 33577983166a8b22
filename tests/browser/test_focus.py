"""What the keyboard and a screen reader meet, in headless Chromium: the focus ring on every control, the
line the results' status says, the 404 page's language switch, /docs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_page import AXE, new_page

pytestmark = pytest.mark.browser


def luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(parse(a)), luminance(parse(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def parse(colour: str) -> tuple[float, ...]:
    found = re.match(r"rgba?\(([^)]*)\)", colour)
    assert found is not None, colour
    values = tuple(float(v) for v in found.group(1).split(","))
    assert len(values) == 3 or values[3] == 1, colour  # an opaque ring
    return values


RING = """() => {
  const e = document.activeElement, s = getComputedStyle(e);
  const kind = e.matches('.scroll') ? 'table' : e.tagName.toLowerCase() + (e.type ? ':' + e.type : '');
  return [kind, e.id || e.className || e.textContent.trim().slice(0, 30), s.outlineStyle, parseFloat(s.outlineWidth),
          s.outlineColor, parseFloat(s.outlineOffset)];
}"""


def rings(page: Any, most: int = 150) -> list[list[Any]]:
    """Each element the Tab key reaches, in order, with its focus ring."""
    seen = []
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement === document.body"):
            break
        seen.append(page.evaluate(RING))
    return seen


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize(
    ("path", "kinds"),
    [
        ("/predict", {"select:select-one", "table", "summary", "input:text", "button:submit", "a"}),
        ("/explain", {"input:file", "input:checkbox"}),
    ],
)
def test_every_control_has_a_ring_that_stands_out(
    browser: Any, server: str, path: str, kinds: set[str], width: int, lang: str
) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900})
    page.goto(f"{server}{path}?lang={lang}")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # every field reachable
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    reached = rings(page)
    assert kinds <= {kind for kind, *_ in reached}, {kind for kind, *_ in reached}
    for kind, name, style, outline, colour, offset in reached:
        assert style == "solid", (kind, name, style)
        assert outline >= 3, (kind, name, outline)
        assert offset >= 2, (kind, name)  # the page's colour between the ring and the control
        assert contrast(colour, "rgb(255, 255, 255)") >= 3, (kind, name, colour)
        assert contrast(colour, background) >= 3, (kind, name, colour, background)
        assert contrast(colour, "rgb(238, 245, 252)") >= 3, (kind, name, colour)  # a highlighted row (tr.current)


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize(
    ("path", "field", "value", "says"),
    [
        ("/", "#devices", "10", {"fr": "Débit réel", "en": "Actual throughput"}),
        ("/predict", "#devices", "8, 16", {"fr": "Appareils", "en": "Devices"}),
        ("/plan", "#devices", "32", {"fr": "Durée d'entraînement", "en": "Time to train"}),
    ],
)
def test_the_status_says_a_line_not_the_tables(
    browser: Any, server: str, path: str, field: str, value: str, says: dict[str, str], lang: str
) -> None:
    page = new_page(browser)
    page.goto(f"{server}{path}?lang={lang}")
    assert page.locator("#results").get_attribute("aria-live") is None
    said = page.locator("#said")
    assert said.get_attribute("role") == "status"
    assert said.inner_text() == ""
    page.fill(field, value)
    page.wait_for_function("() => document.getElementById('said').textContent.length > 0")
    text = said.text_content() or ""
    assert says[lang] in text
    assert len(text) <= 200, text
    assert "\n" not in text
    assert said.evaluate("e => e.getBoundingClientRect().width") <= 1  # heard, not seen
    page.fill("#per_device_throughput", "")  # an empty field: the status says why there are no results
    page.wait_for_function("t => document.getElementById('said').textContent !== t", arg=text)
    assert page.locator("#placeholder").inner_text() == said.text_content()
    assert page.errors == []


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_404_language_switch_keeps_the_address(browser: Any, server: str, lang: str) -> None:
    other = "en" if lang == "fr" else "fr"
    page = new_page(browser)
    page.goto(f"{server}/old/page?lang={lang}")
    page.click(".lang-switch")
    page.wait_for_url(re.compile(f"/old/page\\?lang={other}$"))
    assert page.locator("html").get_attribute("lang") == other
    assert "/old/page" in page.locator("#refusal").inner_text()


@pytest.mark.parametrize(("path", "text"), [("/explain", "Skip to the traces"), ("/old/page", "Skip to the content")])
def test_the_skip_link_says_where_it_leads(browser: Any, server: str, path: str, text: str) -> None:
    page = new_page(browser)
    page.goto(f"{server}{path}?lang=en")
    page.keyboard.press("Tab")
    skip = page.locator(".skip")
    assert skip.is_visible()
    assert skip.inner_text() == text
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"


@pytest.mark.parametrize("width", [390, 1280])
def test_docs_has_no_serious_violation_and_a_ring_on_schema_buttons(browser: Any, server: str, width: int) -> None:
    page = new_page(browser, viewport={"width": width, "height": 900}, bypass_csp=True)
    page.goto(f"{server}/docs")
    page.locator(".opblock").first.wait_for()
    page.locator(".models .json-schema-2020-12-expand-deep-button").first.wait_for()
    page.add_script_tag(content=Path(AXE).read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps([(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in serious])
    assert not [v for v in result["violations"] if v["id"].startswith("landmark")]
    button = page.locator(".models .json-schema-2020-12-expand-deep-button").first
    button.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focused by the keyboard, as :focus-visible asks
    style, width, colour = button.evaluate(
        "b => { const s = getComputedStyle(b); return [s.outlineStyle, parseFloat(s.outlineWidth), s.outlineColor]; }"
    )
    assert style == "solid"
    assert width >= 3
    assert contrast(colour, "rgb(255, 255, 255)") >= 3
    back = page.locator('a[href="/?lang=fr"]')
    assert back.get_attribute("lang") == "fr"
    back.click()
    page.wait_for_url(re.compile(r"/\?lang=fr$"))
    assert page.locator("html").get_attribute("lang") == "fr"
