"""/explain's figures handed to /predict in one click: the ``traced`` input (issue 27, point 12).

What a link carries of a run's traces is read back into the same Calibration and passed through
the same ``calibrated`` path as ``dpscale predict --from-trace``: the predictions are the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale import InvalidInput
from dpscale.explain import explain
from dpscale.predict.definition import PREDICT
from dpscale.predict.linked import MAX_TRACED, read_traced, traced_text
from dpscale.web.app import create_app
from tests.explain_support import random_run
from tests.predict.test_traced import slow_rank_traces

VALUES = {"devices": [2, 16, 512], "batch": 32.0, "params": 25.6e6, "intra_bandwidth": 50e9, "inter": "ib-hdr"}


def test_the_text_gives_back_the_calibration_exactly(tmp_path: Path) -> None:
    for seed in range(4):
        found = explain(random_run(tmp_path / str(seed), seed))
        text = traced_text(found)
        assert len(text) < MAX_TRACED
        assert all(ch.isalnum() or ch in "_.-" for ch in text)  # nothing a URL escapes
        assert read_traced(text).calibration == found.calibration


def test_a_link_predicts_what_from_trace_predicts(tmp_path: Path) -> None:
    folder = slow_rank_traces(tmp_path)
    by_trace = PREDICT.build({**VALUES, "from_trace": str(folder)}).predict()
    by_link = PREDICT.build({**VALUES, "traced": traced_text(explain(folder))}).predict()
    assert by_link.efficiency.tolist() == by_trace.efficiency.tolist()
    assert by_link.straggler_wait.tolist() == by_trace.straggler_wait.tolist()
    assert by_link.assumptions["from_trace"] == by_trace.assumptions["from_trace"]
    assert by_link.assumptions["from_trace"]["imbalance"] is not None  # the rank slow at every step, carried
    assert dict(by_link.sources)["compute"] == "trace"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "t2_n2_c1",
        "t1_n2",  # fields missing
        "t1_n2_c0.1_o0_s0.1_m0_x0_w0_j0_r0_z1",  # an unknown field
        "t1_n2_n3_c0.1_o0_s0.1_m0_x0_w0_j0_r0",  # twice
        "t1_n2.5_c0.1_o0_s0.1_m0_x0_w0_j0_r0",  # half a device
        "t1_n2_c0.1_o0_s0_m0_x0_w0_j0_r0",  # no step alone
        "t1_n2_c-1_o0_s0.1_m0_x0_w0_j0_r0",
        "t1_n2_cnan_o0_s0.1_m0_x0_w0_j0_r0",
        "t1_n2_c1e999_o0_s0.1_m0_x0_w0_j0_r0",
        "t1_n2_c0.1_o0_s0.1_m0_x0_w0_j0_r0_v2",  # an overlap past 100 %
        "t1_" + "x" * 5000,
        "<script>",
    ],
)
def test_a_malformed_text_is_refused_naming_the_input(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        PREDICT.build({**VALUES, "traced": text})
    assert caught.value.field == "traced"
    message = str(caught.value)
    assert "the text /explain's link gives" in message
    assert len(message) < 400  # the text cut short


def test_the_api_takes_it(tmp_path: Path) -> None:
    client = TestClient(create_app())
    text = traced_text(explain(slow_rank_traces(tmp_path)))
    body = {"devices": [2, 16], "batch": 32, "params": 25.6e6, "intra_bandwidth": 50e9, "traced": text}
    answer = client.get("/api/v1/predict", params=body)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["assumptions"]["from_trace"]["slowest_rank"] == 1


def test_the_page_takes_it_and_the_api_refuses_a_bad_one_by_name(tmp_path: Path) -> None:
    client = TestClient(create_app())
    text = traced_text(explain(slow_rank_traces(tmp_path)))
    body = {"devices": [2, 16], "batch": 32, "params": 25.6e6, "intra_bandwidth": 50e9, "traced": text}
    bad = client.get("/api/v1/predict", params={**body, "traced": "t1_nope"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "traced"
    page = client.get("/predict", params={"lang": "en", "traced": text})  # what /explain's link gives
    assert page.status_code == 200
    assert "From the traces of 2 ranks" in page.text
    assert f'value="{text}"' in page.text  # kept in its field: the language link and the form carry it
