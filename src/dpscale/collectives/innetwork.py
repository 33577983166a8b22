"""In-network reduction: the switches sum an all-reduce's data, so each rank sends its bytes once.

A ring all-reduce moves 2(n−1)/n·S bytes in and out of each rank (reduce-scatter, then
all-gather). Where the switches can add (NVLink SHARP in an NVSwitch node of H100s and later,
which NCCL runs as NVLS; SHARP in an InfiniBand fabric, NCCL's CollNet), each rank sends its S
into the switches and gets the sum back: about S each way. A tier says so with
``Link.in_network``; ``auto`` then takes this algorithm where it is faster, as NCCL's tuner does,
and ``ring``, ``tree`` or ``hierarchical`` asked for by name leave it out (as ``NCCL_ALGO=Ring``
does).

The terms follow NCCL's tuning model (ncclTopoTuneModel in src/graph/tuning.cc, NCCL 2.19 to
2.23), whose bus bandwidth for NVLS is the slower of the node's links and its network times
nvlsEfficiency (0.85 on Hopper), turned into an algorithm bandwidth by 5/6 (against n/(2(n−1))
for a ring and 1/2 for a tree): k = 1/(0.85 · 5/6) ≈ 1.41 bytes of link time per byte of S. Its
latency is one NVLS hop, 25 µs over NVLink, where a ring of 8 ranks takes 15 µs with the LL
protocol small messages run (6.6 + 14 × 0.6 µs): as α is fitted on the smallest messages, that is
25/15 of the ring's 14 steps, about 23 α, so small messages stay on the ring and large ones go
to the switches, as NCCL's tuner has it. Plus the network's:

    NVLS in one node, or NVLS in each node with SHARP across them:
        a = 23·α_intra [+ α_inter]                    c = k · max(β_intra, β_inter)
    SHARP across nodes, no NVLS (CollNet's chain: the node's ranks reduce to the card and back):
        a = 2(g−1)·α_intra + α_inter                  c = max(2·β_intra, β_inter)

NVLS in the nodes with rings or trees across them (NCCL's NVLS_TREE) is left out: a log of it
cannot be told from a ring on a faster network, beyond 2 nodes NCCL's tuning model gives it half
the network's bandwidth (where the rings win), and pricing it from a ring's fit would make a
2-node log's own times look slow. Across nodes without SHARP, rings and trees run.

β_inter is the node's whole network, as for the rings (:mod:`dpscale.collectives.costs`). With
SHARP the network carries S once each way instead of a ring's 2(N−1)/N·S; the node's side keeps
NCCL's ratio of 1/2 for CollNet (2·β_intra). Only an all-reduce is priced so: a reduce-scatter or
an all-gather still brings (n−1)/n·S into or out of each rank, switches or not.

The efficiency keeps one link for both algorithms: fitted to an NVLS run of 8 H100s (476 GB/s
of busbw, NVIDIA/nccl-tests issue 290), the node's links come out at 384 GB/s, what a ring
reaches on NVLink 4 (0.85 of 450 GB/s), so its rings, reduce-scatters and all-gathers are priced
as without the switches. nccl-tests report busbw = algbw·2(n−1)/n whatever ran
(doc/PERFORMANCE.md), so a run reduced in the switches reports a bus bandwidth above the line
rate of the GPU's own links: 476 GB/s against NVLink 4's 450. That is how a log shows
it (:mod:`dpscale.nccltests.profiling`), and the fit then prices the run with these terms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpscale.collectives.link import Link, shape

__all__ = ["ALGBW_SHARE", "NVLS_EFFICIENCY", "NVLS_STEPS", "in_network_terms"]

ALGBW_SHARE = 5 / 6  # NCCL's tuning model: NVLS's algorithm bandwidth over its bus bandwidth
NVLS_EFFICIENCY = 0.85  # NCCL's tuning model: nvlsEfficiency on Hopper (0.74 on Blackwell)
NVLS_STEPS = 14 * 25 / 15  # NVLS's latency (hwLat, 25 µs) in steps of a ring of 8 over NVLink with LL (15 µs / 14)


def in_network_terms(ranks: Any, per_node: int | None, intra: Link, inter: Link | None) -> tuple[Any, Any] | None:
    """The (a, c) terms of an all-reduce reduced in the switches (see the module's docstring).

    None where none of ``ranks`` can be: NVLink SHARP alone reduces in one node, SHARP only across
    nodes. Where some of them can and others not, the others' latency is infinite (never the fastest).
    """
    n, nodes, local, g = shape(ranks, per_node, inter)
    across = inter is not None and inter.in_network
    if not (intra.in_network and np.any(nodes == 1)) and not (across and np.any(nodes > 1)):
        return None
    inter_latency = inter.latency if inter is not None else 0.0
    if intra.in_network:  # NVLS in one node; NVLS with SHARP across nodes
        latency = NVLS_STEPS * intra.latency + np.where(nodes > 1, inter_latency, 0.0)
        per_byte = np.where(nodes > 1, max(intra.beta, inter.beta if inter is not None else 0.0), intra.beta)
        per_byte = per_byte / (ALGBW_SHARE * NVLS_EFFICIENCY)
    else:  # CollNet: the node's ranks reduce to its cards and back, SHARP across the nodes
        latency = 2 * (local - 1) * intra.latency + inter_latency
        own = 2 * intra.beta if g > 1 else 0.0
        per_byte = np.full(np.shape(n), max(own, inter.beta if inter is not None else 0.0))
    if not across:
        latency = np.where(nodes > 1, np.inf, latency)  # NVLS in the nodes without SHARP: rings and trees across
    elif not intra.in_network:
        latency = np.where(nodes > 1, latency, np.inf)  # SHARP alone: nothing in one node
    return np.where(n > 1, latency, 0.0), np.where(n > 1, per_byte, 0.0)
