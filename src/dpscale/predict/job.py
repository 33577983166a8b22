"""The job a prediction is about: what one device runs (:class:`Workload`) and the cluster it runs on.

Plain validated descriptions, no arithmetic: :mod:`dpscale.predict.model` prices them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from dpscale import _validate
from dpscale.collectives.link import Link
from dpscale.collectives.names import Collective
from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message
from dpscale.predict.defaults import (
    ALGORITHMS,
    BACKWARD_SHARE,
    DDP_BUCKET_BYTES,
    DEFAULT_JITTER,
    DEFAULT_LAYERS,
    OPTIMIZERS,
    SHARDINGS,
    Algorithm,
    Optimizer,
    Sharding,
)

__all__ = ["Cluster", "Measured", "Reference", "Workload", "assumptions", "measured_notes"]


@dataclass(frozen=True, slots=True)
class Measured:
    """A measured shape: ``collective`` over ``ranks`` ranks on ``nodes`` nodes, and at each measured size
    (its log, ``log_sizes``) the log of the measured time over the model's (``log_ratio``)."""

    collective: Collective
    ranks: int
    nodes: int
    log_sizes: tuple[float, ...]
    log_ratio: tuple[float, ...]
    source: str = "nccl-tests log"


@dataclass(frozen=True, slots=True)
class Workload:
    """What one device runs: ``per_device_throughput`` samples/s alone, at micro-batch ``batch``.

    ``input_throughput``, when known, is what the input pipeline of one node sustains in all
    (samples/s), shared by the node's devices; one device alone ran at ``per_device_throughput``
    with it, so it is at least that.
    """

    per_device_throughput: float
    batch: float
    params: float
    grad_bytes: float = 4.0
    accumulation: int = 1
    input_throughput: float | None = None
    param_bytes: float = 4.0  # bytes per weight as gathered and held (2 for bf16); gradients: grad_bytes
    optimizer: Optimizer = "adam"
    layers: int = DEFAULT_LAYERS  # pieces a sharded model is gathered in, one prefetched ahead
    activation_memory: float | None = None  # bytes of activations per device, when known

    def __post_init__(self) -> None:
        # Stored as validated: floats (an int of 2**63 would overflow numpy's integers) and a whole k.
        for name in ("per_device_throughput", "batch", "params", "grad_bytes", "param_bytes"):
            object.__setattr__(self, name, _validate.positive(name, getattr(self, name)))
        object.__setattr__(self, "accumulation", _validate.whole("accumulation", self.accumulation))
        object.__setattr__(self, "layers", _validate.whole("layers", self.layers))
        if self.optimizer not in OPTIMIZERS:
            raise InvalidInput(
                "optimizer", self.optimizer, N_("one of %(choices)s"), params={"choices": ", ".join(OPTIMIZERS)}
            )
        if self.activation_memory is not None:
            object.__setattr__(
                self, "activation_memory", _validate.positive("activation_memory", self.activation_memory)
            )
        if self.input_throughput is not None:
            object.__setattr__(self, "input_throughput", _validate.positive("input_throughput", self.input_throughput))
            if self.input_throughput < self.per_device_throughput:
                raise InvalidInput(
                    "input_throughput",
                    self.input_throughput,
                    N_(
                        "at least the per-device throughput (%(v)s): one device alone ran at that speed with "
                        "this input pipeline"
                    ),
                    params={"v": f"{self.per_device_throughput:g}"},
                )

    @property
    def gradient_bytes(self) -> float:
        """G = P · bytes per gradient."""
        return self.params * self.grad_bytes


@dataclass(frozen=True, slots=True)
class Cluster:
    """The devices' links (``intra`` inside a node of ``devices_per_node``, ``inter`` per node), how
    their all-reduce runs, and how data parallelism keeps the model's copies (``sharding``)."""

    intra: Link
    devices_per_node: int = 8
    inter: Link | None = None
    algorithm: Algorithm = "auto"
    overlap: bool = True
    bucket_bytes: float = DDP_BUCKET_BYTES
    jitter: float = DEFAULT_JITTER
    sharding: Sharding = "ddp"
    shard_group: int | None = None  # hybrid: devices sharing one copy of the model states [one node]
    device_memory: float | None = None  # bytes one device holds, when known: what fits is said
    interference: float = 0.0  # share of the overlapped communication's time the compute still loses
    # Links a profile measured for one collective apart (nccl-tests' reduce_scatter_perf, all_gather_perf):
    # (collective, intra, inter), None where that collective's run did not measure the tier.
    collectives: tuple[tuple[Collective, Link | None, Link | None], ...] = ()
    # Shapes an nccl-tests run (or a probe) measured: priced as measured there (dpscale.predict.pricing).
    measured: tuple[Measured, ...] = ()
    # What the job's own traffic reaches of the network's bandwidth where no run measured it: 1 as
    # given; an interval or a calibration moves it (dpscale.predict.uncertainty).
    network_share: float = 1.0
    # Where each tier's figures came from: (tier, "preset", "typed", "probe", "nccl-tests log" or
    # "assumed"), as the prediction's assumptions state it; empty when the links were given in Python.
    sources: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _validate.whole("devices_per_node", self.devices_per_node)
        _validate.positive("network_share", self.network_share)
        if self.sharding not in SHARDINGS:
            raise InvalidInput(
                "sharding", self.sharding, N_("one of %(choices)s"), params={"choices": ", ".join(SHARDINGS)}
            )
        if self.shard_group is not None:
            _validate.whole("shard_group", self.shard_group)
            if self.sharding != "hybrid":  # a group of nothing: said, not ignored
                raise InvalidInput("shard_group", self.shard_group, N_("no group unless the strategy is hybrid (HSDP)"))
        if self.device_memory is not None:
            _validate.positive("device_memory", self.device_memory)
        if self.algorithm not in ALGORITHMS:
            raise InvalidInput(
                "algorithm", self.algorithm, N_("one of %(choices)s"), params={"choices": ", ".join(ALGORITHMS)}
            )
        _validate.positive("bucket", self.bucket_bytes)
        if not (0 <= self.interference < 1):
            raise InvalidInput("interference", self.interference, "a share from 0 to below 1 (0.3 is 30 %%)")
        if not (0 <= self.jitter < 1):
            raise InvalidInput("jitter", self.jitter, "a coefficient of variation from 0 to below 1 (0.02 is 2 %%)")
        for name, *_ in self.collectives:
            if name not in get_args(Collective):
                raise InvalidInput("collectives", name, N_("all_reduce, reduce_scatter or all_gather"))

    def links(self, collective: Collective) -> tuple[Link, Link | None]:
        """The links ``collective`` runs on: its own where a profile measured them, else the cluster's."""
        for name, intra, inter in self.collectives:
            if name == collective:
                return intra or self.intra, inter or self.inter
        return self.intra, self.inter

    def with_links(self, change: Callable[[Link], Link], *, tier: Literal["intra", "inter"]) -> Cluster:
        """The cluster with ``change`` applied to every link of ``tier``, the collectives' own too."""
        own = tuple(
            (
                name,
                change(intra) if tier == "intra" and intra else intra,
                change(inter) if tier == "inter" and inter else inter,
            )
            for name, intra, inter in self.collectives
        )
        if tier == "intra":
            return replace(self, intra=change(self.intra), collectives=own)
        return replace(self, inter=None if self.inter is None else change(self.inter), collectives=own)


def _link(found: Link | None) -> dict[str, Any] | None:
    """A link as the JSON states it; ``in_network`` only where its switches reduce."""
    if found is None:
        return None
    out: dict[str, Any] = {"bandwidth": found.bandwidth, "latency": found.latency, "efficiency": found.efficiency}
    return {**out, "in_network": True} if found.in_network else out


def _size(nbytes: float) -> Message:
    """A message size in binary units, whole where it is (8 B, 64 KiB, 8 GiB), else to three figures."""
    for unit, scale in ((N_("%(n)s GiB"), 2**30), (N_("%(n)s MiB"), 2**20), (N_("%(n)s KiB"), 2**10)):
        if nbytes >= scale:
            value = nbytes / scale
            return Message.of(unit, n=int(value) if value == int(value) else float(f"{value:.3g}"))
    return Message.of(N_("%(n)s B"), n=int(nbytes))


def measured_notes(c: Cluster) -> tuple[Message, ...]:
    """Where a prediction used measured times, a sentence each (what the CLI's notes and the page print)."""
    out = []
    for m in c.measured:
        sizes = {"smallest": _size(round(math.exp(m.log_sizes[0]))), "largest": _size(round(math.exp(m.log_sizes[-1])))}
        template = (
            N_("%(collective)s: measured times used at %(ranks)s ranks in one node (sizes %(smallest)s–%(largest)s)")
            if m.nodes == 1
            else N_(
                "%(collective)s: measured times used at %(ranks)s ranks on %(nodes)s nodes (sizes "
                "%(smallest)s–%(largest)s)"
            )
        )
        out.append(Message.of(template, collective=m.collective, ranks=m.ranks, nodes=m.nodes, **sizes))
    return tuple(out)


def assumptions(w: Workload, c: Cluster, reference: Reference | None) -> dict[str, Any]:
    """What a prediction assumed, as its JSON states it."""

    gradient = w.gradient_bytes
    link = _link
    assumed_free = dict(c.sources).get("intra") == "assumed"  # the node's links: none measured, none given
    own = {name: {"intra": link(intra), "inter": link(inter)} for name, intra, inter in c.collectives}
    given_back = [
        {
            "collective": m.collective,
            "ranks": m.ranks,
            "nodes": m.nodes,
            "source": m.source,
            "sizes": [round(math.exp(m.log_sizes[0])), round(math.exp(m.log_sizes[-1]))],
            "said": str(said),
        }
        for m, said in zip(c.measured, measured_notes(c), strict=True)
    ]
    return {
        **({"collectives": own} if own else {}),  # each collective's own links, where a profile measured them apart
        **({"sources": dict(c.sources)} if c.sources else {}),  # where each tier's figures came from
        # the shapes a run measured, whose collectives take the measured times there
        **({"given_back": given_back} if given_back else {}),
        "sharding": c.sharding,
        "shard_group": (c.shard_group or c.devices_per_node) if c.sharding == "hybrid" else None,
        "gradient_bytes": gradient,
        "param_bytes": w.param_bytes,
        "optimizer": w.optimizer,
        "layers": w.layers,
        "buckets": max(1, math.ceil(gradient / c.bucket_bytes)),
        "bucket_bytes": c.bucket_bytes,
        "backward_share": BACKWARD_SHARE,
        "algorithm": c.algorithm,
        "overlap": c.overlap,
        "jitter": c.jitter,
        "interference": c.interference,
        "devices_per_node": c.devices_per_node,
        "device_memory": c.device_memory,
        "intra": None if assumed_free else link(c.intra),  # null: assumed free, as "sources" says
        "inter": link(c.inter),
        "input_throughput": w.input_throughput,
        "reference": None
        if reference is None
        else {
            "devices": reference.devices,
            "throughput": reference.throughput,
            "compute_speed": w.per_device_throughput,
        },
        "not_modelled": ("the input pipeline (no input_throughput given), " if w.input_throughput is None else "")
        + (
            "the node's own links (no one-host run measured them and none were given: taken as costing nothing, "
            "as the network's fit took them), "
            if assumed_free
            else ""
        )
        + "host contention, "
        + ("compute slowed by concurrent NCCL kernels (interference 0), " if not c.interference else "")
        + "power and clock limits when every device of a node runs",
    }


@dataclass(frozen=True, slots=True)
class Reference:
    """The whole cluster's throughput measured on ``devices`` devices: it stands in for one device's."""

    devices: int
    throughput: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "devices", _validate.device_count("measured", self.devices))
        object.__setattr__(self, "throughput", _validate.positive("measured", self.throughput))
