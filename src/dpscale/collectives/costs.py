"""Time of one collective of S bytes over n ranks, in the α-β model, as NCCL runs it.

A message step costs α (latency) and each byte β = 1 / (bandwidth × achievable efficiency). A
cluster has two tiers: the links inside a node of g ranks (``intra``: one GPU's NVLink or PCIe
bandwidth) and the node's network (``inter``: the bandwidth of all its cards together, ``--nics``
× one card's); N = ⌈n/g⌉ nodes.

**Channels across nodes.** NCCL builds its rings and trees as channels, each of which enters and
leaves every node once, and spreads the channels over the node's network cards side by side
(NCCL's topology search, src/graph/search.cc; the tuning model, src/graph/tuning.cc, prices a
ring by the number of channels times each one's bandwidth). So a ring across nodes moves a
collective's bytes at the bus bandwidth the slower of the two sides allows, the node's whole
network or one GPU's NVLink: β_bus = max(β_intra, β_inter) across nodes, β_intra in one node. That
bus bandwidth does not fall as nodes are added, which is why nccl-tests define busbw as they do
(doc/PERFORMANCE.md: busbw = algbw·2(n−1)/n reflects the speed of the slowest link whatever n).

**Latency, counted per tier as NCCL's tuning model counts it** (ncclTopoTuneModel in
src/graph/tuning.cc: a ring all-reduce takes nsteps = 2(n−1) steps of which nInterSteps =
2(N−1) cross the network, n−1 and N−1 for a reduce-scatter or an all-gather; a tree
2·((g−1)·intra + log₂ N·inter)):

    ring          (2(n−1) − 2(N−1))·α_intra + 2(N−1)·α_inter  +  2(n−1)/n · S·β_bus
                  reduce-scatter then all-gather around the rings; bandwidth-optimal (Patarasuk &
                  Yuan 2009, "Bandwidth optimal all-reduce algorithms"). In one node, 2(n−1)·α_intra.
    tree          2·((g−1)·α_intra + ⌈log₂ N⌉·α_inter)  +  2 · S·β_bus / 0.92
                  NCCL's pipelined double binary tree across nodes (Sanders, Speck & Träff 2009),
                  a chain inside each node: a reduce up and a broadcast down, streamed, so every
                  rank sends and receives about S each way; latency in log N. NCCL's tuning model
                  takes a tree's bus bandwidth as 92 % of its channels' (``busBw * .92``) and its
                  algorithm bandwidth as half of it: hence 2·S·β_bus/0.92. In one node the tree is a
                  chain of 2(g−1) steps, never faster than the ring.
    hierarchical  reduce-scatter in each node of g ranks, ring all-reduce of the S/g shards
                  across N nodes, all-gather in each node, each tier with its own α and β:
                  2(g−1)·α_in + 2(g−1)/g · S·β_in  +  2(N−1)·α_out + 2(N−1)/N · S·β_node.
                  Not what NCCL runs for an all-reduce (its rings already keep most hops on
                  NVLink): an explicit choice, for a framework that runs it so.

``auto`` takes the faster of ring and tree at each size, as NCCL's tuner does (it picks the
algorithm and protocol of least modelled time), and in-network reduction where a tier has it
(:mod:`dpscale.collectives.innetwork`: NVLink SHARP, SHARP). The protocols' own constants (LL, LL128,
Simple) are left out of the α-β terms: the sizes where NCCL changes protocol, 64 KiB to about
64 MiB, are where they are least close, and where a run measured them its shortfall there is
carried to other rank counts (:mod:`dpscale.predict.pricing`).

A reduce-scatter or an all-gather of a buffer of S bytes (the whole buffer: each rank ends with,
or starts from, S/n of it) runs on the rings (NCCL has no tree for them):

    (n−1 − (N−1))·α_intra + (N−1)·α_inter  +  (n−1)/n · S·β_bus

(half the ring all-reduce's steps and bytes: one function prices both, as NCCL's tuning model
gives them the same steps), and half the hierarchical all-reduce where that is asked for.
In-network reduction does not lower their bytes: each rank still receives or sends (n−1)/n·S.

nccl-tests report algbw = S / t and busbw = algbw · 2(n−1)/n for an all-reduce, algbw · (n−1)/n
for a reduce-scatter or an all-gather: the per-link rate a ring would need, comparable with the
link's bandwidth whatever n is.

Every function takes numbers or numpy arrays (n, S, …) and broadcasts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpscale import _validate
from dpscale.collectives.innetwork import in_network_terms
from dpscale.collectives.link import Link, shape
from dpscale.collectives.names import ALGORITHMS, Algorithm, Collective, bus_factor
from dpscale.errors import N_, InvalidInput

__all__ = [
    "TREE_SHARE",
    "all_reduce_time",
    "algbw",
    "bus_bandwidth",
    "busbw",
    "hierarchical",
    "ring",
    "tree",
    # each algorithm's cost as a(n) + c(n)·S, and the algorithms NCCL may choose among
    "ring_terms",
    "tree_terms",
    "tiered_ring_terms",
    "tiered_tree_terms",
    "hierarchical_terms",
    "candidates",
    # reduce-scatter and all-gather (sharded data parallelism)
    "gather_candidates",
    "gather_ring_terms",
    "gather_time",
    "reduce_scatter_time",
    "all_gather_time",
]

TREE_SHARE = 0.92  # NCCL's tuning model: a tree's bus bandwidth is 92 % of its channels' (src/graph/tuning.cc)


# Every algorithm here costs a(n) + c(n)·S: a latency term and a cost per byte. Keeping the two
# apart lets a caller price many message sizes (DDP's buckets) without recomputing either.
Affine = tuple[Any, Any]


def _ring(ranks: Any, link: Link, passes: int) -> Affine:
    """``passes`` times around a ring of n on one link: a = passes·(n−1)·α, c = passes·(n−1)/n · β."""
    n = np.asarray(ranks, dtype=np.float64)
    steps = n - 1
    per_byte = steps / n
    per_byte *= passes * link.beta
    return steps * (passes * link.latency), per_byte


def ring_terms(ranks: Any, link: Link) -> Affine:
    """A ring all-reduce on one tier: a = 2(n−1)·α, c = 2(n−1)/n · β."""
    return _ring(ranks, link, 2)


def tree_terms(ranks: Any, link: Link) -> Affine:
    """A double binary tree over n ranks, one to a node: a = 2·⌈log₂ n⌉·α, c = 2·β/0.92 (0 for one rank)."""
    n = np.asarray(ranks, dtype=np.float64)
    steps = np.ceil(np.log2(n))
    return 2 * link.latency * steps, np.where(n > 1, 2 * link.beta / TREE_SHARE, 0.0)


def _bus_beta(nodes: Any, g: int, intra: Link, inter: Link | None) -> Any:
    """β_bus: the node's links in one node; across nodes the slower of one GPU's links and the node's network."""
    if inter is None:
        return intra.beta
    own = intra.beta if g > 1 else 0.0  # one rank to a node crosses no link of its own
    return np.where(nodes > 1, max(own, inter.beta), intra.beta)


def bus_bandwidth(ranks: Any, *, intra: Link, inter: Link | None = None, per_node: int | None = None) -> Any:
    """The bus bandwidth (bytes/s) NCCL's rings reach over ``ranks`` ranks: 1/β_bus (see the module's docstring)."""
    _, nodes, _, g = shape(ranks, per_node, inter)
    return 1.0 / np.asarray(_bus_beta(nodes, g, intra, inter), dtype=np.float64)


def _tiered_ring(ranks: Any, per_node: int | None, intra: Link, inter: Link | None, passes: int) -> Affine:
    """NCCL's rings, ``passes`` times around: passes·(n−1) steps, passes·(N−1) of them across the network."""
    if inter is None or per_node is None:  # one node
        return _ring(ranks, intra, passes)
    if per_node == 1:  # a rank to a node: every step crosses the network
        return _ring(ranks, inter, passes)
    n, nodes, _, g = shape(ranks, per_node, inter)
    steps = n - 1
    across = nodes - 1
    latency = (steps - across) * (passes * intra.latency) + across * (passes * inter.latency)
    return latency, passes * steps / n * _bus_beta(nodes, g, intra, inter)


def tiered_ring_terms(ranks: Any, per_node: int | None, intra: Link, inter: Link | None) -> Affine:
    """NCCL's ring all-reduce: a = (2(n−1) − 2(N−1))·α_intra + 2(N−1)·α_inter, c = 2(n−1)/n · β_bus."""
    return _tiered_ring(ranks, per_node, intra, inter, 2)


def tiered_tree_terms(ranks: Any, per_node: int | None, intra: Link, inter: Link | None) -> Affine:
    """NCCL's tree all-reduce: a = 2·((g−1)·α_intra + ⌈log₂ N⌉·α_inter), c = 2·β_bus/0.92 (a chain in one node)."""
    if inter is not None and per_node == 1:  # a rank to a node: the double binary tree across them
        return tree_terms(ranks, inter)
    n, nodes, local, g = shape(ranks, per_node, inter)
    latency = (local - 1) * intra.latency
    if inter is not None:
        latency = latency + np.ceil(np.log2(nodes)) * inter.latency
    per_byte = np.where(n > 1, 2 / TREE_SHARE * _bus_beta(nodes, g, intra, inter), 0.0)
    return 2 * latency, per_byte


def hierarchical_terms(ranks: Any, per_node: int, intra: Link, inter: Link) -> Affine:
    """Reduce-scatter + all-gather in the node (a ring of g), ring all-reduce across the N nodes."""
    g = _validate.whole("devices_per_node", per_node)
    n = np.asarray(ranks, dtype=np.float64)
    local = np.minimum(n, g)
    nodes = np.ceil(n / g)
    a_in, c_in = ring_terms(local, intra)
    a_out, c_out = ring_terms(nodes, inter)
    return a_in + a_out, c_in + c_out


def _at(terms: Affine, size: Any) -> Any:
    return terms[0] + terms[1] * np.asarray(size, dtype=np.float64)


def ring(size: Any, ranks: Any, link: Link) -> Any:
    """2(n−1)·α + 2(n−1)/n · S·β on one link; 0 for one rank."""
    return _at(ring_terms(ranks, link), size)


def tree(size: Any, ranks: Any, link: Link) -> Any:
    """2·⌈log₂ n⌉·α + 2·S·β/0.92 (a double binary tree over n ranks, one to a node); 0 for one rank."""
    return _at(tree_terms(ranks, link), size)


def hierarchical(size: Any, ranks: Any, per_node: int, intra: Link, inter: Link) -> Any:
    """Reduce-scatter in the node, ring all-reduce of the shards across nodes, all-gather in the node.

    ``inter.bandwidth`` is the node's whole network bandwidth; n must be a multiple of ``per_node``
    once it exceeds it (a partial node is counted as a whole one).
    """
    return _at(hierarchical_terms(ranks, per_node, intra, inter), size)


def _checked(ranks: Any, algorithm: str) -> Any:
    if algorithm not in ALGORITHMS:
        raise InvalidInput("algorithm", algorithm, N_("one of %(choices)s"), params={"choices": ", ".join(ALGORITHMS)})
    n = np.asarray(ranks, dtype=np.float64)
    if not (n.min() >= 1 and n.max() < np.inf):  # also false for NaN
        raise InvalidInput("devices", ranks, "whole numbers of at least 1")
    return n


def candidates(
    ranks: Any,
    *,
    intra: Link,
    inter: Link | None = None,
    per_node: int | None = None,
    algorithm: Algorithm | str = "auto",
) -> list[Affine]:
    """The (a, c) terms of each all-reduce algorithm ``algorithm`` allows (ring and tree for ``auto``,
    and in-network reduction where a tier has it: :mod:`dpscale.collectives.innetwork`).

    Without ``inter`` (or ``per_node``) the ranks are in one node; hierarchical is then its ring.
    """
    n = _checked(ranks, algorithm)
    wanted = ("ring", "tree") if algorithm == "auto" else (algorithm,)
    out: list[Affine] = []
    for name in wanted:
        if name == "tree":
            out.append(tiered_tree_terms(n, per_node, intra, inter))
        elif name == "hierarchical" and inter is not None and per_node is not None:
            out.append(hierarchical_terms(n, per_node, intra, inter))
        else:
            out.append(tiered_ring_terms(n, per_node, intra, inter))
    if algorithm == "auto" and (intra.in_network or (inter is not None and inter.in_network)):
        reduced = in_network_terms(n, per_node, intra, inter)
        if reduced is not None:
            out.append(reduced)
    return out


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

    On one node (``inter`` None, or n ≤ per_node) ring and tree run on the intra-node links; across
    nodes on channels that each cross every node boundary once (see the module's docstring), and
    hierarchical uses both tiers in turn. ``auto`` is the fastest of what NCCL may run at each size.
    """
    return _fastest(candidates(ranks, intra=intra, inter=inter, per_node=per_node, algorithm=algorithm), size)


def gather_ring_terms(ranks: Any, per_node: int | None, intra: Link, inter: Link | None) -> Affine:
    """NCCL's ring reduce-scatter or all-gather: a = (n−1 − (N−1))·α_intra + (N−1)·α_inter, c = (n−1)/n · β_bus."""
    return _tiered_ring(ranks, per_node, intra, inter, 1)


def gather_candidates(
    ranks: Any,
    *,
    intra: Link,
    inter: Link | None = None,
    per_node: int | None = None,
    algorithm: Algorithm | str = "auto",
) -> list[Affine]:
    """The (a, c) terms of a reduce-scatter or an all-gather.

    NCCL runs both on rings, so ``auto``, ``ring`` and ``tree`` price the ring; ``hierarchical``
    half of the hierarchical all-reduce (in the node, then across nodes).
    """
    n = _checked(ranks, algorithm)
    if algorithm == "hierarchical" and inter is not None and per_node is not None:
        a, c = hierarchical_terms(n, per_node, intra, inter)
        return [(a / 2, c / 2)]
    return [gather_ring_terms(n, per_node, intra, inter)]


def _fastest(found: list[Affine], size: Any) -> Any:
    best = _at(found[0], size)
    for terms in found[1:]:
        best = np.minimum(best, _at(terms, size))
    return best


def gather_time(
    size: Any,
    ranks: Any,
    *,
    intra: Link,
    inter: Link | None = None,
    per_node: int | None = None,
    algorithm: Algorithm | str = "auto",
) -> Any:
    """Seconds for one reduce-scatter of a ``size``-byte buffer over ``ranks`` ranks (each keeps size/n), or
    one all-gather into it (each gives size/n): the same steps and bytes on NCCL's rings, so one function."""
    return _fastest(gather_candidates(ranks, intra=intra, inter=inter, per_node=per_node, algorithm=algorithm), size)


reduce_scatter_time = gather_time  # the names a caller looks for
all_gather_time = gather_time


def algbw(size: Any, seconds: Any) -> Any:
    """nccl-tests' algorithm bandwidth: S / t, bytes per second."""
    return np.asarray(size, dtype=np.float64) / np.asarray(seconds, dtype=np.float64)


def busbw(size: Any, seconds: Any, ranks: Any, collective: Collective = "all_reduce") -> Any:
    """nccl-tests' bus bandwidth: algbw · 2(n−1)/n for an all-reduce, algbw · (n−1)/n for the other two."""
    return algbw(size, seconds) * bus_factor(np.asarray(ranks, dtype=np.float64), collective)
