"""/predict's table and the terminal's are one presentation: the same columns, rows and legend."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from dpscale.calculators.predict import present as present_prediction
from dpscale.predict.definition import PREDICT
from dpscale.predict.table import prediction_table
from dpscale.web.app import create_app

# A Llama-style 8B model on H100 nodes, in bf16, zero3, with tokens and MFU, and one size over memory.
PAGE = {
    "devices": "8, 64, 512",
    "per_device_throughput": "0.9",
    "batch": "1",
    "params": "8B",
    "intra": "nvlink4",
    "inter": "ib-ndr",
    "nics": "8",
    "param_bytes": "2",
    "sharding": "zero1",
    "device_memory": "40 GiB",
    "tokens_per_sample": "8192",
    "peak_flops": "H100 SXM",
}
LIBRARY = {
    "devices": [8, 64, 512],
    "per_device_throughput": 0.9,
    "batch": 1.0,
    "params": 8e9,
    "intra": "nvlink4",
    "inter": "ib-ndr",
    "nics": 8,
    "param_bytes": 2.0,
    "sharding": "zero1",
    "device_memory": 40 * 2**30,
    "tokens_per_sample": 8192,
    "peak_flops": "H100 SXM",
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def _cells(html: str, tag: str) -> list[str]:
    return [
        " ".join(unescape(re.sub(r"<[^>]+>", "", c)).split())
        for c in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", html, re.S)
    ]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_page_and_the_terminal_show_the_same_columns_and_rows(client: TestClient, lang: str) -> None:
    page = client.get("/predict", params={**PAGE, "lang": lang}).text
    table = page.split('id="predictions"', 1)[1].split("</table>", 1)[0]
    head, body = table.split("<tbody>", 1)
    titles = _cells(head.split('id="sources"', 1)[0], "th")
    rows = [_cells(row, "td") for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    p = PREDICT.build(LIBRARY).predict()
    shown = prediction_table(p, lang)  # type: ignore[arg-type]
    grid = present_prediction(p, lang).grids[0]  # type: ignore[arg-type]
    assert titles == [c.title for c in shown.columns]
    assert [h.split("\n")[-1] for h in grid.header] == [c.heading for c in shown.columns]  # the same columns
    assert len(titles) == len(grid.header) >= 13  # compute, speedup, bound by, tokens/s and MFU among them
    spaced = [[" ".join(c.split()) for c in row] for row in grid.rows]
    assert rows == spaced  # the same values, cell for cell
    assert any("✗" in row[-2] for row in rows)  # 8 devices hold more than 40 GiB under zero1
    legend = _cells(page.split('id="prediction-legend"', 1)[1].split("</ul>", 1)[0], "li")
    assert legend == [" ".join(line.split()) for line in shown.legend]
    assert any("✗" in line for line in legend)  # the mark explained where it shows


def test_the_page_names_compute_speedup_bound_by_tokens_and_mfu(client: TestClient) -> None:
    page = client.get("/predict", params={**PAGE, "lang": "en"}).text
    head = page.split('id="predictions"', 1)[1].split("<tbody>", 1)[0]
    for title in ("Compute", "Speedup", "Bound by", "Tokens/s, whole cluster", "Tokens/s per device", "MFU"):
        assert title in head
    without = client.get("/predict", params={**PAGE, "tokens_per_sample": "", "peak_flops": "", "lang": "en"}).text
    assert "MFU" not in without.split('id="predictions"', 1)[1].split("</table>", 1)[0]
