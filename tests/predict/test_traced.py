"""predict calibrated on a run's profiler traces (dpscale.predict.traced), from a measured breakdown."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dpscale import InvalidInput
from dpscale.collectives.link import Link
from dpscale.explain import Calibration
from dpscale.predict.model import Cluster, Workload, predict
from dpscale.predict.traced import calibrated
from tests.explain.test_explain import GLOO, op, step, write


def measured(**changes: object) -> Calibration:
    base: dict[str, object] = {
        "devices": 8,
        "compute_time": 0.20,
        "other_time": 0.05,
        "single_device_step": 0.25,
        "communication_time": 0.04,
        "exposed_communication": 0.01,
        "overlap": 0.75,
        "collective_bytes": None,
        "bandwidth": None,
        "straggler_wait": 0.006,
        "step_time_cv": 0.03,
    }
    return Calibration(**{**base, **changes})  # type: ignore[arg-type]


WORKLOAD = Workload(100.0, 32, 25.6e6)
CLUSTER = Cluster(Link(50e9, 5e-6, 0.8), 8)


def test_the_traces_set_the_speed_the_variation_and_the_links_share() -> None:
    workload, cluster, traced = calibrated(measured(), WORKLOAD, CLUSTER, speed_given=False, jitter_given=False)
    assert workload.per_device_throughput == pytest.approx(32 / 0.25)
    assert cluster.jitter == pytest.approx(0.03)
    assert traced.tier == "intra"
    # the model's communication at the run's size is now the measured one (latency aside: 7·2·5 µs)
    modelled = float(predict([8], workload, cluster).communication_time[0])
    assert modelled == pytest.approx(0.04, rel=0.01)


def test_what_the_user_gave_is_kept() -> None:
    workload, cluster, traced = calibrated(measured(), WORKLOAD, CLUSTER, speed_given=True, jitter_given=True)
    assert workload.per_device_throughput == 100.0
    assert cluster.jitter == CLUSTER.jitter
    assert traced.per_device_throughput is None


def test_a_run_across_nodes_calibrates_the_network() -> None:
    two_tiers = Cluster(Link(300e9, 3e-6, 0.8), 8, Link(25e9, 10e-6, 0.8))
    _, cluster, traced = calibrated(measured(devices=16), WORKLOAD, two_tiers, speed_given=False, jitter_given=False)
    assert traced.tier == "inter"
    assert cluster.intra == two_tiers.intra
    assert cluster.inter is not None
    assert cluster.inter.efficiency != 0.8


def test_a_trace_without_compute_is_refused() -> None:
    with pytest.raises(InvalidInput, match="from_trace"):
        calibrated(measured(single_device_step=0.0), WORKLOAD, CLUSTER, speed_given=False, jitter_given=False)


@pytest.mark.parametrize("written", ["missing", "not-a-trace"])
def test_traces_that_cannot_be_read_are_named_as_from_trace_before_what_they_lack(tmp_path: Path, written: str) -> None:
    # No network is given: a readable trace would still need one, but the trace is named first.
    from dpscale.predict.definition import PREDICT

    path = tmp_path / "rank0.json"
    if written == "not-a-trace":
        path.write_text("hello", encoding="utf-8")
    values = {"devices": [8, 16], "per_device_throughput": 100.0, "batch": 32.0, "params": 25.6e6}
    with pytest.raises(InvalidInput) as caught:
        PREDICT.build({**values, "from_trace": str(path)})
    assert caught.value.field == "from_trace"


# -- what the traces took, said; a rank slow at every step is a fixed imbalance ------------------------


def test_a_variation_past_what_predict_takes_is_said_not_clipped_silently() -> None:
    _, cluster, traced = calibrated(
        measured(step_time_cv=0.704), WORKLOAD, CLUSTER, speed_given=False, jitter_given=False
    )
    assert cluster.jitter == pytest.approx(0.4995)
    assert traced.measured_jitter == 0.704
    assert traced.to_dict()["jitter"] == pytest.approx(0.4995)
    assert len(traced.warnings) == 1
    assert (
        str(traced.warnings[0])
        == "The traces' step-time variation, 70.4 %, is past what predict takes (50 %): 49.95 % is used."
    )


def test_collectives_faster_than_the_whole_link_are_said() -> None:
    _, cluster, traced = calibrated(
        measured(communication_time=1e-6), WORKLOAD, CLUSTER, speed_given=False, jitter_given=False
    )
    assert cluster.intra.efficiency == pytest.approx(1.0)
    assert any("less than the link allows at its whole bandwidth" in str(w) for w in traced.warnings)


def slow_rank_traces(folder: Path) -> Path:
    """Two ranks, three steps of 100 µs: rank 1 computes 30 µs more than rank 0 at every step."""
    for rank, extra in ((0, 0), (1, 30)):
        events = []
        for i, wobble in enumerate((0, 2, -2)):
            start = 100 * i
            busy = 40 + extra + wobble
            events += [
                step(i + 1, start, 100),
                op("aten::mm", start, busy),
                op("gloo:all_reduce", start + busy, 95 - busy, tid=GLOO, cat="user_annotation"),
            ]
        write(folder / f"rank{rank}.json", events, rank=rank, world=2)
    return folder


def test_a_rank_slow_at_every_step_is_a_fixed_imbalance(tmp_path: Path) -> None:
    from dpscale.predict.definition import PREDICT

    values = {"devices": [2, 16, 512], "batch": 32.0, "params": 25.6e6, "intra_bandwidth": 50e9, "inter": "ib-hdr"}
    request = PREDICT.build({**values, "from_trace": str(slow_rank_traces(tmp_path))})
    traced = request.traced
    assert traced is not None
    assert traced.slowest_rank == 1
    assert traced.imbalance == pytest.approx(15 / 60, rel=0.05)  # 75 µs against a mean of 60 µs
    assert traced.jitter < 0.05 < traced.measured_jitter  # what varies within a rank is small
    p = request.predict()
    wait = p.straggler_wait / p.compute_time

    # the fixed part does not grow with the device count; only the random part does, as the slowest of more draws
    def draws(n: int) -> float:
        g, m = min(n, 8), max(1.0, n / 8)
        return math.sqrt(2 * math.log(g)) + math.sqrt(2 * math.log(m))

    expected = [traced.imbalance + traced.jitter * draws(n) for n in (2, 16, 512)]
    assert wait.tolist() == pytest.approx(expected, rel=1e-9)
    assert traced.jitter * draws(512) < traced.imbalance  # the fixed part stays the larger one
    taken = p.assumptions["from_trace"]
    assert taken["imbalance"] == traced.imbalance
    assert taken["slowest_rank"] == 1
    assert dict(p.sources)["compute"] == "trace"
    assert dict(p.sources)["straggler_wait"] == "trace"
    assert (
        dict(p.sources)["exposed_communication"] == "assumed"
    )  # the traces timed the node's link, 512 cross the network
    from dpscale.predict.wording import trace_line

    line = trace_line(p, "en")
    assert line is not None
    assert line.startswith("From the traces of 2 ranks: one device alone")
    assert "rank 1 slower by 25% at every step: a fixed imbalance" in line
    assert "the link inside a node at" in line
