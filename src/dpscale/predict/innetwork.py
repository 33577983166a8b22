"""In-network reduction: the switches sum an all-reduce's data, so each rank sends its bytes once.

A ring all-reduce moves 2(n−1)/n·S bytes in and out of each rank (reduce-scatter, then
all-gather). Where the switches can add (NVLink SHARP in an NVSwitch node of H100s and later,
which NCCL runs as NVLS; SHARP in an InfiniBand fabric, NCCL's CollNet), each rank sends its S
into the switches and gets the sum back: about S each way. A tier says so with
``Link.in_network``; ``auto`` then takes this algorithm where it is faster, as NCCL's tuner does,
and ``ring``, ``tree`` or ``hierarchical`` asked for by name leave it out (as ``NCCL_ALGO=Ring``
does).

The terms follow NCCL's tuning model (ncclTopoTuneModel in src/graph/tuning.cc, NCCL 2.19 to
2.23), whose bus bandwidth for NVLS is the slower of the node's links and its network, turned into
an algorithm bandwidth by 5/6 (against n/(2(n−1)) for a ring and 1/2 for a tree), and whose latency
is one NVLS hop (25 µs over NVLink, against 3.4 µs a ring step: about 7 of them) plus the network's:

    NVLS in the node (with SHARP across nodes, or in one node):
        a = 7·α_intra [+ α_inter]                     c = 6/5 · max(β_intra, β_inter)
    NVLS in each node, no SHARP across them (NVLS_TREE):
        a = 7·α_intra + 2⌈log₂ N⌉·α_inter             c = 6/5 · max(β_intra, β_inter · (1 if N ≤ 2 else 2))
    SHARP across nodes, no NVLS (CollNet's chain: the node's ranks reduce to the card and back):
        a = 2(g−1)·α_intra + α_inter                  c = max(2·β_intra, β_inter)

β_inter is the node's whole network, as for the rings (:mod:`dpscale.predict.collectives`). With
SHARP the network carries S once each way instead of a ring's 2(N−1)/N·S; the node's side keeps
NCCL's ratio of 1/2 for CollNet (2·β_intra). Only an all-reduce is priced so: a reduce-scatter or
an all-gather still brings (n−1)/n·S into or out of each rank, switches or not.

nccl-tests report busbw = algbw·2(n−1)/n whatever ran (doc/PERFORMANCE.md), so a run reduced in
the switches reports a bus bandwidth above the line rate of the GPU's own links: 8 H100s reach
about 480 GB/s against NVLink 4's 450 GB/s (NVIDIA/nccl-tests issue 290). That is how a log shows
it (:mod:`dpscale.nccltests.fitting`), and the fit then prices the run with these terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dpscale.predict.collectives import Link

__all__ = ["ALGBW_SHARE", "NVLS_STEPS", "in_network_terms"]

ALGBW_SHARE = 5 / 6  # NCCL's tuning model: NVLS's algorithm bandwidth over its bus bandwidth
NVLS_STEPS = 25 / 3.4  # NVLS's latency over NVLink (hwLat, 25 µs) in ring steps over NVLink (Simple, 3.4 µs)


def in_network_terms(ranks: Any, per_node: int | None, intra: Link, inter: Link | None) -> tuple[Any, Any] | None:
    """The (a, c) terms of an all-reduce reduced in the switches (see the module's docstring).

    None where no tier the ranks cross reduces: SHARP alone does nothing in one node. Where only
    some of ``ranks`` cross such a tier, the others' latency is infinite (never the fastest).
    """
    from dpscale.predict.collectives import _shape

    n, nodes, local, g = _shape(ranks, per_node, inter)
    across = inter is not None and inter.in_network
    if not intra.in_network and not (across and np.any(nodes > 1)):
        return None
    hops = np.ceil(np.log2(nodes))
    if intra.in_network:
        latency = NVLS_STEPS * intra.latency + np.zeros_like(n)
        per_byte = intra.beta + np.zeros_like(n)
        if inter is not None:
            side = inter.beta if across else np.where(nodes > 2, 2 * inter.beta, inter.beta)
            latency = latency + np.where(nodes > 1, (1.0 if across else 2 * hops) * inter.latency, 0.0)
            per_byte = np.where(nodes > 1, np.maximum(per_byte, side), per_byte)
        per_byte = per_byte / ALGBW_SHARE
    elif inter is not None:  # SHARP alone, across nodes
        latency = np.where(nodes > 1, 2 * (local - 1) * intra.latency + inter.latency, np.inf)
        own = 2 * intra.beta if g > 1 else 0.0
        per_byte = np.where(nodes > 1, max(own, inter.beta), 0.0)
    else:
        return None
    return np.where(n > 1, latency, 0.0), np.where(n > 1, per_byte, 0.0)
