"""predict calibrated on a run's profiler traces (dpscale.predict.traced), from a measured breakdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpscale import InvalidInput
from dpscale.explain import Calibration
from dpscale.predict.collectives import Link
from dpscale.predict.model import Cluster, Workload, predict
from dpscale.predict.traced import calibrated


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
    from dpscale.predict.inputs import PREDICT

    path = tmp_path / "rank0.json"
    if written == "not-a-trace":
        path.write_text("hello", encoding="utf-8")
    values = {"devices": [8, 16], "per_device_throughput": 100.0, "batch": 32.0, "params": 25.6e6}
    with pytest.raises(InvalidInput) as caught:
        PREDICT.build({**values, "from_trace": str(path)})
    assert caught.value.field == "from_trace"
