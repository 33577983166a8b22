"""Predict on a user's own nccl-tests logs: each log given back at its shape, the rest extrapolated (issue 24).

Synthetic logs are written in nccl-tests' own layout from known figures (tests/synthetic_nccl.py):
either exactly α + βS, or as NCCL's tuning model prices its ring and tree (latency per tier, a bus
bandwidth set by the slower of the node's links and its network). The real ones are the public
logs of tests/data/nccl/validation (their sources in its INDEX.csv).
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpscale.collectives.costs import all_reduce_time, busbw
from dpscale.collectives.link import Link
from dpscale.nccltests import import_logs, read_log
from dpscale.predict import pricing, uncertainty
from dpscale.predict.definition import PREDICT, Request
from dpscale.predict.job import measured_notes
from dpscale.predict.levers import levers
from dpscale.predict.model import evaluator
from dpscale.predict.presets import link
from dpscale.reading import read_input
from dpscale.records import write_profile
from tests import synthetic_nccl as synthetic

NCCL_LOG = PREDICT.get("nccl_log")
VALIDATION = Path(__file__).parents[1] / "data" / "nccl" / "validation"
JOB: dict[str, Any] = {"batch": 32.0, "params": 250e6, "per_device_throughput": 40.0, "overlap": False}
# A node of 8 GPUs (NVLink at 360 GB/s of bus bandwidth, 1 µs a step) and its network (8 cards, 160 GB/s
# together, 8 µs a step): what the NCCL-like logs are written from.
FIGURES = {"alpha_intra": 1e-6, "busbw_intra": 360e9, "alpha_inter": 8e-6, "busbw_inter": 160e9}
MiB = 2**20


def profile(tmp_path: Path, *logs: Path) -> Path:
    """probe --import of ``logs``: the profile predict --network reads."""
    out = tmp_path / "network.json"
    write_profile(out, import_logs([read_log(p) for p in logs]).profile)
    return out


def nccl_like(tmp_path: Path, ranks: int) -> Path:
    return synthetic.write(
        tmp_path / f"all_reduce_{ranks}.txt", "all_reduce", ranks, 8, synthetic.nccl_like(ranks, 8, **FIGURES)
    )


def request(devices: list[int], **values: Any) -> Request:
    return PREDICT.build({**JOB, "devices": devices, **values})


def log_text(text: str) -> object:
    assert NCCL_LOG is not None
    return read_input(NCCL_LOG, text, "en")


# -- given back ------------------------------------------------------------------------------------


def test_a_profile_gives_back_its_own_log_at_its_shape(tmp_path: Path) -> None:
    # 16 ranks on 2 hosts, α = 30 µs and a bus bandwidth of 40 GB/s, nothing else; no one-host log.
    timed = synthetic.alpha_beta(30e-6, 40e9, "all_reduce", 16)
    path = profile(tmp_path, synthetic.write(tmp_path / "two_hosts.txt", "all_reduce", 16, 8, timed))
    found = request([8, 16, 32], network=str(path), bucket_bytes=1e12)  # one bucket: the gradients whole
    p = found.predict()
    # 1 GB: 46.9 ms, as the log says (between its sizes, interpolated; its times printed to 10 ns)
    assert p.communication_time[1] == pytest.approx(timed(10**9), rel=1e-4)
    for size in synthetic.SIZES:
        assert float(pricing.priced(found.cluster, "all_reduce", 16, size)) == pytest.approx(timed(size), rel=1e-3)
    # the node's links: as the fit took them, and said so
    assert p.assumptions["sources"] == {"intra": "assumed", "inter": "nccl-tests log"}
    assert "the node's own links" in p.assumptions["not_modelled"]
    assert p.assumptions["intra"] is None  # assumed free: null, as sources says, not a bandwidth of 1e18 B/s
    assert p.assumptions["given_back"] == [
        {
            "collective": "all_reduce",
            "ranks": 16,
            "nodes": 2,
            "source": "nccl-tests log",
            "sizes": [8, 8 * 2**30],
            "said": "all_reduce: measured times used at 16 ranks on 2 nodes (sizes 8 B–8 GiB)",
        }
    ]
    assert [m.localized("en") for m in measured_notes(found.cluster)] == [p.assumptions["given_back"][0]["said"]]
    # other node counts are the model's: more nodes never take less time, at the log's bus bandwidth
    assert p.communication_time[2] >= p.communication_time[1]
    assert busbw(10**9, float(p.communication_time[2]), 32) == pytest.approx(40e9, rel=0.05)


def test_the_nodes_links_given_by_hand_are_not_counted_twice(tmp_path: Path) -> None:
    # --intra nvlink4 with a profile that never measured a node: the network is fitted again with it,
    # and the log still comes back at its shape.
    timed = synthetic.alpha_beta(30e-6, 40e9, "all_reduce", 16)
    path = profile(tmp_path, synthetic.write(tmp_path / "two_hosts.txt", "all_reduce", 16, 8, timed))
    found = request([16, 32], network=str(path), intra="nvlink4", bucket_bytes=1e12)
    assert found.cluster.intra == link("intra", "nvlink4")
    assert dict(found.cluster.sources) == {"intra": "preset", "inter": "nccl-tests log"}
    p = found.predict()
    assert p.communication_time[0] == pytest.approx(timed(10**9), rel=1e-4)
    assert p.communication_time[1] == pytest.approx(timed(10**9), rel=0.05)  # 4 nodes: the same bus bandwidth
    assert found.cluster.inter is not None
    assert found.cluster.inter.bandwidth == pytest.approx(40e9, rel=0.05)


@pytest.mark.parametrize("ranks", [8, 16, 32])
def test_nccl_like_logs_come_back_from_the_model_alone_and_exactly_at_their_shape(tmp_path: Path, ranks: int) -> None:
    # 8 ranks on 1 host, 16 on 2, 32 on 4, fitted together: the α-β model gives each back within 5 % at
    # every size from 64 KiB, α counted by the steps of the algorithm that runs; predict gives it back exactly.
    paths = [nccl_like(tmp_path, n) for n in (8, 16, 32)]
    imported = import_logs([read_log(p) for p in paths]).profile
    assert imported.intra is not None
    assert imported.inter is not None
    intra = Link(imported.intra.bandwidth, imported.intra.latency)
    inter = Link(imported.inter.bandwidth, imported.inter.latency)
    assert (intra.bandwidth, intra.latency) == pytest.approx((360e9, 1e-6), rel=0.01)
    assert (inter.bandwidth, inter.latency) == pytest.approx((160e9, 8e-6), rel=0.01)
    truth = synthetic.nccl_like(ranks, 8, **FIGURES)
    found = request([ranks], network=str(profile(tmp_path, *paths)))
    for size in synthetic.SIZES:
        if size < 64 * 1024:
            continue
        model = float(all_reduce_time(size, ranks, intra=intra, inter=inter, per_node=8))
        assert model == pytest.approx(truth(size), rel=0.05), size
        given = float(pricing.priced(found.cluster, "all_reduce", ranks, size))
        assert given == pytest.approx(truth(size), rel=1e-3)  # as printed, to 10 ns


def test_measured_throughputs_with_a_log_keep_the_logs_communication(tmp_path: Path) -> None:
    # --measured calibrates the share of the network reached: a share the log already measured is not
    # applied again, and at the log's shape the communication is the log's.
    timed = synthetic.alpha_beta(30e-6, 40e9, "all_reduce", 16)
    text = synthetic.text("all_reduce", 16, 8, timed)
    values = {k: v for k, v in JOB.items() if k != "per_device_throughput"}
    found = PREDICT.build(
        {**values, "devices": [8, 16, 64], "nccl_log": log_text(text), "measured": [(8, 300.0), (16, 480.0)]}
    )
    p = found.predict()
    buckets = np.ceil(250e6 * 4 / (25 * MiB))
    # between the log's sizes its times are interpolated: within the printing's and the interpolation's 0.5 %
    assert p.communication_time[1] == pytest.approx(buckets * timed(250e6 * 4 / buckets), rel=0.005)
    fitted = p.assumptions["calibration"]["fitted"]["network_share"]
    assert fitted["prior"]["median"] == 1.0  # a measured bandwidth: no further share before the measurements
    share = uncertainty.priors(found.cluster)["network_share"]
    assert share == uncertainty.MEASURED_NETWORK


# -- extrapolated, with a range ----------------------------------------------------------------------


def test_four_and_eight_nodes_from_a_two_node_log_and_its_one_node_log(tmp_path: Path) -> None:
    path = profile(tmp_path, nccl_like(tmp_path, 8), nccl_like(tmp_path, 16))
    found = request([16, 32, 64], network=str(path))
    for ranks in (32, 64):
        truth = synthetic.nccl_like(ranks, 8, **FIGURES)
        for size in (64 * 1024, 4 * MiB, 25 * MiB, 2**30):
            assert float(pricing.priced(found.cluster, "all_reduce", ranks, size)) == pytest.approx(
                truth(size), rel=0.02
            )
    # The interval covers the network's part where it was not measured: the share moves E at 4 and 8
    # nodes, and not at the 2 nodes the log measured.
    job = {**JOB, "bucket_bytes": 25 * MiB, "batch": 2.0}
    found = request([16, 32, 64], network=str(path), **{k: v for k, v in job.items() if k in ("batch",)})
    evaluate = evaluator(np.array(found.devices), found.workload, found.cluster, None)
    low, high = (evaluate({"network_share": share}) for share in (0.75, 1 / 0.75))
    assert low[0] == pytest.approx(high[0], rel=1e-12)
    assert np.all(low[1:] < high[1:] - 1e-4)
    p = found.predict()
    assert "network_share" in uncertainty.unknowns(found.cluster)
    e_low, e_high = p.efficiency_interval
    assert np.all(e_high[1:] - e_low[1:] > 0)


# -- the levers ---------------------------------------------------------------------------------------


def test_use_the_ring_is_priced_as_nccls_ring() -> None:
    # NVLink 4 and 8 HDR cards, gradients in buckets of 1 GiB: across nodes the ring is what NCCL runs for
    # large messages, at the node's whole network bandwidth, so auto is the ring and the hierarchical form
    # (the node's links, then the network's, in turn) is slower.
    found = request([64], intra="nvlink4", inter="ib-hdr", nics=8, batch=8.0, params=1.3e9, bucket_bytes=2**30)
    by_name = {lever.name: lever for lever in levers(list(found.devices), found.workload, found.cluster)}
    assert by_name["algorithm_ring"].gain == pytest.approx(0.0, abs=1e-12)
    assert by_name["algorithm_hierarchical"].gain < -0.01
    assert by_name["algorithm_tree"].gain < 0
    # At 512 ranks NCCL's tuning model counts a ring's 2(n−1) steps: for DDP's 25 MiB buckets the tree,
    # with its log N steps across nodes, is what auto takes (and what NCCL's tuner takes there).
    wide = request([512], intra="nvlink4", inter="ib-hdr", nics=8, batch=8.0, params=1.3e9)
    by_name = {lever.name: lever for lever in levers(list(wide.devices), wide.workload, wide.cluster)}
    assert by_name["algorithm_tree"].gain == pytest.approx(0.0, abs=1e-12)
    assert by_name["algorithm_ring"].gain < 0


# -- real logs ----------------------------------------------------------------------------------------


def _index() -> list[dict[str, str]]:
    with (VALIDATION / "INDEX.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("row", _index(), ids=lambda row: row["file"].split("_")[0])
def test_real_logs_come_back_at_their_own_shape(row: dict[str, str]) -> None:
    path = VALIDATION / row["file"]
    log = read_log(path)
    assert (log.collective, log.ranks, log.hosts) == (row["collective"], int(row["ranks"]), int(row["hosts"]))
    found = PREDICT.build({**JOB, "devices": [log.ranks], "nccl_log": log_text(path.read_text(encoding="utf-8"))})
    times: dict[int, list[float]] = {}
    for r in log.rows:
        times.setdefault(r.bytes, []).append(r.seconds)
    collective = log.collective
    largest = max(times)
    for size, found_times in times.items():
        if size == largest:
            tolerance = 0.05
        elif 4 * MiB <= size <= 64 * MiB:
            tolerance = 0.15
        else:
            continue
        priced = float(pricing.priced(found.cluster, collective, log.ranks, size))  # type: ignore[arg-type]
        assert priced == pytest.approx(statistics.median(found_times), rel=tolerance), size


def test_a_probes_own_all_reduce_is_given_back_too(tmp_path: Path) -> None:
    # dpscale probe's profile keeps its all-reduce times (sizes): a bandwidth measured as reached, given back
    from dpscale.measure.alphabeta import network_profile

    sizes = [{"bytes": 2**k, "seconds": 1e-4 + 2**k / 1e9} for k in range(3, 25)]
    data = {"world_size": 2, "nodes": 1, "sizes": sizes, "backend": "gloo", "device_type": "cpu", "torch": "2.4"}
    out = tmp_path / "network.json"
    write_profile(out, network_profile(data, 2))
    found = request([2, 4], network=str(out))
    assert dict(found.cluster.sources) == {"intra": "probe"}
    for row in sizes:
        given = float(pricing.priced(found.cluster, "all_reduce", 2, row["bytes"]))
        assert given == pytest.approx(row["seconds"], rel=1e-9)
    (said,) = found.predict().assumptions["given_back"]
    assert (said["ranks"], said["nodes"], said["source"], said["sizes"]) == (2, 1, "probe", [8, 2**24])
    assert said["said"] == "all_reduce: measured times used at 2 ranks in one node (sizes 8 B–16 MiB)"


def test_a_what_if_at_the_logs_shape_scales_the_logs_times(tmp_path: Path) -> None:
    # Given back is the model's time times what the log measured over it: doubling the network's
    # bandwidth at the log's own shape still gains what the model says it gains.
    path = profile(tmp_path, nccl_like(tmp_path, 8), nccl_like(tmp_path, 16))
    found = request([16], network=str(path), batch=2.0)
    by_name = {lever.name: lever for lever in levers(list(found.devices), found.workload, found.cluster)}
    assert by_name["inter_bandwidth"].gain > 0.01
    doubled = found.cluster.with_links(lambda one: Link(2 * one.bandwidth, one.latency), tier="inter")
    for size in (4 * MiB, 2**30):
        at_log = float(pricing.priced(found.cluster, "all_reduce", 16, size))
        model_ratio = float(all_reduce_time(size, 16, intra=doubled.intra, inter=doubled.inter, per_node=8)) / float(
            all_reduce_time(size, 16, intra=found.cluster.intra, inter=found.cluster.inter, per_node=8)
        )
        assert float(pricing.priced(doubled, "all_reduce", 16, size)) == pytest.approx(at_log * model_ratio, rel=1e-9)


def test_more_nodes_than_a_log_measured_never_scale_better_than_its_own() -> None:
    # The TCP log (020, 32 ranks on 8 hosts) is 60 % slower than the α-β model at 4 MiB: beyond its shape
    # that shortfall is carried at each size, so E falls with the node count instead of rising to the
    # model's cheaper times (it rose from 43.7 % at 32 ranks to 50.6 % at 128 before).
    path = VALIDATION / "020_polaris-a100-8node-tcp-fallback.log"
    values = {**JOB, "params": 1e9, "overlap": True, "devices": [32, 64, 128, 512]}
    found = PREDICT.build({**values, "nccl_log": log_text(path.read_text(encoding="utf-8"))})
    e = found.predict().efficiency
    assert np.all(np.diff(e) <= 1e-9)
