"""``nccl_fit``: what a link carries of an nccl-tests log, read back to the log's own numbers (issue 27, point 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from dpscale.errors import InvalidInput
from dpscale.predict.inputs import PREDICT
from dpscale.predict.linked import MAX_NETWORK, network_text, read_network
from dpscale.predict.network import from_log
from dpscale.reading import read_input
from dpscale.web.app import create_app

DATA = Path(__file__).parent / "data" / "nccl"
LOGS = sorted(p.name for p in DATA.glob("*.*"))
NCCL_LOG = PREDICT.get("nccl_log")
# An 8B model on nodes of 8, the node's links typed (a preset): the 2-node log's network tier is fitted again to them.
JOB: dict[str, Any] = {
    "devices": [8, 16, 64, 256, 1024],
    "batch": 4.0,
    "params": 8e9,
    "per_device_throughput": 3.0,
    "intra": "nvlink3",
    "inter": "ib-hdr",
    "nics": 4,
}


def log_of(name: str) -> Any:
    assert NCCL_LOG is not None
    return read_input(NCCL_LOG, (DATA / name).read_text(encoding="utf-8"), "en")


def fit_of(name: str) -> str:
    """The ``nccl_fit`` text of the log ``name``, as the prediction states it."""
    described = PREDICT.build({**JOB, "nccl_log": log_of(name)}).network
    assert described is not None
    return str(described["fit"])


def efficiency(values: dict[str, Any]) -> np.ndarray:
    return np.asarray(PREDICT.build({**JOB, **values}).predict().efficiency)


@pytest.mark.parametrize("name", LOGS)
def test_the_text_reads_back_to_the_network_the_log_gives(name: str) -> None:
    logged = from_log(log_of(name))
    text = network_text(logged)
    assert text == fit_of(name)  # what the prediction states of the log carries it
    assert text.startswith("n1_c")
    assert len(text) < 500
    assert all(c.isalnum() or c in "._-" for c in text)  # nothing a URL escapes
    carried = read_network(text)
    assert carried.devices_per_node == logged.devices_per_node
    for mine, theirs in ((carried.intra, logged.intra), (carried.inter, logged.inter)):
        assert (mine is None) == (theirs is None)
        if mine is not None and theirs is not None:
            assert mine.in_network == theirs.in_network
            assert mine.bandwidth == pytest.approx(theirs.bandwidth, rel=1e-5)  # times to the ns
            assert mine.latency == pytest.approx(theirs.latency, rel=1e-5)
    assert [c[0] for c in carried.collectives] == [c[0] for c in logged.collectives]
    assert np.allclose(carried.runs[0].sizes, logged.runs[0].sizes, rtol=0, atol=0.51e-9)  # to the ns
    assert network_text(carried) == text  # read and written again: the same text


@pytest.mark.parametrize("name", LOGS)
def test_a_prediction_from_the_text_is_the_logs(name: str) -> None:
    """The run travels, not only α and β: given back at its shape and fitted again to the typed node links."""
    from_the_log = PREDICT.build({**JOB, "nccl_log": log_of(name)}).predict()
    text = from_the_log.assumptions["network_profile"]["fit"]
    from_the_text = PREDICT.build({**JOB, "nccl_fit": text}).predict()
    assert from_the_text.efficiency == pytest.approx(from_the_log.efficiency, rel=1e-6)
    assert from_the_text.step_time == pytest.approx(from_the_log.step_time, rel=1e-6)
    said = from_the_text.assumptions["network_profile"]
    assert said["carried"] is True
    assert "carried" not in from_the_log.assumptions["network_profile"]
    for key in ("collective", "ranks", "hosts", "busbw"):
        assert said[key] == from_the_log.assumptions["network_profile"][key]


def test_the_text_changes_the_prediction_and_a_log_given_too_wins() -> None:
    two_nodes = log_of("all_reduce_2nodes.txt")
    one_node = fit_of("all_reduce_1node.txt")
    plain = efficiency({})
    logged = efficiency({"nccl_log": two_nodes})
    assert not np.allclose(plain, logged)
    assert np.allclose(efficiency({"nccl_log": two_nodes, "nccl_fit": one_node}), logged, rtol=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "n2_car_r16_h2_d8_g8_u3e11_s8.100",  # another version
        "n1_car_r16_h2_d8_g8_u3e11",  # no run
        "n1_cxx_r16_h2_d8_g8_u3e11_s8.100",  # no such collective
        "n1_car_r16_h2_d8_g8_u3e11_s8.100.16",  # a size without its time
        "n1_car_r16_h2_d8_g8_u3e11_s16.100.8.100",  # sizes not increasing
        "n1_car_r16_h2_d8_g8_u-3e11_s8.100",  # a negative bus bandwidth
        "n1_car_r16_h2_d8_u3e11_s8.100",  # no devices per node
        "n1_car_r16_r16_h2_d8_g8_u3e11_s8.100",  # a field twice
        "n1_car_r2_h4_d8_g8_u3e11_s8.100",  # more hosts than ranks
        "n1_car_r16_h2_d8_g8_u3e11_s8.100%20",
        "n1_car_r16_h2_d8_g8_u3e11_s" + ".".join(["8.100"] * MAX_NETWORK),  # too long
    ],
)
def test_a_bad_text_is_refused_naming_the_input_and_what_is_accepted(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        read_network(text)
    assert caught.value.field == "nccl_fit"
    message = str(caught.value)
    assert "the text /predict's link gives for an nccl-tests log" in message
    assert len(message) < 600  # the text cut short


def test_the_api_takes_it_in_a_query_and_refuses_a_bad_one_by_name() -> None:
    client = TestClient(create_app())
    text = fit_of("all_reduce_2nodes.txt")
    body = dict(JOB.items())
    answer = client.get("/api/v1/predict", params={**body, "nccl_fit": text})
    assert answer.status_code == 200, answer.text[:300]
    logged = client.post("/api/v1/predict", json={**body, "nccl_log": (DATA / "all_reduce_2nodes.txt").read_text()})
    found = [row["efficiency"] for row in answer.json()["predictions"]]
    assert found == pytest.approx([row["efficiency"] for row in logged.json()["predictions"]], rel=1e-6)
    assert answer.json()["assumptions"]["network_profile"]["fit"] == text
    bad = client.get("/api/v1/predict", params={**body, "nccl_fit": "n1_nope"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "nccl_fit"
    too_long = client.get("/api/v1/predict", params={**body, "nccl_fit": "n1_" + "s" * MAX_NETWORK})
    assert too_long.status_code == 422
