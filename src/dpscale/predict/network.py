"""The links an nccl-tests log measured, as the model takes them: the network behind ``nccl_log``.

A page or a request sends the log's text (never a path on the server); it is read by
:func:`dpscale.nccltests.read_text` and fitted by :func:`dpscale.nccltests.import_logs`, as
``dpscale probe --import`` does, into the profile ``predict --network`` reads: α and β per tier,
and per collective where the run was of a reduce-scatter or an all-gather. What the prediction
then states of it (:attr:`Measured.described`) says which run it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from dpscale.nccltests import Log
    from dpscale.predict.collectives import Collective, Link

__all__ = ["Measured", "from_log"]


@dataclass(frozen=True)
class Measured:
    """The tiers a log measured (None: not measured), the devices per node, each collective's own links."""

    intra: Link | None
    inter: Link | None
    devices_per_node: int
    collectives: tuple[tuple[Collective, Link | None, Link | None], ...]
    described: dict[str, Any]  # what the prediction's assumptions say of the log


def from_log(log: Log) -> Measured:
    """The network ``log`` measured: its fitted tiers, and a description of the run."""
    from dpscale.nccltests import import_logs
    from dpscale.predict.collectives import Link

    profile = import_logs([log]).profile

    def link(probed: Any) -> Link | None:
        return None if probed is None else Link(probed.bandwidth, probed.latency, probed.efficiency)

    collectives = tuple(
        (cast("Collective", name), link(intra), link(inter)) for name, (intra, inter) in profile.collectives.items()
    )
    described = {
        "source": "nccl-tests log",
        "collective": log.collective,
        "ranks": log.ranks,
        "hosts": log.hosts,
        "devices_per_host": log.devices_per_host,
        "device_name": log.device_name,
        "busbw": max(row.busbw for row in log.rows),  # bytes/s, nccl-tests' bus bandwidth at its best size
        "intra": None if profile.intra is None else profile.intra.to_dict(),
        "inter": None if profile.inter is None else profile.inter.to_dict(),
    }
    return Measured(link(profile.intra), link(profile.inter), profile.devices_per_node, collectives, described)
