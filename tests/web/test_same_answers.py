"""The page and the JSON API give the same answers: on saved requests, every result a page lists under a
quantity's key (``<dd id="actual_throughput">``) is the number the API returns under that key, as far as
the page's rounding shows it. A saved request's ``on_page`` values are the same quantities as the page
is typed (80 GiB, 120 ms) where the API takes a plain number.

The figures are read back from the page's text by the test's own reader (numbers, percentages,
multiples and durations in English), not by the code that wrote them.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from dpscale.web.forms import CALCULATORS

SAVED = json.loads((Path(__file__).parents[1] / "data" / "saved_requests.json").read_text(encoding="utf-8"))
_UNITS = {"day": 86400, "days": 86400, "hr": 3600, "min": 60, "sec": 1, "s": 1, "ms": 1e-3}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def _listed(page: str) -> dict[str, str]:
    """Each result the page lists (a ``<dd>`` with an id inside ``<dl class="results">``), by id."""
    lists = re.findall(r'<dl class="results">(.*?)</dl>', page, flags=re.S)
    return {k: v.strip() for block in lists for k, v in re.findall(r'<dd id="([\w.-]+)">(.*?)</dd>', block, flags=re.S)}


def _number(text: str) -> tuple[float, float]:
    """The value ``text`` shows and how far rounding may have moved it: "115,200 samples/s", "57.6×", "27.27%",
    "3 hr 5 min", "1.32 sec"."""
    pairs = re.findall(r"(-?[\d,]*\.?\d+(?:E[+-]?\d+)?)\s*([a-z]+|%|×)?", text.replace("\u00a0", " "))
    numbers = [(float(n.replace(",", "")), unit, n) for n, unit in pairs]
    value, unit, written = numbers[-1]  # the last part sets the rounding: its unit, its decimals
    decimals = len(written.split(".")[1]) if "." in written else 0
    step = 0.5 * 10.0**-decimals
    if unit in _UNITS:  # a duration: its parts summed, rounded to its last part (a whole unit when it has no decimals)
        total = sum(v * _UNITS[u] for v, u, _ in numbers)
        return total, (_UNITS[unit] if decimals == 0 else step * _UNITS[unit])
    if unit == "%":
        return value / 100, step / 100
    return value, step


def _flat(answer: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every number of ``answer`` by its path: ``seconds``, ``plan.seconds``, ``requested.cost``."""
    out: dict[str, Any] = {}
    for k, v in answer.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out[prefix + k] = v
    return out


@pytest.mark.parametrize(
    "saved", SAVED, ids=lambda s: f"{s['page']}?{'&'.join(f'{k}={v}' for k, v in s['values'].items())}"
)
def test_the_page_lists_what_the_api_returns(client: TestClient, saved: dict[str, Any]) -> None:
    calc = next(c for c in CALCULATORS.values() if c.path == saved["page"])
    unsaid = dict.fromkeys(calc.fields, "")  # a field the request leaves out is empty, not the page's example
    page = client.get(saved["page"], params={**unsaid, **saved["values"], **saved.get("on_page", {}), "lang": "en"})
    answer = client.get(saved["api"], params=saved["values"])
    assert page.status_code == 200
    assert answer.status_code == 200, answer.text
    listed = _listed(page.text)
    numbers = _flat(answer.json())
    assert len(listed) >= 3, page.text  # the results' list is there
    assert set(listed) <= set(numbers), (sorted(set(listed) - set(numbers)), sorted(numbers))  # each one the API's
    for key in listed:
        shown, step = _number(listed[key])
        assert math.isclose(shown, numbers[key], abs_tol=step * 1.0001, rel_tol=1e-9), (key, listed[key], numbers[key])


def test_the_reader_reads_what_the_pages_write() -> None:
    assert _number("115,200 samples/s") == (115200.0, 0.5)
    assert _number("57.6×") == (57.6, 0.05)
    assert _number("27.27%") == pytest.approx((0.2727, 0.00005))
    assert _number("3 hr 5 min") == (11100.0, 60)
    assert _number("1.32 sec") == pytest.approx((1.32, 0.005))


@pytest.mark.parametrize(
    "saved", SAVED, ids=lambda s: f"{s['page']}?{'&'.join(f'{k}={v}' for k, v in s['values'].items())}"
)
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_no_page_gives_two_elements_one_id(client: TestClient, saved: dict[str, Any], lang: str) -> None:
    """A result listed under its JSON key never takes the id of a field (``devices``, ``efficiency``)."""
    calc = next(c for c in CALCULATORS.values() if c.path == saved["page"])
    unsaid = dict.fromkeys(calc.fields, "")
    page = client.get(saved["page"], params={**unsaid, **saved["values"], **saved.get("on_page", {}), "lang": lang})
    ids = re.findall(r'\sid="([^"]+)"', page.text)
    assert sorted({i for i in ids if ids.count(i) > 1}) == []
    assert len(_listed(page.text)) >= 3
