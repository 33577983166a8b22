"""Sharded data parallelism: what each device holds and sends under ZeRO, FSDP and HSDP.

Every device still runs its own slice of the batch; the strategies differ in which of the model
states a device keeps whole and which it keeps a 1/n share of (n: the devices that share them),
and so in the collectives that keep the copies in step (P parameters; G = P·grad_bytes, the
gradients as reduced; W = P·param_bytes, the weights as gathered):

    strategy  shards (1/n)                    per optimizer step (k micro-steps)
    ddp       nothing                         all-reduce G, on the last micro-step (no_sync)
    zero1     optimizer states                reduce-scatter G on the last micro-step; all-gather W
    zero2     + gradients                     reduce-scatter G every micro-step; all-gather W
    zero3     + parameters (FSDP FULL_SHARD)  every micro-step: all-gather W in the forward pass,
                                              again in the backward pass, reduce-scatter G
    hybrid    as zero3 inside a group of s    as zero3 over the s devices of a group, and an
              devices (HSDP; s = one node)    all-reduce of each G/s shard across the n/s groups

Overlap, as the frameworks do it: the gradient reduction runs behind the backward pass (DDP's
25 MiB buckets; FSDP reduce-scatters each unit's gradients as they are ready, for zero1 and zero2
as for zero3, in ``layers`` pieces: NCCL's rings pay a latency per step that grows with the ranks,
so pieces the size of DDP's buckets would be priced far below what FSDP runs), and the weights
are gathered one piece ahead of the compute that needs them (FSDP's forward and backward
prefetch, DeepSpeed's prefetch bucket), in ``layers`` pieces. A sequence of m pieces of
communication c behind m pieces of compute t each leaves exposed

    c + (m − 1) · max(0, c − t)

the first (or last) piece, which nothing can hide, and whatever each other piece takes beyond
its compute. zero1 and zero2 gather the updated weights behind the first forward pass, as FSDP's
SHARD_GRAD_OP does (DeepSpeed gathers them at the end of the step, where they would not hide).

Memory per device: weights W, gradients G and the optimizer states (Adam's two fp32 moments,
8 bytes a parameter; SGD's momentum, 4; plus an fp32 master copy of the weights, 4, when they
are kept in fewer than 4 bytes), each divided as the table says; the buffers a strategy holds
unsharded at once (zero3: the gathered weights of the piece in use and of the one prefetched,
and one piece's unreduced gradients; zero1/zero2: one gradient bucket); the activations as given.

The volume each device sends is counted as rings send it: (n−1)/n of the buffer for a
reduce-scatter or an all-gather, twice that for an all-reduce. So zero1 and zero2 send what DDP
sends when W = G, and zero3 half as much again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpscale.collectives.costs import candidates
from dpscale.collectives.link import Link
from dpscale.collectives.names import Collective
from dpscale.predict import pricing
from dpscale.predict.defaults import BACKWARD_SHARE, MASTER_BYTES, OPTIMIZER_STATE_BYTES
from dpscale.predict.prediction import Memory

if TYPE_CHECKING:
    from dpscale.predict.job import Cluster, Workload

__all__ = [
    "BACKWARD_SHARE",
    "communication_volume",
    "exposed",
    "fewest_devices",
    "memory",
    "shard_group",
    "sharded_terms",
]


def exposed(piece: Any, pieces: Any, compute: Any, overlap: bool) -> Any:
    """Communication not hidden when ``pieces`` pieces of ``piece`` seconds run behind ``compute`` seconds.

    Piece i is ready after i/m of the compute and they run one after another on one stream, so
    the last ends at max(compute/m + m·c, compute + c): c + (m − 1)·max(0, c − compute/m) past
    the compute. Without overlap, all of it.
    """
    if not overlap:
        return piece * pieces
    end = np.maximum(compute / pieces + pieces * piece, compute + piece)
    return np.maximum(end - compute, 0.0)


def shard_group(devices: Any, cluster: Cluster) -> Any:
    """s: how many devices share one copy of the model states (1 for ddp, n for zero*, the group for hybrid)."""
    n = np.asarray(devices, dtype=np.float64)
    if cluster.sharding == "ddp":
        return np.ones_like(n)
    if cluster.sharding == "hybrid":
        return np.minimum(n, cluster.shard_group or cluster.devices_per_node)
    return n


def memory(devices: Any, workload: Workload, cluster: Cluster) -> Memory:
    """Bytes each device holds, per device count (see the module docstring)."""
    n = np.asarray(devices, dtype=np.float64)
    s = shard_group(n, cluster)
    one = np.ones_like(n)
    p = workload.params
    weights, grads = p * workload.param_bytes, p * workload.grad_bytes
    state = p * (OPTIMIZER_STATE_BYTES[workload.optimizer] + (MASTER_BYTES if workload.param_bytes < 4 else 0.0))
    strategy = cluster.sharding
    sharded_states = strategy != "ddp"
    sharded_grads = strategy in ("zero2", "zero3", "hybrid")
    sharded_weights = strategy in ("zero3", "hybrid")
    if sharded_weights:
        buffers = one * (2 * weights + grads) / workload.layers
    elif sharded_states:
        buffers = one * min(cluster.bucket_bytes, grads)
    else:
        buffers = 0 * one  # DDP's buckets are views of the gradients (gradient_as_bucket_view)
    return Memory(
        parameters=weights / s if sharded_weights else weights * one,
        gradients=grads / s if sharded_grads else grads * one,
        optimizer_states=state / s if sharded_states else state * one,
        buffers=buffers,
        activations=one * (workload.activation_memory or 0.0),
    )


def fewest_devices(workload: Workload, cluster: Cluster, most: int = 10**9) -> int | None:
    """The fewest devices whose memory (``cluster.device_memory``) holds what each must, or None.

    What a device holds is whole + shared/n: the parts a strategy keeps whole on every device,
    and those it divides among the n devices that share them (up to the group of ``hybrid``), so
    the count is ⌈shared / (memory − whole)⌉ when the memory is more than the whole part.
    """
    limit = cluster.device_memory
    if limit is None:
        return None
    one, two = (float(memory(np.array([float(n)]), workload, cluster).total[0]) for n in (1, 2))
    if one <= limit:
        return 1
    shared = 2 * (one - two)
    whole = one - shared
    if shared <= 0 or limit <= whole:
        return None
    ceiling = most if cluster.sharding != "hybrid" else min(most, cluster.shard_group or cluster.devices_per_node)
    n = max(2, math.ceil(shared / (limit - whole)))
    for _ in range(3):  # the division's rounding: a step or two at most
        if n > ceiling or float(memory(np.array([float(n)]), workload, cluster).total[0]) <= limit:
            break
        n += 1
    return n if n <= ceiling else None


def communication_volume(devices: Any, workload: Workload, cluster: Cluster) -> Any:
    """Bytes each device sends per optimizer step, counted as rings send them."""
    n = np.asarray(devices, dtype=np.float64)
    k = workload.accumulation
    grads = workload.params * workload.grad_bytes
    weights = workload.params * workload.param_bytes
    if cluster.sharding == "ddp":
        return 2 * (n - 1) / n * grads
    if cluster.sharding == "zero1":
        return (n - 1) / n * (grads + weights)
    if cluster.sharding == "zero2":
        return (n - 1) / n * (k * grads + weights)
    s = shard_group(n, cluster)
    within = (s - 1) / s * k * (2 * weights + grads)
    replicas = np.ceil(n / s)
    return within + 2 * (replicas - 1) / replicas * k * grads / s


def _replica_link(cluster: Cluster) -> Link:
    """The link the groups' all-reduce runs on: across nodes, each device's share of its node's network.

    HSDP all-reduces each of a group's g shards across the groups at once, g all-reduces side by
    side, one rank of each node in each: they share the node's network cards.
    """
    intra, inter = cluster.links("all_reduce")
    if inter is None:
        return intra
    g = cluster.devices_per_node
    share = cluster.network_share
    return Link(inter.bandwidth * share / g, inter.latency, inter.efficiency)


def sharded_terms(
    devices: Any,
    micro: Any,
    params: Any,
    grad_bytes: Any,
    param_bytes: Any,
    accumulation: Any,
    layers: Any,
    cluster: Cluster,
) -> tuple[Any, Any]:
    """Communication and exposed communication per optimizer step of a sharded strategy (seconds).

    ``micro`` is one micro-step's compute (b/v); the forward pass is a third of it, the backward
    two thirds. Every argument but ``cluster`` broadcasts, so a grid of millions of
    configurations is one call; inputs are not checked here (see :func:`dpscale.predict.model.predict`).
    """
    n = np.asarray(devices, dtype=np.float64)
    c, k = cluster, accumulation
    forward, backward = (1 - BACKWARD_SHARE) * micro, BACKWARD_SHARE * micro
    grads, weights = np.multiply(params, grad_bytes), np.multiply(params, param_bytes)
    s = shard_group(n, c)

    gathering = pricing.terms(c, "all_gather", s)  # each with its own links where measured apart
    same = c.links("reduce_scatter") == c.links("all_gather")  # the usual case: priced once
    scattering = gathering if same else pricing.terms(c, "reduce_scatter", s)

    def timed(collective: Collective, found: list[tuple[Any, Any]], size: Any) -> Any:
        return pricing.given_back(c, collective, s, size, pricing.fastest(found, size))

    gather = timed("all_gather", gathering, weights / layers)  # one piece's weights, gathered
    if c.sharding in ("zero1", "zero2"):
        # one piece's gradients, reduce-scattered as the backward pass makes them (FSDP's SHARD_GRAD_OP: a
        # unit at a time; DeepSpeed's reduce bucket, 5e8 elements, is larger still than DDP's 25 MiB)
        scatter = timed("reduce_scatter", scattering, grads / layers)
        reductions = 1 if c.sharding == "zero1" else k  # zero1 keeps whole gradients until the last micro-step
        communication = layers * gather + reductions * layers * scatter
        hidden_behind = exposed(gather, layers, forward, c.overlap) + np.multiply(
            reductions, exposed(scatter, layers, backward, c.overlap)
        )
        return communication, hidden_behind
    scatter = timed("reduce_scatter", scattering, grads / layers)
    if c.sharding == "hybrid":
        replicas = np.ceil(n / s)
        algorithm = "ring" if c.algorithm == "hierarchical" else c.algorithm
        share = _replica_link(c)  # one rank to a node in each of the g all-reduces side by side
        across = candidates(replicas, intra=share, inter=share, per_node=1, algorithm=algorithm)
        reduce = pricing.fastest(across, grads / s / layers)  # each piece's shard, all-reduced across the groups
        backward_piece = gather + scatter + reduce
    else:
        reduce = 0.0
        backward_piece = gather + scatter
    communication = np.multiply(k, layers * (2 * gather + scatter + reduce))
    per_micro = exposed(gather, layers, forward, c.overlap) + exposed(backward_piece, layers, backward, c.overlap)
    return communication, np.multiply(k, per_micro)
