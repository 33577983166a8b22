"""One log, two bandwidths: probe --import's 1/β and /predict's bus bandwidth, related (issue 27, point 9)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale.cli import main
from dpscale.nccltests import import_logs, read_log
from dpscale.web.app import create_app

DATA = Path(__file__).resolve().parents[1] / "data" / "nccl"


def test_the_import_table_says_what_its_bandwidth_is(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["probe", "--import", str(DATA / "all_reduce_2nodes.txt"), "--out", str(tmp_path / "p.json")])
    code = ended.value.code
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "Bandwidth 1/β (GB/s)" in out
    assert "1/β is a bus bandwidth" in out
    assert "busbw = algbw·2(n−1)/n for an all-reduce of n ranks" in out
    assert "algbw = bytes ÷ time" in out


def test_the_page_relates_the_log_s_busbw_to_its_algbw_and_to_the_fitted_rate() -> None:
    client = TestClient(create_app())
    log = (DATA / "all_reduce_2nodes.txt").read_text(encoding="utf-8")
    page = client.post("/predict?lang=en", data={"nccl_log": log})
    assert page.status_code == 200
    said = re.search(r'id="network-bandwidths">(.*?)</p>', page.text, re.S)
    assert said
    text = " ".join(unescape(said.group(1)).split())
    assert "busbw = algbw·2(n−1)/n for an all-reduce of n ranks" in text
    assert "algbw = bytes ÷ time" in text
    read = read_log(DATA / "all_reduce_2nodes.txt")
    best = max(row.busbw for row in read.rows)
    algbw = best * 16 / (2 * 15)  # 363 GB/s of busbw on 16 ranks
    assert f"Here n = 16: an algorithm bandwidth of up to {algbw / 1e9:.1f} GB/s." in text
    inter = import_logs([read]).profile.inter
    assert inter is not None
    assert f"between nodes, {inter.bandwidth / 1e9:.1f} GB/s, is in busbw's terms" in text
    plain = client.post("/predict?lang=en", data={"nccl_log": ""})
    assert 'id="network-bandwidths"' not in plain.text
