from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.collectives.costs import (
    TREE_SHARE,
    all_gather_time,
    all_reduce_time,
    bus_bandwidth,
    busbw,
    hierarchical,
    reduce_scatter_time,
    ring,
    tree,
)
from dpscale.collectives.link import Link
from dpscale.predict.presets import link

NVLINK3 = Link(300e9, 3e-6, 0.85)  # per-GPU NVLink 3 bandwidth per direction (A100 SXM)
IB_HDR_X4 = Link(100e9, 10e-6, 0.9)  # 4 × 200 Gb/s HDR InfiniBand per node

sizes = st.floats(1, 1e10)
ranks = st.integers(2, 4096)


@given(size=sizes, n=ranks, bw=st.floats(1e6, 1e12), eff=st.floats(0.1, 1.0))
def test_ring_busbw_is_the_link_rate_without_latency(size: float, n: int, bw: float, eff: float) -> None:
    # nccl-tests define busbw so that a bandwidth-bound ring reports the link's own rate.
    link = Link(bw, 0.0, eff)
    assert busbw(size, ring(size, n, link), n) == pytest.approx(bw * eff, rel=1e-9)


def test_one_rank_costs_nothing() -> None:
    for algorithm in ("ring", "tree", "hierarchical", "auto"):
        assert all_reduce_time(1e8, 1, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm=algorithm) == 0


def test_tree_latency_grows_with_log_n_and_ring_with_n() -> None:
    tiny = 8.0  # bytes: latency-bound
    one = Link(1e9, 1e-5)
    assert tree(tiny, 1024, one) == pytest.approx(2 * 10 * 1e-5 + 2 * tiny / (TREE_SHARE * 1e9))
    assert ring(tiny, 1024, one) == pytest.approx(2 * 1023 * 1e-5 + 2 * 1023 / 1024 * tiny / 1e9)
    assert tree(tiny, 1024, one) < ring(tiny, 1024, one)
    big = 1e11  # bandwidth-bound: the ring sends 2(n−1)/n·S, the tree 2·S at 92 % of the channels' bandwidth
    assert ring(big, 1024, one) < tree(big, 1024, one)


def test_latency_counted_per_tier_as_nccls_tuning_model_counts_it() -> None:
    # src/graph/tuning.cc: a ring all-reduce's 2(n−1) steps, 2(N−1) of them across the network;
    # a tree's 2·((g−1)·intra + log₂ N·inter); a reduce-scatter's or all-gather's n−1, N−1 across.
    intra, inter = Link(1e20, 1e-6), Link(1e20, 1e-5)  # bandwidths that cost nothing: latency alone
    ring_time = all_reduce_time(0, 32, intra=intra, inter=inter, per_node=8, algorithm="ring")
    assert ring_time == pytest.approx((2 * 31 - 2 * 3) * 1e-6 + 2 * 3 * 1e-5)
    tree_time = all_reduce_time(0, 32, intra=intra, inter=inter, per_node=8, algorithm="tree")
    assert tree_time == pytest.approx(2 * (7 * 1e-6 + 2 * 1e-5))
    for gather in (reduce_scatter_time, all_gather_time):
        assert gather(0, 32, intra=intra, inter=inter, per_node=8) == pytest.approx((31 - 3) * 1e-6 + 3 * 1e-5)
    # in one node the tree is a chain, as slow to start as the ring: never chosen there
    assert all_reduce_time(0, 8, intra=intra, algorithm="tree") == pytest.approx(2 * 7 * 1e-6)


@given(size=sizes, n=st.integers(1, 4096))
def test_auto_is_the_fastest_of_what_nccl_runs(size: float, n: int) -> None:
    times = [
        all_reduce_time(size, n, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm=a) for a in ("ring", "tree")
    ]
    auto = all_reduce_time(size, n, intra=NVLINK3, inter=IB_HDR_X4, per_node=8)
    assert auto == pytest.approx(min(times))


def test_hierarchical_within_one_node_is_the_intra_ring() -> None:
    assert hierarchical(1e8, 8, 8, NVLINK3, IB_HDR_X4) == pytest.approx(ring(1e8, 8, NVLINK3))


def test_nccls_ring_beats_the_hierarchical_form_across_nodes() -> None:
    # The ring's channels keep most hops on NVLink and cross each node boundary once: its bytes move
    # at the slower side's rate, where the hierarchical form pays the node's and the network's in turn.
    flat = all_reduce_time(102.4e6, 64, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm="ring")
    tiered = all_reduce_time(102.4e6, 64, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm="hierarchical")
    assert flat < tiered


@pytest.mark.parametrize(("intra", "card"), [("nvlink4", "ib-hdr"), ("nvlink3", "ib-hdr"), ("nvlink4", "ib-ndr")])
def test_a_rings_bus_bandwidth_across_nodes_is_the_nodes_network_flat_with_the_node_count(
    intra: str, card: str
) -> None:
    # nccl-tests' busbw is defined to stay flat with n (doc/PERFORMANCE.md), and NCCL's rings reach the
    # node's whole network (8 cards side by side), not one card's share of it.
    node, network = link("intra", intra), link("inter", card, nics=8)
    size = 8 * 2**30
    found = [
        float(busbw(size, all_reduce_time(size, n, intra=node, inter=network, per_node=8), n))
        for n in (16, 32, 64, 128)
    ]
    assert max(found) <= 1.15 * min(found)
    assert min(found) >= 0.5 * network.bandwidth  # at least half the node's network line rate
    slower = min(node.bandwidth * node.efficiency, network.bandwidth * network.efficiency)
    assert float(bus_bandwidth(64, intra=node, inter=network, per_node=8)) == pytest.approx(slower)
    assert found[-1] == pytest.approx(slower, rel=0.03)  # less the latency of 2(n−1) steps


@given(size=sizes, n=ranks)
def test_more_bytes_or_less_bandwidth_never_takes_less_time(size: float, n: int) -> None:
    slow = Link(NVLINK3.bandwidth / 2, NVLINK3.latency, NVLINK3.efficiency)
    assert all_reduce_time(size, n, intra=slow) >= all_reduce_time(size, n, intra=NVLINK3)
    assert all_reduce_time(2 * size, n, intra=NVLINK3) >= all_reduce_time(size, n, intra=NVLINK3)


def test_vectorized_over_device_counts() -> None:
    n = np.array([1, 2, 8, 16, 64, 1024])
    t = all_reduce_time(102.4e6, n, intra=NVLINK3, inter=IB_HDR_X4, per_node=8)
    assert t.shape == n.shape
    assert t[0] == 0
    assert np.all(np.diff(t) >= 0)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: Link(0), "bandwidth"),
        (lambda: Link(1e9, -1), "latency"),
        (lambda: Link(1e9, 0, 1.5), "efficiency"),
        (lambda: all_reduce_time(1, 8, intra=NVLINK3, algorithm="butterfly"), "algorithm"),
        (lambda: all_reduce_time(1, 0, intra=NVLINK3), "devices"),
        (lambda: hierarchical(1, 8, 0, NVLINK3, IB_HDR_X4), "devices_per_node"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call()  # type: ignore[operator]
    assert caught.value.field == field
