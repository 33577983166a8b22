"""The links an nccl-tests log or a profile measured, as predict takes them (dpscale.predict.network).

Each collective on its own links where a profile measured it apart: ZeRO and FSDP's
reduce-scatters and all-gathers, DDP's all-reduce.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpscale.collectives.link import Link
from dpscale.errors import InvalidInput
from dpscale.nccltests import import_logs, read_log
from dpscale.predict import presets
from dpscale.predict.definition import PREDICT
from dpscale.predict.model import Cluster, Workload, predict
from dpscale.reading import read_input
from dpscale.records import write_profile

DATA = Path(__file__).parents[1] / "data" / "nccl"
NCCL_LOG = PREDICT.get("nccl_log")
JOB = {"devices": [8, 16, 64], "batch": 32.0, "params": 1.3e9, "per_device_throughput": 40.0}


def _log(name: str) -> object:
    assert NCCL_LOG is not None
    return read_input(NCCL_LOG, (DATA / name).read_text(encoding="utf-8"), "en")


def test_a_slower_all_gather_changes_zero3_but_not_ddp() -> None:
    intra = Link(300e9, 3e-6, 0.8)
    plain = Cluster(intra, 8, Link(100e9, 10e-6, 0.8))
    slow_gather = replace(plain, collectives=(("all_gather", Link(30e9, 30e-6, 0.8), Link(10e9, 50e-6, 0.8)),))
    workload = Workload(40.0, 4, 7e9, grad_bytes=2.0, param_bytes=2.0)
    ddp = [predict([8, 64], workload, c).efficiency for c in (plain, slow_gather)]
    np.testing.assert_array_equal(ddp[0], ddp[1])  # DDP all-reduces: the all-gather's links are not its
    zero3 = [predict([8, 64], workload, replace(c, sharding="zero3")).efficiency for c in (plain, slow_gather)]
    assert np.all(zero3[1] < zero3[0] - 0.01)
    # the same links for the all-reduce change DDP, as they should
    slow_reduce = replace(plain, collectives=(("all_reduce", *slow_gather.collectives[0][1:]),))
    assert np.all(predict([8, 64], workload, slow_reduce).efficiency < ddp[0] - 0.01)


def test_each_collective_of_an_imported_profile_runs_on_its_own_links(tmp_path: Path) -> None:
    # probe --import of an all-reduce and a reduce-scatter run, then predict --network: zero2 reduce-scatters
    # the gradients on the reduce-scatter's fit and gathers the weights on the profile's main (all-reduce's) link.
    imported = import_logs([read_log(DATA / "all_reduce_1node.txt"), read_log(DATA / "reduce_scatter_1node.txt")])
    path = tmp_path / "network.json"
    write_profile(path, imported.profile)
    request = PREDICT.build({**JOB, "network": str(path), "sharding": "zero2"})
    scatter = imported.profile.collectives["reduce_scatter"][0]
    assert scatter is not None
    assert request.cluster.links("reduce_scatter")[0].bandwidth == scatter.bandwidth
    assert request.cluster.links("all_gather")[0] == request.cluster.intra  # not measured apart
    alone = replace(request.cluster, collectives=())
    assert request.cluster.links("reduce_scatter")[0] != alone.links("reduce_scatter")[0]
    differs = request.predict().step_time != predict(request.devices, request.workload, alone).step_time
    assert np.any(differs)


def test_a_link_given_wins_over_the_profile_for_every_collective(tmp_path: Path) -> None:
    imported = import_logs([read_log(DATA / "reduce_scatter_1node.txt")])
    path = tmp_path / "network.json"
    write_profile(path, imported.profile)
    request = PREDICT.build({**JOB, "network": str(path), "intra": "nvlink3"})
    assert request.cluster.links("reduce_scatter")[0] == presets.link("intra", "nvlink3")


@pytest.mark.parametrize("name", ["all_reduce_1node.txt", "all_reduce_2nodes.txt", "all_gather_2nodes.json"])
def test_a_log_predicts_as_its_imported_profile_does(tmp_path: Path, name: str) -> None:
    # the page's and the API's log, and the command line's probe --import then predict --network: one prediction
    path = tmp_path / "network.json"
    write_profile(path, import_logs([read_log(DATA / name)]).profile)
    for sharding in ("ddp", "zero3"):
        from_log = PREDICT.build({**JOB, "nccl_log": _log(name), "sharding": sharding}).predict()
        from_file = PREDICT.build({**JOB, "network": str(path), "sharding": sharding}).predict()
        np.testing.assert_allclose(from_log.efficiency, from_file.efficiency, rtol=1e-12)
        described = from_log.assumptions["network_profile"]
        assert described["source"] == "nccl-tests log"
        assert (described["ranks"], described["hosts"]) == ((8, 1) if "1node" in name else (16, 2))
        assert described["busbw"] > 1e11  # an H100 node's bus bandwidth, in bytes/s


def test_the_log_replaces_the_presets_it_measured_and_keeps_the_others() -> None:
    request = PREDICT.build({**JOB, "nccl_log": _log("all_reduce_1node.txt"), "intra": "nvlink3", "inter": "ib-hdr"})
    assert request.cluster.intra != presets.link("intra", "nvlink3")  # measured inside the node
    assert request.cluster.inter == presets.link("inter", "ib-hdr")  # one node: the network is the preset's


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("hello", "nccl_log", "all_reduce_perf"),
        ("{", "nccl_log", "readable nccl-tests output"),
        (
            (DATA / "all_reduce_1node.txt").read_text(encoding="utf-8").replace("  13.53  ", "  x13.5  ", 1),
            "line",
            "number",
        ),
    ],
)
def test_a_bad_log_names_the_input_the_line_and_what_was_expected(text: str, field: str, expected: str) -> None:
    assert NCCL_LOG is not None
    with pytest.raises(InvalidInput) as caught:
        read_input(NCCL_LOG, text, "en")
    assert field in str(caught.value.field)
    assert str(caught.value.field).startswith("nccl_log")
    assert expected in str(caught.value)


def test_a_log_past_its_bound_is_refused_saying_it() -> None:
    assert NCCL_LOG is not None
    text = (DATA / "all_reduce_1node.txt").read_text(encoding="utf-8")
    with pytest.raises(InvalidInput, match="MiB"):
        read_input(NCCL_LOG, text + ("# NCCL INFO " + "x" * 1000 + "\n") * 1100, "en")


def test_a_profile_whose_collectives_are_unknown_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "network.json"
    write_profile(path, import_logs([read_log(DATA / "all_reduce_1node.txt")]).profile)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["collectives"] = {"broadcast": {"intra": None, "inter": None}}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidInput, match="network"):
        PREDICT.build({**JOB, "network": str(path)})


def test_the_json_states_each_collectives_own_links() -> None:
    request = PREDICT.build({**JOB, "nccl_log": _log("all_gather_2nodes.json"), "sharding": "zero3"})
    stated = request.predict().to_dict()["assumptions"]["collectives"]
    assert set(stated) == {"all_gather"}
    assert stated["all_gather"]["intra"] is None  # a run across nodes measures the network tier only
    assert stated["all_gather"]["inter"]["bandwidth"] == request.cluster.links("all_gather")[1].bandwidth
    plain = PREDICT.build({**JOB, "intra": "nvlink3"}).predict().to_dict()["assumptions"]
    assert "collectives" not in plain  # a prediction without a profile says what it always said
