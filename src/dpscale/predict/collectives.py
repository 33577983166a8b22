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

``auto`` takes the fastest for each size, as NCCL's tuner does.

A reduce-scatter or an all-gather of a buffer of S bytes (the whole buffer: each rank ends with,
or starts from, S/n of it) is one half of the ring or hierarchical all-reduce above:

    (n−1)·α + (n−1)/n · S·β            ring (NCCL runs these two on rings, not trees)

nccl-tests report algbw = S / t and busbw = algbw · 2(n−1)/n for an all-reduce, algbw · (n−1)/n
for a reduce-scatter or an all-gather: the per-link rate a ring would need, comparable with the
link's bandwidth whatever n is.

Every function takes numbers or numpy arrays (n, S, …) and broadcasts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpscale import _validate
from dpscale.errors import N_, InvalidInput
from dpscale.predict.defaults import ALGORITHMS, Algorithm

__all__ = [
    "Algorithm",
    "Link",
    "all_reduce_time",
    "algbw",
    "busbw",
    "hierarchical",
    "ring",
    "tree",
    # each algorithm's cost as a(n) + c(n)·S, and the algorithms NCCL may choose among
    "ring_terms",
    "tree_terms",
    "hierarchical_terms",
    "candidates",
    # reduce-scatter and all-gather (sharded data parallelism)
    "Collective",
    "gather_candidates",
    "reduce_scatter_time",
    "all_gather_time",
]

Collective = Literal["all_reduce", "reduce_scatter", "all_gather"]


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


# Every algorithm here costs a(n) + c(n)·S: a latency term and a cost per byte. Keeping the two
# apart lets a caller price many message sizes (DDP's buckets) without recomputing either.
Affine = tuple[Any, Any]


def ring_terms(ranks: Any, link: Link) -> Affine:
    """Ring: a = 2(n−1)·α, c = 2(n−1)/n · β."""
    n = np.asarray(ranks, dtype=np.float64)
    steps = n - 1
    per_byte = steps / n
    per_byte *= 2 * link.beta
    return steps * (2 * link.latency), per_byte


def tree_terms(ranks: Any, link: Link) -> Affine:
    """Pipelined double binary tree: a = 2·⌈log₂ n⌉·α, c = 2·β (both 0 for one rank)."""
    n = np.asarray(ranks, dtype=np.float64)
    steps = np.ceil(np.log2(n))
    return 2 * link.latency * steps, np.where(n > 1, 2 * link.beta, 0.0)


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
    """2(n−1)·α + 2(n−1)/n · S·β; 0 for one rank."""
    return _at(ring_terms(ranks, link), size)


def tree(size: Any, ranks: Any, link: Link) -> Any:
    """2·⌈log₂ n⌉·α + 2·S·β (pipelined double binary tree); 0 for one rank."""
    return _at(tree_terms(ranks, link), size)


def hierarchical(size: Any, ranks: Any, per_node: int, intra: Link, inter: Link) -> Any:
    """Reduce-scatter in the node, ring all-reduce of the shards across nodes, all-gather in the node.

    ``inter.bandwidth`` is the node's whole network bandwidth; n must be a multiple of ``per_node``
    once it exceeds it (a partial node is counted as a whole one).
    """
    return _at(hierarchical_terms(ranks, per_node, intra, inter), size)


def candidates(
    ranks: Any,
    *,
    intra: Link,
    inter: Link | None = None,
    per_node: int | None = None,
    algorithm: Algorithm | str = "auto",
) -> list[Affine]:
    """The (a, c) terms of each algorithm ``algorithm`` allows (all three for ``auto``)."""
    if algorithm not in ALGORITHMS:
        raise InvalidInput("algorithm", algorithm, N_("one of %(choices)s"), params={"choices": ", ".join(ALGORITHMS)})
    n = np.asarray(ranks, dtype=np.float64)
    if not (n.min() >= 1 and n.max() < np.inf):  # also false for NaN
        raise InvalidInput("devices", ranks, "whole numbers of at least 1")
    wanted = ("ring", "tree", "hierarchical") if algorithm == "auto" else (algorithm,)
    out: list[Affine] = []
    if inter is None or per_node is None:
        for name in wanted:  # one node: hierarchical is the intra-node ring
            out.append(tree_terms(n, intra) if name == "tree" else ring_terms(n, intra))
        return out
    g = _validate.whole("devices_per_node", per_node)
    # Flat algorithms across nodes: every rank's traffic goes through its share of the NICs.
    shared = Link(inter.bandwidth / g, inter.latency, inter.efficiency)
    multi = n > g
    for name in wanted:
        if name == "hierarchical":
            out.append(hierarchical_terms(n, g, intra, inter))
        else:
            terms = tree_terms if name == "tree" else ring_terms
            (a1, c1), (a2, c2) = terms(n, shared), terms(n, intra)
            out.append((np.where(multi, a1, a2), np.where(multi, c1, c2)))
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

    On one node (``inter`` None, or n ≤ per_node) ring and tree run on the intra-node link; across
    nodes they run on the slowest tier, the per-rank share of the node's network, and hierarchical
    uses both tiers. ``auto`` is the fastest of the three at each size.
    """
    return _fastest(candidates(ranks, intra=intra, inter=inter, per_node=per_node, algorithm=algorithm), size)


def gather_candidates(
    ranks: Any,
    *,
    intra: Link,
    inter: Link | None = None,
    per_node: int | None = None,
    algorithm: Algorithm | str = "auto",
) -> list[Affine]:
    """The (a, c) terms of a reduce-scatter or an all-gather: half of a ring's or a hierarchical all-reduce's.

    NCCL runs both on rings, so ``tree`` (and ``auto``) price the ring and, across nodes, the
    hierarchical form; ``auto`` then takes the faster at each size.
    """
    names = ("ring", "hierarchical") if algorithm in ("auto", "tree") else (algorithm,)
    out: list[Affine] = []
    for name in names:
        (a, c), *_ = candidates(ranks, intra=intra, inter=inter, per_node=per_node, algorithm=name)
        out.append((a / 2, c / 2))
    return out


def _fastest(found: list[Affine], size: Any) -> Any:
    best = _at(found[0], size)
    for terms in found[1:]:
        best = np.minimum(best, _at(terms, size))
    return best


def reduce_scatter_time(
    size: Any, ranks: Any, *, intra: Link, inter: Link | None = None, per_node: int | None = None
) -> Any:
    """Seconds for one reduce-scatter of a ``size``-byte buffer over ``ranks`` ranks (each keeps size/n)."""
    return _fastest(gather_candidates(ranks, intra=intra, inter=inter, per_node=per_node), size)


def all_gather_time(
    size: Any, ranks: Any, *, intra: Link, inter: Link | None = None, per_node: int | None = None
) -> Any:
    """Seconds for one all-gather into a ``size``-byte buffer over ``ranks`` ranks (each gives size/n)."""
    return _fastest(gather_candidates(ranks, intra=intra, inter=inter, per_node=per_node), size)


def algbw(size: Any, seconds: Any) -> Any:
    """nccl-tests' algorithm bandwidth: S / t, bytes per second."""
    return np.asarray(size, dtype=np.float64) / np.asarray(seconds, dtype=np.float64)


def busbw(size: Any, seconds: Any, ranks: Any, collective: Collective = "all_reduce") -> Any:
    """nccl-tests' bus bandwidth: algbw · 2(n−1)/n for an all-reduce, algbw · (n−1)/n for the other two."""
    n = np.asarray(ranks, dtype=np.float64)
    factor = 2 if collective == "all_reduce" else 1
    return algbw(size, seconds) * factor * (n - 1) / n
