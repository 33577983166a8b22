"""nccl-tests logs written from known figures, in the layout ``all_reduce_perf`` prints.

Test support, not part of the package. Each log is what nccl-tests would print for a collective
whose time at each size is the given function's: the header, the ``# Using devices`` list (ranks
``per_host`` to a host), the table of both halves with algbw and busbw as nccl-tests works them
out (busbw = algbw·2(n−1)/n for an all-reduce, algbw·(n−1)/n for the other two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["SIZES", "alpha_beta", "nccl_like", "text", "write"]

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

    Ring: (2(n−1) − 2N)·α_intra + 2N·α_inter + 2(n−1)/n·S / busbw, busbw the slower of the node's
    links and its network, flat with the node count N; tree: 2·((g−1)·α_intra + ⌈log₂ N⌉·α_inter) +
    2·S / (tree_share·busbw). The faster of the two at each size, as NCCL's tuner takes it.
    """
    nodes = -(-ranks // per_host)
    bus = busbw_intra if nodes == 1 else min(busbw_intra, busbw_inter)
    steps = 2 * (ranks - 1)
    across = min(2 * nodes, steps) if nodes > 1 else 0
    ring_latency = (steps - across) * alpha_intra + across * alpha_inter
    local = min(ranks, per_host)
    tree_latency = 2 * ((local - 1) * alpha_intra + (nodes - 1).bit_length() * alpha_inter)

    def seconds(size: int) -> float:
        ring = ring_latency + steps / ranks * size / bus
        tree = tree_latency + 2 * size / (tree_share * bus)
        return min(ring, tree)

    return seconds
