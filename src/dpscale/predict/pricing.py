"""The collectives of a step priced on a cluster: the model's time, or a measured shape's own.

Every strategy's collectives are priced here (:mod:`dpscale.predict.model` for DDP's all-reduce,
:mod:`dpscale.predict.sharding` for the reduce-scatters and all-gathers), in two steps:

- **the model** (:mod:`dpscale.collectives.costs`), on the links ``cluster.links(collective)``
  gives, with the network's bandwidth times ``cluster.network_share`` (what the job's own traffic
  reaches of it: 1 unless an interval or a calibration moves it);
- **given back**: where a shape was measured (an nccl-tests run of that collective over that many
  ranks on that many nodes: :class:`~dpscale.predict.job.Measured`), the time is the model's at the links as they were
  when it was measured, times what the run measured over what the model gave there, interpolated
  in log size between the run's sizes (log-log), and held at its ends beyond them. At the links the
  run was fitted with, that is the run's own time at each of its sizes; a what-if that changes the
  links (double the network's bandwidth) scales it as the model says. The network share does not
  apply there: a measured time is what was reached.
- **carried to the rank counts not measured**: the α-β model is too fast between about 64 KiB and
  64 MiB (18–61 % at 4 MiB on the public logs), where NCCL runs its low-latency protocols, LL and
  LL128, at a half and 92 % of Simple's bandwidth but with their own latencies (NCCL's tuning
  model, ncclTopoTuneModel in src/graph/tuning.cc), and fewer channels; NCCL's own tuner corrects
  its trees there by a factor of 0.5–0.9 a size (treeCorrectionFactor). Which protocol runs is set
  by the message's size against latencies that grow slowly with the node count (a tree's in
  log N), so at a rank count of the tier (one node, or across nodes) a run measured but not at
  its own, the model's time is multiplied by what the nearest such run (in rank count) measured
  over the model at that size, interpolated as above. On logs written from NCCL's tuning model
  with its protocols, that brings 4 and 8 nodes from 1 and 2 to within 7 % from 4 MiB up, where
  the model alone is up to 26 % too fast (tests/predict/test_extrapolation.py). A tier no run measured
  takes the model alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dpscale.collectives.costs import candidates, gather_candidates
from dpscale.collectives.names import Collective
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
    """The measured shapes that price ``collective`` on this cluster (as many ranks to a node as it has).

    Its own runs first (given back at their shape); then, for a tier (one node, or across nodes)
    none of its own runs measured, the other collectives' runs of that tier, whose shortfall at a
    size is carried to it (see the module's docstring).
    """
    one_node = cluster.links(collective)[1] is None
    g = cluster.devices_per_node
    fitting = [m for m in cluster.measured if m.nodes == (1 if one_node else math.ceil(m.ranks / g))]
    own = [m for m in fitting if m.collective == collective]
    tiers = {m.nodes > 1 for m in own}
    others = sorted(
        (m for m in fitting if m.collective != collective and (m.nodes > 1) not in tiers),
        key=lambda m: m.collective != "all_reduce",  # an all-reduce's first, as the likeliest to have been measured
    )
    return own + others


def _carried(shapes: Sequence[Measured], n: Any, nodes: Any, size: Any) -> Any:
    """What each rank count's nearest measured shape of its tier measured over the model at ``size``.

    1 where no shape measured the tier. Nearest: in the log of the rank count, the first listed on a tie.
    """
    log_size = np.log(np.maximum(size, 1.0))
    ratio = np.ones(np.broadcast_shapes(np.shape(nodes), np.shape(size)))
    best = np.full(np.shape(nodes), np.inf)
    chosen: list[tuple[Measured, Any]] = []
    for shape in shapes:
        distance = np.where((nodes > 1) == (shape.nodes > 1), np.abs(np.log(n / shape.ranks)), np.inf)
        closer = distance < best
        best = np.where(closer, distance, best)
        chosen.append((shape, closer))
    taken = np.zeros(np.shape(nodes), dtype=bool)
    for shape, closer in reversed(chosen):  # the last closer one is the nearest
        mine = closer & ~taken
        taken |= mine
        if np.any(mine):
            ratio = np.where(mine, np.exp(np.interp(log_size, shape.log_sizes, shape.log_ratio)), ratio)
    return ratio


def given_back(cluster: Cluster, collective: Collective, ranks: Any, size: Any, modelled: Any) -> Any:
    """``modelled`` (the model's time of ``size`` bytes over ``ranks``), with what was measured in its place.

    At a shape a run of ``collective`` measured, the run's own times; at the other rank counts of a
    tier a run measured, the model's times the run's measured over modelled at that size.
    """
    shapes = measured_shapes(cluster, collective)
    if not shapes:
        return modelled
    n = np.asarray(ranks, dtype=np.float64)
    sizes = np.asarray(size, dtype=np.float64)
    one_node = cluster.links(collective)[1] is None
    nodes = np.ones_like(n) if one_node else np.ceil(n / cluster.devices_per_node)
    out = modelled * _carried(shapes, n, nodes, sizes)
    for shape in shapes:
        at = n == shape.ranks
        if shape.collective != collective or not np.any(at):
            continue
        ratio = np.exp(np.interp(np.log(np.maximum(sizes, 1.0)), shape.log_sizes, shape.log_ratio))
        own = fastest(terms(cluster, collective, float(shape.ranks), shared=False), sizes) * ratio
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
