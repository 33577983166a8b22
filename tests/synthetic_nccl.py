"""nccl-tests logs written from known figures, in the layout ``all_reduce_perf`` prints.

Test support, not part of the package. Each log is what nccl-tests would print for a collective
whose time at each size is the given function's: the header, the ``# Using devices`` list (ranks
``per_host`` to a host), the table of both halves with algbw and busbw as nccl-tests works them
out (busbw = algbw·2(n−1)/n for an all-reduce, algbw·(n−1)/n for the other two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["SIZES", "alpha_beta", "nccl_like", "nccl_protocols", "text", "write"]

SIZES: tuple[int, ...] = tuple(8 * 2**k for k in range(31))  # -b 8 -e 8G -f 2
PROGRAM = {"all_reduce": "all_reduce_perf", "reduce_scatter": "reduce_scatter_perf", "all_gather": "all_gather_perf"}


def _factor(collective: str, ranks: int) -> float:
    return (2 if collective == "all_reduce" else 1) * (ranks - 1) / ranks


def text(
    collective: str,
    ranks: int,
    per_host: int,
    seconds: Callable[[int], float],
    sizes: Sequence[int] = SIZES,
    device: str = "NVIDIA H100 80GB HBM3",
) -> str:
    """The log of ``collective`` over ``ranks`` ranks, ``per_host`` to a host, taking ``seconds(size)``."""
    lines = [
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        f"# Collective test starting: {PROGRAM[collective]}",
        "# Using devices",
    ]
    for rank in range(ranks):
        host, device_index = divmod(rank, per_host)
        lines.append(
            f"#  Rank {rank:2d} Group  0 Pid {40000 + rank:6d} on {f'node{host + 1:03d}':>10s} device "
            f"{device_index:2d} [0x{16 + device_index:02x}] {device}"
        )
    redop = "none" if collective == "all_gather" else "sum"
    lines += [
        "#",
        "#                                                              out-of-place                       in-place",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    ]
    for size in sizes:
        t = seconds(size)
        algbw = size / t / 1e9
        half = f"  {t * 1e6:7.2f}  {algbw:6.2f}  {algbw * _factor(collective, ranks):6.2f}  {0:5d}"
        lines.append(f"{size:12d}  {size // 4:12d}  {'float':>8s}  {redop:>6s}  {-1:6d}{half}{half}")
    lines += ["# Out of bounds values : 0 OK", "#", ""]
    return "\n".join(lines)


def write(path: Path, *args: object, **kwargs: object) -> Path:
    path.write_text(text(*args, **kwargs), encoding="utf-8")  # type: ignore[arg-type]
    return path


def alpha_beta(alpha: float, busbw: float, collective: str, ranks: int) -> Callable[[int], float]:
    """t = α + S·factor / busbw: a log that is exactly α + βS, with nccl-tests' bus bandwidth ``busbw``."""
    factor = _factor(collective, ranks)
    return lambda size: alpha + size * factor / busbw


def nccl_like(
    ranks: int,
    per_host: int,
    *,
    alpha_intra: float,
    busbw_intra: float,
    alpha_inter: float,
    busbw_inter: float,
    tree_share: float = 0.92,
) -> Callable[[int], float]:
    """An all-reduce as NCCL's tuning model prices it (src/graph/tuning.cc), with known figures.

    Ring: (2(n−1) − 2(N−1))·α_intra + 2(N−1)·α_inter + 2(n−1)/n·S / busbw, busbw the slower of the node's
    links and its network, flat with the node count N; tree: 2·((g−1)·α_intra + ⌈log₂ N⌉·α_inter) +
    2·S / (tree_share·busbw). The faster of the two at each size, as NCCL's tuner takes it.
    """
    nodes = -(-ranks // per_host)
    bus = busbw_intra if nodes == 1 else min(busbw_intra, busbw_inter)
    steps = 2 * (ranks - 1)
    across = 2 * (nodes - 1)
    ring_latency = (steps - across) * alpha_intra + across * alpha_inter
    local = min(ranks, per_host)
    tree_latency = 2 * ((local - 1) * alpha_intra + (nodes - 1).bit_length() * alpha_inter)

    def seconds(size: int) -> float:
        ring = ring_latency + steps / ranks * size / bus
        tree = tree_latency + 2 * size / (tree_share * bus)
        return min(ring, tree)

    return seconds


# NCCL's tuning model with its protocols (src/graph/tuning.cc, NCCL 2.19–2.23): a base latency and a
# latency per step (µs) for LL, LL128 and Simple, over NVLink and across the network, and the share of the
# bus bandwidth each protocol reaches.
_BASE = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4)}
_STEP = {
    "nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4)},
    "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0)},
}


def nccl_protocols(
    ranks: int, per_host: int, *, busbw_intra: float, busbw_inter: float, launch: float = 10e-6
) -> Callable[[int], float]:
    """An all-reduce as NCCL's tuning model prices it with its protocols: the least over ring and tree and
    LL, LL128 and Simple of latency + S / algbw, plus a kernel's launch.

    Ring: base + (2(n−1) − 2(N−1))·step_nvlink + 2(N−1)·step_net, algbw = busbw·share·n/(2(n−1)), share
    0.5, 0.92 and 1 for LL, LL128 and Simple; tree: base + 2·((g−1)·step_nvlink + ⌈log₂ N⌉·step_net),
    algbw = busbw·0.92·share/2, share 1/3.8, 120/128 (7/9 in one node) and 1. busbw is the node's links
    in one node, else the slower of them and the network. Mid sizes come out slower than one α-β line,
    as NCCL's do: what the model alone cannot say and a log's shortfall carries (dpscale.predict.pricing).
    """
    nodes = -(-ranks // per_host)
    bus = busbw_intra if nodes == 1 else min(busbw_intra, busbw_inter)
    local = min(ranks, per_host)
    steps, across = 2 * (ranks - 1), 2 * (nodes - 1)
    lines = []
    for p in range(3):
        ring_latency = _BASE["ring"][p] + (steps - across) * _STEP["nvlink"]["ring"][p]
        ring_latency += across * _STEP["net"]["ring"][p]
        lines.append((ring_latency * 1e-6, bus * (0.5, 0.92, 1.0)[p] * ranks / steps))
        tree_latency = _BASE["tree"][p] + 2 * (
            (local - 1) * _STEP["nvlink"]["tree"][p] + (nodes - 1).bit_length() * _STEP["net"]["tree"][p]
        )
        share = (1 / 3.8, 7 / 9 if nodes == 1 else 120 / 128, 1.0)[p]
        lines.append((tree_latency * 1e-6, bus * 0.92 * share / 2))

    def seconds(size: int) -> float:
        return launch + min(latency + size / algbw for latency, algbw in lines)

    return seconds
