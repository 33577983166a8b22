"""Sharded data parallelism (dpscale.predict.sharding): ZeRO 1–3, FSDP and HSDP in the model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.collectives.costs import all_gather_time, all_reduce_time, busbw, reduce_scatter_time
from dpscale.collectives.link import Link
from dpscale.predict import presets
from dpscale.predict.definition import PREDICT
from dpscale.predict.levers import levers
from dpscale.predict.model import Cluster, Reference, Workload, predict
from dpscale.predict.sharding import communication_volume, memory
from tests.conftest import assert_close

GiB = 2**30
H100_NODE = Cluster(presets.link("intra", "nvlink4"), 8, presets.link("inter", "ib-ndr", nics=8))
LLAMA_8B = Workload(3.0, 4, 8.03e9, grad_bytes=4.0, param_bytes=2.0)  # bf16 weights, fp32 reduction

workloads = st.builds(
    Workload,
    per_device_throughput=st.floats(1, 1e4),
    batch=st.floats(1, 512),
    params=st.floats(1e6, 1e11),
    grad_bytes=st.sampled_from([2.0, 4.0]),
    accumulation=st.integers(1, 8),
    param_bytes=st.sampled_from([2.0, 4.0]),
    optimizer=st.sampled_from(["adam", "sgd"]),
    layers=st.integers(1, 96),
)
clusters = st.builds(
    Cluster,
    intra=st.builds(Link, st.floats(1e9, 1e12), st.floats(0, 1e-4), st.floats(0.1, 1)),
    devices_per_node=st.sampled_from([1, 2, 4, 8]),
    inter=st.none() | st.builds(Link, st.floats(1e8, 1e11), st.floats(0, 1e-4), st.floats(0.1, 1)),
    algorithm=st.sampled_from(["auto", "ring", "tree", "hierarchical"]),
    overlap=st.booleans(),
    jitter=st.floats(0, 0.1),
    sharding=st.sampled_from(["ddp", "zero1", "zero2", "zero3", "hybrid"]),
)
COUNTS = np.array([1, 2, 4, 8, 16, 64, 256, 1024])


def test_reduce_scatter_and_all_gather_are_the_halves_of_a_ring_all_reduce() -> None:
    link = Link(100e9, 5e-6, 1.0)
    size = 2**30
    halves = reduce_scatter_time(size, 8, intra=link) + all_gather_time(size, 8, intra=link)
    assert_close(float(halves), float(all_reduce_time(size, 8, intra=link, algorithm="ring")))


def test_reduce_scatter_bus_bandwidth_is_the_link_rate_as_nccl_tests_define_it() -> None:
    link = Link(50e9, 0.0, 1.0)  # no latency: the bandwidth term alone
    for ranks in (2, 8, 64):
        seconds = reduce_scatter_time(2**32, ranks, intra=link)
        assert_close(float(busbw(2**32, seconds, ranks, "reduce_scatter")), 50e9)
        assert_close(float(busbw(2**32, seconds, ranks, "all_gather")), 50e9)
        # the all-reduce's factor is twice theirs: the same time would read as twice the rate
        assert_close(float(busbw(2**32, seconds, ranks)), 100e9)


@given(w=workloads)
def test_zero1_and_zero2_send_what_ddp_sends_and_zero3_half_as_much_again(w: Workload) -> None:
    w = replace(w, param_bytes=w.grad_bytes, accumulation=1)  # equal bytes, one micro-step
    ddp = communication_volume(COUNTS, w, Cluster(Link(1e9), sharding="ddp"))
    for strategy, factor in (("zero1", 1.0), ("zero2", 1.0), ("zero3", 1.5)):
        volume = communication_volume(COUNTS, w, Cluster(Link(1e9), sharding=strategy))
        np.testing.assert_allclose(volume, factor * ddp, rtol=1e-12)


@given(w=workloads)
def test_each_stage_shards_one_more_state_as_one_over_n(w: Workload) -> None:
    n = COUNTS.astype(float)
    whole = {name: memory(n, w, Cluster(Link(1e9), sharding="ddp")) for name in ("ddp",)}["ddp"]
    zero1 = memory(n, w, Cluster(Link(1e9), sharding="zero1"))
    zero2 = memory(n, w, Cluster(Link(1e9), sharding="zero2"))
    zero3 = memory(n, w, Cluster(Link(1e9), sharding="zero3"))
    np.testing.assert_allclose(zero1.optimizer_states, whole.optimizer_states / n, rtol=1e-12)
    np.testing.assert_allclose(zero1.gradients, whole.gradients, rtol=1e-12)
    np.testing.assert_allclose(zero2.gradients, whole.gradients / n, rtol=1e-12)
    np.testing.assert_allclose(zero2.parameters, whole.parameters, rtol=1e-12)
    np.testing.assert_allclose(zero3.parameters, whole.parameters / n, rtol=1e-12)


@given(w=workloads, per_node=st.sampled_from([2, 4, 8]))
def test_hybrid_with_a_group_of_one_node_holds_what_full_sharding_over_one_node_holds(
    w: Workload, per_node: int
) -> None:
    hybrid = memory(np.array([per_node * 16.0]), w, Cluster(Link(1e9), per_node, sharding="hybrid"))
    full = memory(np.array([float(per_node)]), w, Cluster(Link(1e9), per_node, sharding="zero3"))
    np.testing.assert_allclose(hybrid.total, full.total, rtol=1e-12)
    np.testing.assert_allclose(hybrid.model_states, full.model_states, rtol=1e-12)


@given(w=workloads, c=clusters)
def test_memory_never_grows_with_the_device_count(w: Workload, c: Cluster) -> None:
    total = predict(COUNTS, w, c).memory.total
    assert np.all(np.diff(total) <= total[:-1] * 1e-12)


@given(w=workloads, c=clusters, factor=st.floats(1, 100))
def test_more_bandwidth_never_lowers_the_efficiency(w: Workload, c: Cluster, factor: float) -> None:
    faster_intra = replace(c.intra, bandwidth=c.intra.bandwidth * factor)
    faster_inter = None if c.inter is None else replace(c.inter, bandwidth=c.inter.bandwidth * factor)
    slow = predict(COUNTS, w, c).efficiency
    fast = predict(COUNTS, w, replace(c, intra=faster_intra, inter=faster_inter)).efficiency
    assert np.all(fast >= slow * (1 - 1e-9))


@given(w=workloads, c=clusters)
def test_one_device_needs_no_communication_whatever_the_strategy(w: Workload, c: Cluster) -> None:
    p = predict([1], w, c)
    assert p.communication_time[0] == 0
    assert p.communication_volume[0] == 0
    assert p.efficiency[0] == 1


def test_torchtitan_llama3_8b_fsdp_memory_from_8_to_128_h100s() -> None:
    """torchtitan's Llama 3.1 8B under FSDP: 82.4 GiB per H100 on 8 GPUs, 67.0 GiB on 128
    (benchmarks/llama3_h100_202412_torchtitan.md, Tables 1 and 3). Activations and buffers are the
    same at both sizes, so the model states must account for the 15.4 GiB between them."""
    states = predict([8, 128], LLAMA_8B, replace(H100_NODE, sharding="zero3")).memory.model_states
    published = (82.4 - 67.0) * GiB
    assert abs((states[0] - states[1]) - published) <= 0.15 * published


def test_the_strategy_names_users_know_are_its_synonyms() -> None:
    base = {"devices": [64], "per_device_throughput": 3.0, "batch": 4.0, "params": 8e9, "intra": "nvlink4"}
    for name, strategy in (
        ("full_shard", "zero3"),
        ("shard_grad_op", "zero2"),
        ("no_shard", "ddp"),
        ("hsdp", "hybrid"),
    ):
        assert PREDICT.build({**base, "sharding": name}).cluster.sharding == strategy
    with pytest.raises(InvalidInput, match="sharding"):
        PREDICT.build({**base, "sharding": "zero4"})


def test_prediction_json_has_memory_volume_and_fit() -> None:
    c = replace(H100_NODE, sharding="zero3", device_memory=80 * GiB)
    rows = predict([8, 64], LLAMA_8B, c).to_dict()
    first = rows["predictions"][0]
    assert set(first["memory_per_device"]) == {
        "parameters",
        "gradients",
        "optimizer_states",
        "buffers",
        "activations",
        "total",
    }
    assert first["fits"] is True
    assert first["communication_volume"] > 0
    assert rows["assumptions"]["sharding"] == "zero3"
    ddp = predict([8], LLAMA_8B, replace(c, sharding="ddp")).to_dict()["predictions"][0]
    assert ddp["fits"] is False  # 8 B parameters at 18 bytes each: far past 80 GiB


def test_the_levers_offer_a_strategy_that_fits_before_one_that_does_not() -> None:
    c = replace(H100_NODE, sharding="ddp", device_memory=80 * GiB)
    found = levers([64], LLAMA_8B, c)
    names = [lever.name for lever in found]
    assert {"sharding_zero3", "sharding_zero1", "sharding_hybrid"} <= set(names)
    zero3 = next(lever for lever in found if lever.name == "sharding_zero3")
    assert zero3.fits is True
    fitting = [lever.fits for lever in found]
    assert fitting == sorted(fitting, key=lambda fits: fits is not False, reverse=True)


def test_a_reference_measurement_is_given_back_at_its_size() -> None:
    c = replace(H100_NODE, sharding="zero3")
    p = predict([8, 64, 512], LLAMA_8B, c, reference=Reference(8, 20.0))
    assert_close(float(p.actual_throughput[0]), 20.0, rel=1e-9)
    assert_close(float(p.efficiency[0]), 1.0, rel=1e-9)
    assert p.efficiency[2] < p.efficiency[1] < 1


def test_a_measurement_the_interconnect_cannot_allow_is_refused() -> None:
    slow = replace(H100_NODE, intra=Link(1e6), sharding="zero3")
    with pytest.raises(InvalidInput, match="measured"):
        predict([8], LLAMA_8B, slow, reference=Reference(8, 1e9))


def test_the_cli_takes_a_measurement_instead_of_one_device(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from dpscale.cli import main

    with pytest.raises(SystemExit) as exited:
        main(
            ["predict", "-d", "8,64", "--measured", "8:20", "-b", "4", "-p", "8.03B", "--intra", "nvlink4",
             "--inter", "ib-ndr", "--nics", "8", "--sharding", "full_shard", "--param-bytes", "2", "--json"]
        )  # fmt: skip
    assert exited.value.code in (0, None)
    rows = json.loads(capsys.readouterr().out)["predictions"]
    assert_close(rows[0]["actual_throughput"], 20.0, rel=1e-9)
    assert rows[0]["memory_per_device"]["total"] < rows[1]["memory_per_device"]["total"] * 8


@given(
    w=workloads, memory_gib=st.floats(1, 2000), strategy=st.sampled_from(["ddp", "zero1", "zero2", "zero3", "hybrid"])
)
def test_the_fewest_devices_hold_the_model_and_one_fewer_does_not(
    w: Workload, memory_gib: float, strategy: str
) -> None:
    from dpscale.predict.sharding import fewest_devices

    c = Cluster(Link(1e9), 8, sharding=strategy, device_memory=memory_gib * GiB)  # type: ignore[arg-type]
    n = fewest_devices(w, c)
    if n is None:  # then no count up to the group (hybrid) or far beyond holds it
        most = 8 if strategy == "hybrid" else 4096
        assert np.all(memory(np.arange(1, most + 1, dtype=float), w, c).total > c.device_memory)
        return
    assert memory(np.array([float(n)]), w, c).total[0] <= c.device_memory
    if n > 1:
        assert memory(np.array([n - 1.0]), w, c).total[0] > c.device_memory


def test_a_hybrid_group_too_small_for_the_model_answers_at_once() -> None:
    from dpscale.predict.sharding import fewest_devices

    huge = Workload(1.0, 1.0, 70e9, param_bytes=2.0)
    assert fewest_devices(huge, Cluster(Link(1e9), 8, sharding="hybrid", device_memory=80 * GiB)) is None
    assert fewest_devices(huge, Cluster(Link(1e9), 8, sharding="zero3", device_memory=80 * GiB)) == 19


def test_a_measurement_without_its_colon_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    from dpscale.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["predict", "-d", "8,64", "--measured", "8", "-b", "4", "-p", "8B", "--intra", "nvlink4", "--lang", "en"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert (
        err == "error: measured: got '8'; expected devices:throughput (8:7500), or an existing file of measurements\n"
    )


def test_a_sharding_group_without_hybrid_is_refused_not_ignored() -> None:
    from dpscale.errors import InvalidInput
    from dpscale.predict import presets
    from dpscale.predict.levers import levers
    from dpscale.predict.model import Cluster, Workload

    link = presets.link("intra", "nvlink3")
    with pytest.raises(InvalidInput, match="shard_group"):
        Cluster(link, 8, sharding="zero3", shard_group=4)
    hybrid = Cluster(link, 8, sharding="hybrid", shard_group=4)
    found = {lever.name for lever in levers([64], Workload(938, 256, 25.6e6), hybrid)}
    assert {"sharding_zero3", "sharding_ddp"} <= found  # the other strategies, without the group
