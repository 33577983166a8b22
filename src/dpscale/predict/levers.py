"""The levers: each what-if of the seed's FAQ (and the other sharding strategies) tried alone.

Each lever changes one input and predicts again at the largest device count. It acts on one term
of the step; where that term's figure was only assumed (:mod:`dpscale.predict.sources`), its gain
is only as true as the assumption, so it says so ("if the step-time variation is 2 %: …") and
ranks after the levers on measured terms.

Above the model: the levers call :mod:`dpscale.predict.model`, which knows nothing of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, get_args

from dpscale.errors import InvalidInput
from dpscale.messages import Message
from dpscale.predict.defaults import Sharding

if TYPE_CHECKING:
    from dpscale.collectives.link import Link
    from dpscale.predict.job import Cluster, Reference, Workload

__all__ = ["Lever", "levers"]


@dataclass(frozen=True, slots=True)
class Lever:
    """A what-if: the change, and the efficiency it gives at the largest device count asked for.

    ``fits``: whether each device's memory then holds what it must (None: its memory was not given).
    ``term``: the step's term it acts on; ``assumed``: whether that term's figure was only assumed;
    ``condition``: the assumed figure its gain rests on, where one number is all it rests on (the
    step-time variation), said before the what-if.
    """

    name: str
    description: str
    efficiency: float
    gain: float  # points of efficiency over the prediction as given
    fits: bool | None = None
    term: str = "exposed_communication"
    assumed: bool = False
    condition: Message | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "efficiency": self.efficiency,
            "gain": self.gain,
            "fits": self.fits,
            "term": self.term,
            "assumed": self.assumed,
            "condition": None if self.condition is None else str(self.condition),
        }


def _condition(term: str, cluster: Cluster, assumed: bool) -> Message | None:
    """The one assumed figure a lever on ``term`` rests on: the variation, where it was assumed.

    A lever on the links rests on their stated figures (a preset's, or typed) and the assumed share
    reached of them; the table heads them as assumed, and :func:`dpscale.report.levers_title` says so.
    """
    if assumed and term == "straggler_wait" and cluster.jitter:
        return Message.of("if the step-time variation is %(cv)s %%", cv=round(100 * cluster.jitter, 2))
    return None


def levers(
    devices: Any,
    workload: Workload,
    cluster: Cluster,
    *,
    reference: Reference | None = None,
    sources: Mapping[str, str] | None = None,
    estimate: bool = True,
    jitter_known: bool | None = None,
) -> list[Lever]:
    """The seed FAQ's levers and the other sharding strategies, each tried alone at the largest
    device count: those that fit in the device's memory first, then those on measured terms, then
    the most efficient.

    ``estimate``: ``cluster``'s unknowns are taken at their priors' medians, as :func:`predict`
    takes them (False: they are set already, as a calibration fitted them). ``sources``: each
    term's (:mod:`dpscale.predict.sources`); by default as :func:`predict` would say them.
    """
    import numpy as np

    from dpscale.predict import model, uncertainty
    from dpscale.predict import sources as where

    n = int(model._devices(devices).max())
    if sources is None:
        names = uncertainty.unknowns(cluster, jitter_known=jitter_known)
        speed: where.Source = "fitted" if reference is not None else "measured"
        sources = dict(where.of(n, workload, cluster, speed=speed, unknowns=names))
    if estimate:
        cluster = model.estimated(cluster, jitter_known=jitter_known)
    if reference is not None:
        workload = model._calibrated(reference, workload, cluster)

    def outcome(w: Workload, c: Cluster) -> tuple[float, bool | None]:
        p = model._point(np.asarray([n]), w, c, None)
        fits = None if p.fits is None else bool(p.fits[0])
        if reference is None:
            return float(p.efficiency[0]), fits
        # relative to the measurement: what each device delivers against what it delivered there
        return float(p.actual_throughput[0]) / n / (reference.throughput / reference.devices), fits

    base, _ = outcome(workload, cluster)
    out = []
    for name, description, term, w, c in _options(workload, cluster):
        if c == cluster and w == workload:
            continue  # already in effect
        try:
            e, fits = outcome(w, c)
        except InvalidInput:  # a what-if past floating point (doubling 1e307 parameters): left out
            continue
        assumed = sources.get(term, "assumed") == "assumed"
        out.append(Lever(name, description, e, e - base, fits, term, assumed, _condition(term, cluster, assumed)))
    return sorted(out, key=lambda lever: (lever.fits is not False, not lever.assumed, lever.efficiency), reverse=True)


def _options(workload: Workload, cluster: Cluster) -> list[tuple[str, str, str, Workload, Cluster]]:
    """Each what-if: its name, its description, the term it acts on, and the job it makes."""

    def faster(link: Link) -> Link:
        return replace(link, bandwidth=2 * link.bandwidth)

    from dpscale.predict.model import Imbalanced

    comm = "exposed_communication"
    balanced = replace(cluster, jitter=0.0)
    if isinstance(balanced, Imbalanced):  # a rank slow at every step: balanced too
        balanced = replace(balanced, imbalance=0.0)
    options: list[tuple[str, str, str, Workload, Cluster]] = [
        ("batch", "double the per-device batch", comm, replace(workload, batch=2 * workload.batch), cluster),
        (
            "accumulation",
            "accumulate twice as many micro-steps",
            comm,
            replace(workload, accumulation=2 * workload.accumulation),
            cluster,
        ),
        (
            "intra_bandwidth",
            "double the bandwidth inside a node",
            comm,
            workload,
            cluster.with_links(faster, tier="intra"),
        ),
        ("overlap", "overlap communication with the backward pass", comm, workload, replace(cluster, overlap=True)),
        ("balance", "balance the load: no step-time variation", "straggler_wait", workload, balanced),
    ]
    if workload.grad_bytes > 2:  # already 16 bits or fewer: nothing to offer
        options.append(
            ("fp16_gradients", "all-reduce gradients in 16 bits", comm, replace(workload, grad_bytes=2.0), cluster)
        )
    if workload.input_throughput is not None:
        doubled = replace(workload, input_throughput=2 * workload.input_throughput)
        options.append(("input", "double the input pipeline's throughput", "input_wait", doubled, cluster))
    if cluster.inter is not None:
        options.append(
            (
                "inter_bandwidth",
                "double the network bandwidth between nodes",
                comm,
                workload,
                cluster.with_links(faster, tier="inter"),
            )
        )
    for algorithm in ("ring", "tree", "hierarchical"):
        if algorithm != cluster.algorithm:
            options.append(
                (
                    f"algorithm_{algorithm}",
                    f"use the {algorithm} all-reduce",
                    comm,
                    workload,
                    replace(cluster, algorithm=algorithm),
                )
            )
    for strategy in get_args(Sharding):
        if strategy != cluster.sharding:
            instead = f"{strategy} instead of {cluster.sharding}"
            group = cluster.shard_group if strategy == "hybrid" else None
            changed = replace(cluster, sharding=strategy, shard_group=group)
            options.append((f"sharding_{strategy}", instead, comm, workload, changed))
    return options
