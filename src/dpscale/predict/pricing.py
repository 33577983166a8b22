"""The collectives of a step priced on a cluster: the model's time, or a measured shape's own.

Every strategy's collectives are priced here (:mod:`dpscale.predict.model` for DDP's all-reduce,
:mod:`dpscale.predict.sharding` for the reduce-scatters and all-gathers), in two steps:

- **the model** (:mod:`dpscale.predict.collectives`), on the links ``cluster.links(collective)``
  gives, with the network's bandwidth times ``cluster.network_share`` (what the job's own traffic
  reaches of it: 1 unless an interval or a calibration moves it);
- **given back**: where a shape was measured (an nccl-tests run of that collective over that many
  ranks on that many nodes: :class:`~dpscale.predict.job.Measured`), the time is the model's at the links as they were
  when it was measured, times what the run measured over what the model gave there, interpolated
  in log size between the run's sizes (log-log), and held at its ends beyond them. At the links the
  run was fitted with, that is the run's own time at each of its sizes; a what-if that changes the
  links (double the network's bandwidth) scales it as the model says. The network share does not
  apply there: a measured time is what was reached.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dpscale.predict.collectives import Collective, candidates, gather_candidates
from dpscale.predict.job import Cluster, Measured

__all__ = ["fastest", "given_back", "measure", "measured_shapes", "priced", "terms"]


def terms(cluster: Cluster, collective: Collective, ranks: Any, *, shared: bool = True) -> list[Any]:
    """The (a, c) terms of each algorithm ``cluster.algorithm`` allows for ``collective`` over ``ranks``."""
    intra, inter = cluster.links(collective)
    if shared and inter is not None and cluster.network_share != 1.0:
        inter = replace(inter, bandwidth=inter.bandwidth * cluster.network_share)
    per_node = cluster.devices_per_node if inter is not None else None
    price = candidates if collective == "all_reduce" else gather_candidates
    return price(ranks, intra=intra, inter=inter, per_node=per_node, algorithm=cluster.algorithm)


def fastest(found: Sequence[Any], size: Any) -> Any:
    """The least of a + c·S over the algorithms ``found``."""
    best = found[0][0] + found[0][1] * size
    for a, c in found[1:]:
        best = np.minimum(best, a + c * size)
    return best


def measured_shapes(cluster: Cluster, collective: Collective) -> list[Measured]:
    """The shapes of ``collective`` measured on this cluster (as many ranks to a node as it has)."""
    one_node = cluster.links(collective)[1] is None
    return [
        m
        for m in cluster.measured
        if m.collective == collective and m.nodes == (1 if one_node else math.ceil(m.ranks / cluster.devices_per_node))
    ]


def given_back(cluster: Cluster, collective: Collective, ranks: Any, size: Any, modelled: Any) -> Any:
    """``modelled`` (the model's time of ``size`` bytes over ``ranks``), with each measured shape's own in its place."""
    shapes = measured_shapes(cluster, collective)
    if not shapes:
        return modelled
    n = np.asarray(ranks)
    out = modelled
    for shape in shapes:
        at = n == shape.ranks
        if not np.any(at):
            continue
        with np.errstate(divide="ignore"):
            x = np.log(np.maximum(np.asarray(size, dtype=np.float64), 1.0))
        ratio = np.exp(np.interp(x, shape.log_sizes, shape.log_ratio))
        own = fastest(terms(cluster, collective, float(shape.ranks), shared=False), size) * ratio
        out = np.where(at, own, out)
    return out


def priced(cluster: Cluster, collective: Collective, ranks: Any, size: Any) -> Any:
    """Seconds for one ``collective`` of ``size`` bytes over ``ranks`` ranks: the model's, or a measured shape's own."""
    return given_back(cluster, collective, ranks, size, fastest(terms(cluster, collective, ranks), size))


def measure(
    cluster: Cluster, collective: Collective, ranks: int, nodes: int, sizes: Sequence[tuple[int, float]], source: str
) -> Measured | None:
    """The shape a run measured, against the model at ``cluster``'s links as they are (auto: as NCCL chooses).

    None where the run has no size above 0 bytes.
    """
    timed = sorted({size: seconds for size, seconds in sizes if size > 0 and seconds > 0}.items())
    if not timed:
        return None
    plain = replace(cluster, algorithm="auto", network_share=1.0, measured=())
    found = terms(plain, collective, float(ranks), shared=False)
    log_sizes = tuple(math.log(size) for size, _ in timed)
    log_ratio = tuple(math.log(seconds / float(fastest(found, float(size)))) for size, seconds in timed)
    return Measured(collective, ranks, nodes, log_sizes, log_ratio, source)
