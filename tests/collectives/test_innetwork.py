"""In-network reduction (NVLink SHARP, SHARP): priced, found in a log, kept in a profile, chosen and said (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpscale.collectives.costs import all_reduce_time, busbw, candidates
from dpscale.collectives.innetwork import ALGBW_SHARE, NVLS_EFFICIENCY, NVLS_STEPS
from dpscale.collectives.link import Link
from dpscale.errors import InvalidInput
from dpscale.nccltests import import_logs, read_log
from dpscale.nccltests.reduction import line_rate
from dpscale.predict import pricing
from dpscale.predict.definition import PREDICT
from dpscale.predict.presets import link, read_profile
from dpscale.records import write_profile
from tests import synthetic_nccl as synthetic

VALIDATION = Path(__file__).parents[1] / "data" / "nccl" / "validation"
H100 = VALIDATION / "006_h100-node005-1node-8gpu.log"  # 476 GB/s of busbw on 8 H100s: NVLS
JOB: dict[str, Any] = {"batch": 32.0, "params": 250e6, "per_device_throughput": 40.0}
K = 1 / (ALGBW_SHARE * NVLS_EFFICIENCY)  # link time per byte of S with NVLS: 1.41


# -- the terms ------------------------------------------------------------------------------------------


def test_nvls_in_a_node_moves_each_byte_once_at_nccls_share() -> None:
    node = Link(400e9, 1e-6, 1.0, in_network=True)
    ring, _, nvls = candidates(8, intra=node)
    assert nvls[1] == pytest.approx(K / 400e9)  # against the ring's 2(n−1)/n = 1.75
    assert ring[1] == pytest.approx(1.75 / 400e9)
    assert nvls[0] == pytest.approx(NVLS_STEPS * 1e-6)
    # small messages stay on the ring (14 steps), large ones go through the switches, as NCCL's tuner has it
    assert all_reduce_time(1024, 8, intra=node) == pytest.approx(float(ring[0] + ring[1] * 1024))
    assert all_reduce_time(2**30, 8, intra=node) == pytest.approx(float(nvls[0] + nvls[1] * 2**30))
    # asked for by name, the ring runs without the switches (as NCCL_ALGO=Ring)
    plain = Link(400e9, 1e-6, 1.0)
    assert all_reduce_time(2**30, 8, intra=node, algorithm="ring") == all_reduce_time(2**30, 8, intra=plain)


def test_sharp_across_nodes_sends_s_once_over_the_network() -> None:
    node, cards = Link(400e9, 1e-6), Link(100e9, 5e-6, in_network=True)
    n = 64
    reduced = candidates(n, intra=node, inter=cards, per_node=8)[-1]
    assert reduced[1] == pytest.approx(max(2 / 400e9, 1 / 100e9))  # CollNet: S each way on the network
    assert reduced[0] == pytest.approx(2 * 7 * 1e-6 + 5e-6)
    # in one node SHARP does nothing
    assert len(candidates(8, intra=node, inter=cards, per_node=8)) == 2
    both = candidates(n, intra=Link(400e9, 1e-6, in_network=True), inter=cards, per_node=8)[-1]
    assert both[1] == pytest.approx(K * max(1 / 400e9, 1 / 100e9))


def test_nvls_without_sharp_leaves_the_rings_and_trees_across_nodes() -> None:
    node, cards = Link(400e9, 1e-6, in_network=True), Link(100e9, 5e-6)
    assert len(candidates(64, intra=node, inter=cards, per_node=8)) == 2
    # a vector of rank counts: the switches for the one node, rings and trees beyond it
    mixed = [8, 64]
    times = all_reduce_time(2**30, mixed, intra=node, inter=cards, per_node=8)
    assert times[0] == pytest.approx(all_reduce_time(2**30, 8, intra=node))
    assert times[1] == pytest.approx(all_reduce_time(2**30, 64, intra=node, inter=cards, per_node=8))


@pytest.mark.parametrize(
    ("intra", "inter", "low", "high"),
    [
        ("nvlink4", "ib-ndr", 310e9, 370e9),  # rings: the slower of NVLink and 8 NDR cards
        ("nvlink4-nvls", "ib-ndr", 310e9, 370e9),  # the switches in the node only: rings across
        ("nvlink4", "ib-ndr-sharp", 330e9, 380e9),  # SHARP: S once over the network
        ("nvlink4-nvls", "ib-ndr-sharp", 400e9, 480e9),  # both: above what any ring reaches
    ],
)
def test_the_presets_bus_bandwidth_across_nodes(intra: str, inter: str, low: float, high: float) -> None:
    node, network = link("intra", intra), link("inter", inter, nics=8)
    size = 8 * 2**30
    found = [float(busbw(size, all_reduce_time(size, n, intra=node, inter=network, per_node=8), n)) for n in (32, 128)]
    assert all(low < b < high for b in found), found
    assert max(found) <= 1.15 * min(found)  # flat with the node count


def test_the_nvls_preset_reaches_what_8_h100s_reached() -> None:
    # NVIDIA/nccl-tests issue 290: 476 GB/s of busbw at 4 GiB on one node of 8 H100 SXM (the log 006)
    node = link("intra", "nvlink4-nvls")
    assert node.in_network
    assert float(busbw(2**32, all_reduce_time(2**32, 8, intra=node), 8)) == pytest.approx(476e9, rel=0.03)


# -- found in a log, kept in the profile -------------------------------------------------------------------


def test_a_log_above_the_gpus_line_rate_was_reduced_in_the_switches(tmp_path: Path) -> None:
    log = read_log(H100)
    imported = import_logs([log])
    assert imported.profile.intra is not None
    data = imported.profile.to_dict()
    assert data["intra"]["in_network"] is True
    assert data["collectives"]["all_reduce"]["intra"]["in_network"] is True
    (note,) = imported.notes
    assert "476.5 GB/s" in str(note)
    assert "450 GB/s" in str(note)
    assert "NVLink SHARP in the node" in str(note)
    # fitted with the switches, the model alone gives its largest size back within 5 %
    (check,) = imported.checks
    assert check.largest[2] == pytest.approx(check.largest[1], rel=0.05)
    # the node's links come out as a ring reaches on NVLink 4 (about 0.85 of 450 GB/s), not 480 GB/s
    assert 350e9 < imported.profile.intra.bandwidth < 420e9
    out = tmp_path / "network.json"
    write_profile(out, imported.profile)
    read = read_profile(str(out))
    assert read.intra is not None
    assert read.intra.in_network


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", 450e9),
        ("H100 80GB HBM3", 450e9),
        ("NVIDIA A100-SXM4-40GB", 300e9),
        ("Tesla V100-SXM2-16GB", 150e9),
        ("NVIDIA A100-PCIE-40GB", None),  # a card on PCIe is not judged
        ("NVIDIA L40S", None),
        (None, None),
    ],
)
def test_line_rates_by_the_gpus_name(name: str | None, expected: float | None) -> None:
    assert line_rate(name) == expected


@pytest.mark.parametrize("path", sorted(p for p in VALIDATION.glob("*.log") if not p.name.startswith("006")))
def test_the_other_public_logs_are_rings_and_trees(path: Path) -> None:
    # none of them is above its GPU's line rate (the V100 node reaches 129 GB/s of NVLink 2's 150)
    imported = import_logs([read_log(path)])
    assert imported.notes == ()
    assert all(not (t or {}).get("in_network") for t in (imported.profile.to_dict()[k] for k in ("intra", "inter")))


def test_across_hosts_it_is_said_of_the_network(tmp_path: Path) -> None:
    # 16 H100s on 2 hosts at 600 GB/s of busbw: SHARP, or NVLS with a tree across; said of the network tier
    timed = synthetic.alpha_beta(30e-6, 600e9, "all_reduce", 16)
    path = synthetic.write(tmp_path / "two_hosts.txt", "all_reduce", 16, 8, timed)
    imported = import_logs([read_log(path)])
    data = imported.profile.to_dict()
    assert data["intra"] is None
    assert data["inter"]["in_network"] is True
    assert "in the network" in str(imported.notes[0])
    profile = tmp_path / "network.json"
    write_profile(profile, imported.profile)
    found = PREDICT.build({**JOB, "devices": [16, 32], "network": str(profile)})
    assert found.cluster.inter is not None
    assert found.cluster.inter.in_network
    for size in (2**20, 2**30, 8 * 2**30):  # its own times back
        assert float(pricing.priced(found.cluster, "all_reduce", 16, size)) == pytest.approx(timed(size), rel=2e-3)
    # the same log on a GPU not known is not judged: fitted as rings, the network taken at the log's busbw
    plain = path.read_text(encoding="utf-8").replace("NVIDIA H100 80GB HBM3", "Some Accelerator")
    other = tmp_path / "unknown.txt"
    other.write_text(plain, encoding="utf-8")
    assert import_logs([read_log(other)]).notes == ()


# -- chosen and said ----------------------------------------------------------------------------------------


def test_a_preset_chooses_it_and_the_assumptions_say_it() -> None:
    found = PREDICT.build({**JOB, "devices": [8, 64], "intra": "nvlink4-nvls", "inter": "ib-ndr-sharp", "nics": 8})
    assert found.cluster.intra.in_network
    p = found.predict()
    assert p.assumptions["intra"]["in_network"] is True
    assert p.assumptions["inter"]["in_network"] is True
    plain = PREDICT.build({**JOB, "devices": [8, 64], "intra": "nvlink4", "inter": "ib-ndr", "nics": 8}).predict()
    assert "in_network" not in plain.assumptions["intra"]
    assert p.communication_time[1] < plain.communication_time[1]


# -- the profile as written and read -------------------------------------------------------------------------


def _profile(tmp_path: Path, intra: Any) -> str:
    data = {
        "world_size": 16,
        "nodes": 2,
        "devices_per_node": 8,
        "intra": intra,
        "inter": {"bandwidth": 40e9, "latency": 1e-5, "efficiency": 1.0},
    }
    out = tmp_path / "network.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    return str(out)


@pytest.mark.parametrize(
    "intra",
    [None, {"assumed": "free"}, {"bandwidth": 1e18, "latency": 0.0, "efficiency": 1.0}],
    ids=["null", "assumed", "as-once-written"],
)
def test_a_node_assumed_free_is_read_in_every_form(tmp_path: Path, intra: Any) -> None:
    profile = read_profile(_profile(tmp_path, intra))
    assert profile.intra is None  # not measured: predict assumes it free and says so
    found = PREDICT.build({**JOB, "devices": [16], "network": _profile(tmp_path, intra)})
    assert dict(found.cluster.sources)["intra"] == "assumed"
    assert found.predict().assumptions["intra"] is None


def test_in_network_that_is_not_true_or_false_is_refused(tmp_path: Path) -> None:
    bad = {"bandwidth": 300e9, "latency": 1e-6, "in_network": "yes"}
    with pytest.raises(InvalidInput) as caught:
        read_profile(_profile(tmp_path, bad))
    assert caught.value.field == "network"
    assert "in_network" in str(caught.value)
    assert "'yes'" in str(caught.value)
