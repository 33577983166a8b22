"""Time of one all-reduce of S bytes over n ranks, in the α-β model, for NCCL's algorithms.

A message step costs α (latency) and each byte β = 1 / (bandwidth × achievable efficiency):

    ring          2(n−1)·α + 2(n−1)/n · S·β
                  reduce-scatter then all-gather around a ring; bandwidth-optimal
                  (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms").
    tree          2·⌈log₂ n⌉·α + 2 · S·β
                  NCCL's pipelined double binary tree (Sanders, Speck & Träff 2009): a reduce up
                  and a broadcast down, streamed, each half of the data on one of two trees, so
                  every rank sends and receives about S each way; logarithmic latency.
    hierarchical  reduce-scatter in each node of g ranks, ring all-reduce of the S/g shards
                  across N nodes, all-gather in each node, each tier with its own α and β:
                  2(g−1)·α_in + 2(g−1)/g · S·β_in  +  2(N−1)·α_out + 2(N−1)/N · S·β_node,
                  where the node's network bandwidth (all its NICs) carries the g shards at once.

``auto`` takes the fastest for each size, as NCCL's tuner does. nccl-tests report
algbw = S / t and, for all-reduce, busbw = algbw · 2(n−1)/n: the per-link rate a ring would need,
comparable with the link's bandwidth whatever n is.

Every function takes numbers or numpy arrays (n, S, …) and broadcasts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from dpscale import _validate
from dpscale.errors import InvalidInput

__all__ = ["Algorithm", "Link", "all_reduce_time", "algbw", "busbw", "hierarchical", "ring", "tree"]

Algorithm = Literal["auto", "ring", "tree", "hierarchical"]
ALGORITHMS: tuple[str, ...] = get_args(Algorithm)


@dataclass(frozen=True, slots=True)
class Link:
    """One tier of the network: latency α in seconds, bandwidth in bytes/s per direction, and the
    share of that bandwidth a collective really reaches (NCCL typically reaches 80–90 % of NVLink
    and InfiniBand line rate in nccl-tests' busbw)."""

    bandwidth: float
    latency: float = 0.0
    efficiency: float = 1.0

    def __post_init__(self) -> None:
        _validate.positive("bandwidth", self.bandwidth)
        if not (self.latency >= 0 and np.isfinite(self.latency)):
            raise InvalidInput("latency", self.latency, "a finite time of at least 0 seconds")
        _validate.fraction("efficiency", self.efficiency)

    @property
    def beta(self) -> float:
        """Seconds per byte at the achievable bandwidth."""
        return 1.0 / (self.bandwidth * self.efficiency)


def ring(size: Any, ranks: Any, link: Link) -> Any:
    """2(n−1)·α + 2(n−1)/n · S·β; 0 for one rank."""
    n = np.asarray(ranks, dtype=np.float64)
    s = np.asarray(size, dtype=np.float64)
    return 2 * (n - 1) * link.latency + 2 * (n - 1) / n * s * link.beta


def tree(size: Any, ranks: Any, link: Link) -> Any:
    """2·⌈log₂ n⌉·α + 2·S·β (pipelined double binary tree); 0 for one rank."""
    n = np.asarray(ranks, dtype=np.float64)
    s = np.asarray(size, dtype=np.float64)
    steps = np.ceil(np.log2(n))
    return np.where(n > 1, 2 * steps * link.latency + 2 * s * link.beta, 0.0)


def hierarchical(size: Any, ranks: Any, per_node: int, intra: Link, inter: Link) -> Any:
    """Reduce-scatter in the node, ring all-reduce of the shards across nodes, all-gather in the node.

    ``inter.bandwidth`` is the node's whole network bandwidth; n must be a multiple of ``per_node``
    once it exceeds it (a partial node is counted as a whole one).
    """
    g = _validate.whole("devices_per_node", per_node)
    n = np.asarray(ranks, dtype=np.float64)
    s = np.asarray(size, dtype=np.float64)
    local = np.minimum(n, g)
    nodes = np.ceil(n / g)
    inside = 2 * (local - 1) * intra.latency + 2 * (local - 1) / local * s * intra.beta
    across = 2 * (nodes - 1) * inter.latency + 2 * (nodes - 1) / nodes * s * inter.beta
    return inside + across


def all_reduce_time(
    size: Any,
    ranks: Any,
    *,
    intra: Link,
    inter: Link | None = None,
    per_node: int | None = None,
    algorithm: Algorithm | str = "auto",
) -> Any:
    """Seconds for one all-reduce of ``size`` bytes over ``ranks`` ranks.

    On one node (``inter`` None, or n ≤ per_node) ring and tree run on the intra-node link; across
    nodes they run on the slowest tier, the per-rank share of the node's network, and hierarchical
    uses both tiers.
    """
    if algorithm not in ALGORITHMS:
        raise InvalidInput("algorithm", algorithm, "one of " + ", ".join(ALGORITHMS))
    n = np.asarray(ranks, dtype=np.float64)
    if np.any(~np.isfinite(n)) or np.any(n < 1):
        raise InvalidInput("devices", ranks, "whole numbers of at least 1")
    if inter is None or per_node is None:
        flat = {"ring": ring(size, n, intra), "tree": tree(size, n, intra)}
        flat["hierarchical"] = flat["ring"]
    else:
        g = _validate.whole("devices_per_node", per_node)
        # Flat algorithms across nodes: every rank's traffic goes through its share of the NICs.
        shared = Link(inter.bandwidth / g, inter.latency, inter.efficiency)
        multi = n > g
        flat = {
            "ring": np.where(multi, ring(size, n, shared), ring(size, n, intra)),
            "tree": np.where(multi, tree(size, n, shared), tree(size, n, intra)),
            "hierarchical": hierarchical(size, n, g, intra, inter),
        }
    if algorithm == "auto":
        return np.minimum(np.minimum(flat["ring"], flat["tree"]), flat["hierarchical"])
    return flat[algorithm]


def algbw(size: Any, seconds: Any) -> Any:
    """nccl-tests' algorithm bandwidth: S / t, bytes per second."""
    return np.asarray(size, dtype=np.float64) / np.asarray(seconds, dtype=np.float64)


def busbw(size: Any, seconds: Any, ranks: Any) -> Any:
    """nccl-tests' bus bandwidth for all-reduce: algbw · 2(n−1)/n."""
    n = np.asarray(ranks, dtype=np.float64)
    return algbw(size, seconds) * 2 * (n - 1) / n
