"""What a probe's all-reduce times say: nccl-tests' bandwidths, and the α and β of each tier.

The ring all-reduce of :mod:`dpscale.collectives.costs` takes t = 2(n−1)·α + 2(n−1)/n · S·β;
α comes from the smallest messages and β from the largest, each where it dominates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dpscale.collectives.costs import algbw, busbw, ring_terms
from dpscale.collectives.link import Link
from dpscale.records import AllReduceTiming, NetworkProfile, ProbedLink, timestamp

__all__ = ["fit_alpha_beta", "network_profile", "timings"]


def fit_alpha_beta(sizes: Sequence[Mapping[str, float]], world: int) -> ProbedLink:
    """α and β of a ring all-reduce over ``world`` ranks, from its times (``bytes``, ``seconds``).

    Latency from the smallest messages (the median of the three smallest, where bytes cost
    nothing), bandwidth from the largest (its time less that latency): two ends of the curve, each
    measured where it dominates, rather than one least-squares line that noise at small sizes can
    tilt below zero.
    """
    per_message, per_byte = (float(x) for x in ring_terms(world, Link(1.0, 1.0)))  # 2(n−1) and 2(n−1)/n
    ordered = sorted(sizes, key=lambda p: p["bytes"])
    small = sorted(p["seconds"] for p in ordered[:3])
    a = small[len(small) // 2]
    largest = ordered[-1]
    transfer = max(largest["seconds"] - a, largest["seconds"] / 2)  # never below half the measured time
    beta = transfer / (per_byte * largest["bytes"])
    return ProbedLink(bandwidth=1 / beta, latency=a / per_message)


def timings(sizes: Sequence[Mapping[str, Any]], world: int) -> tuple[AllReduceTiming, ...]:
    """Each size's time with nccl-tests' algbw and busbw over ``world`` ranks."""
    return tuple(
        AllReduceTiming(
            p["bytes"],
            p["seconds"],
            float(algbw(p["bytes"], p["seconds"])),
            float(busbw(p["bytes"], p["seconds"], world)),
        )
        for p in sizes
    )


def network_profile(data: Mapping[str, Any], devices_per_node: int) -> NetworkProfile:
    """The profile of a probe from rank 0's result: every rank's sizes, and each tier's α and β.

    Across several nodes with several ranks each, each tier was probed on its own (the ranks of a
    node among themselves, then one rank per node); one rank per node leaves only the network.
    """
    world = data["world_size"]
    if data["nodes"] == 1:
        intra, inter = fit_alpha_beta(data["sizes"], world), None
    elif "intra_sizes" in data:  # several ranks per node: each tier measured on its own
        local = data["local_world_size"]
        intra, inter = fit_alpha_beta(data["intra_sizes"], local), fit_alpha_beta(data["inter_sizes"], data["nodes"])
    else:  # one rank per node: the network is all there is
        intra, inter = None, fit_alpha_beta(data["sizes"], world)
    return NetworkProfile(
        world_size=world,
        nodes=data["nodes"],
        devices_per_node=devices_per_node,
        backend=data["backend"],
        device_type=data["device_type"],
        torch=data["torch"],
        intra=intra,
        inter=inter,
        sizes=timings(data["sizes"], world),
        time=timestamp(),
    )
