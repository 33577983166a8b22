from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.predict.collectives import Link, all_reduce_time, busbw, hierarchical, ring, tree

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
    link = Link(1e9, 1e-5)
    assert tree(tiny, 1024, link) == pytest.approx(2 * 10 * 1e-5 + 2 * tiny / 1e9)
    assert ring(tiny, 1024, link) == pytest.approx(2 * 1023 * 1e-5 + 2 * 1023 / 1024 * tiny / 1e9)
    assert tree(tiny, 1024, link) < ring(tiny, 1024, link)
    big = 1e11  # bandwidth-bound: the ring sends 2(n−1)/n·S, the tree 2·S
    assert ring(big, 1024, link) < tree(big, 1024, link)


@given(size=sizes, n=st.integers(1, 4096))
def test_auto_is_the_fastest(size: float, n: int) -> None:
    times = [
        all_reduce_time(size, n, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm=a)
        for a in ("ring", "tree", "hierarchical")
    ]
    auto = all_reduce_time(size, n, intra=NVLINK3, inter=IB_HDR_X4, per_node=8)
    assert auto == pytest.approx(min(times))


def test_hierarchical_within_one_node_is_the_intra_ring() -> None:
    assert hierarchical(1e8, 8, 8, NVLINK3, IB_HDR_X4) == pytest.approx(ring(1e8, 8, NVLINK3))


def test_hierarchical_beats_a_flat_ring_across_nodes() -> None:
    flat = all_reduce_time(102.4e6, 64, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm="ring")
    tiered = all_reduce_time(102.4e6, 64, intra=NVLINK3, inter=IB_HDR_X4, per_node=8, algorithm="hierarchical")
    assert tiered < flat


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
