"""/explain's columns add to the step, for every rank: the library's grid and the server's page (issue 27, point 7).

Step = Compute + Exposed comm. + Other; a rank's wait for the slowest is part of its exposed
communication and said there; the step alone on one device is per rank (compute + other).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from dpscale.calculators.explain import exposed_text, ranks_grid, summary_rows
from dpscale.explain import Spread, explain
from tests.cli.test_cli_explain import two_ranks
from tests.explain_support import random_run


def _ms(cell: str) -> float:
    return float(cell.split()[0].replace(",", ".").replace("\u202f", ""))


@pytest.mark.parametrize("seed", range(6))
def test_every_rank_s_columns_add_to_its_step(tmp_path: Path, seed: int) -> None:
    found = explain(random_run(tmp_path, seed))
    grid = ranks_grid(found, "en")
    assert grid.header[2:7] == ("Step", "Compute", "Exposed comm.", "Other", "Alone (compute + other)")
    for r, cells in zip(found.ranks, grid.rows, strict=True):
        parts = r.compute.mean + r.exposed_communication.mean + r.other.mean
        assert parts == pytest.approx(r.step_time.mean, rel=1e-9, abs=1e-15)
        assert cells[4] == exposed_text(r, "en")
        assert 0 <= r.exposed_wait <= r.exposed_communication.mean
        assert r.work == r.compute.mean + r.other.mean
        shown = _ms(cells[3]) + _ms(cells[4]) + _ms(cells[5])  # to the 3 digits shown
        assert shown == pytest.approx(_ms(cells[2]), rel=0.02, abs=0.002)
        assert _ms(cells[6]) == pytest.approx(_ms(cells[3]) + _ms(cells[5]), rel=0.02, abs=0.002)


def test_a_wait_is_shown_inside_the_exposed_communication(tmp_path: Path) -> None:
    found = explain(sorted(two_ranks(tmp_path).iterdir()))
    rows = {int(cells[0]): cells for cells in ranks_grid(found, "en").rows}
    assert rows[0][4] == "0.055 ms (0.03 ms waiting)"
    assert rows[1][4] == "0.025 ms"  # the slowest rank waits for nobody
    longer = replace(found.ranks[0], exposed_communication=Spread.of([0.2]), wait=Spread.of([0.3]))
    assert longer.exposed_wait == 0.2
    assert exposed_text(longer, "en") == "200 ms (200 ms waiting)"  # never more than what it is part of
    french = exposed_text(replace(longer, exposed_communication=Spread.of([0.204]), wait=Spread.of([0.19])), "fr")
    assert french.startswith("204")
    assert "190" in french


def test_the_step_alone_is_a_range_by_rank_where_the_ranks_differ(tmp_path: Path) -> None:
    found = explain(sorted(two_ranks(tmp_path).iterdir()))
    alone = {r.key: r.value for r in summary_rows(found, "en")}["single_device_step"]
    assert alone == "0.045 ms to 0.075 ms by rank, mean 0.06 ms"
    assert found.work_range == pytest.approx((45e-6, 75e-6))  # each rank's compute + other
    (tmp_path / "one").mkdir()
    one = explain([sorted(two_ranks(tmp_path / "one").iterdir())[1]])
    assert {r.key: r.value for r in summary_rows(one, "en")}["single_device_step"] == "0.075 ms"


def test_the_server_s_page_shows_the_same_columns(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from dpscale.web.app import create_app

    files = sorted(two_ranks(tmp_path).iterdir())
    client = TestClient(create_app())
    sent = [("trace", (f.name, f.read_bytes(), "application/json")) for f in files]
    page = client.post("/explain", params={"lang": "en"}, files=sent, headers={"accept": "text/html"})
    assert page.status_code == 200, page.text[:300]
    table = page.text[page.text.index('id="ranks"') :]
    table = table[: table.index("</table>")]
    header = re.findall(r'<th scope="col">([^<]*)</th>', table)
    assert header[2:7] == ["Step", "Compute", "Exposed comm.", "Other", "Alone (compute + other)"]
    cells = [re.findall(r"<td>([^<]*)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]]
    assert cells[0][4] == "0.055 ms (0.03 ms waiting)"
    for row in cells:
        assert _ms(row[3]) + _ms(row[4]) + _ms(row[5]) == pytest.approx(_ms(row[2]))
    assert "0.045 ms to 0.075 ms by rank, mean 0.06 ms" in page.text
