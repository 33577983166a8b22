"""One tier of the network, and how n ranks fall into nodes of g: what every cost of
:mod:`dpscale.collectives.costs` and :mod:`dpscale.collectives.innetwork` is priced on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpscale import _validate
from dpscale.errors import N_, InvalidInput

__all__ = ["Link", "shape"]


@dataclass(frozen=True, slots=True)
class Link:
    """One tier of the network: latency α in seconds, bandwidth in bytes/s per direction, and the
    share of that bandwidth a collective really reaches (NCCL typically reaches 80–90 % of NVLink
    and InfiniBand line rate in nccl-tests' busbw). ``in_network``: the tier's switches reduce
    (NVLink SHARP in a node, SHARP across nodes; :mod:`dpscale.collectives.innetwork`)."""

    bandwidth: float
    latency: float = 0.0
    efficiency: float = 1.0
    in_network: bool = False

    def __post_init__(self) -> None:
        _validate.positive("bandwidth", self.bandwidth)
        if not (self.latency >= 0 and np.isfinite(self.latency)):
            raise InvalidInput("latency", self.latency, "a finite time of at least 0 seconds")
        _validate.fraction("efficiency", self.efficiency)
        if not isinstance(self.in_network, bool):
            raise InvalidInput("in_network", self.in_network, N_("true or false"))

    @property
    def beta(self) -> float:
        """Seconds per byte at the achievable bandwidth."""
        return 1.0 / (self.bandwidth * self.efficiency)


def shape(ranks: Any, per_node: int | None, inter: Link | None) -> tuple[Any, Any, Any, int]:
    """n, the nodes N and the ranks in a node min(n, g) (one node when there is no network), and g."""
    n = np.asarray(ranks, dtype=np.float64)
    if inter is None or per_node is None:
        return n, np.ones_like(n), n, 0
    g = _validate.whole("devices_per_node", per_node)
    return n, np.ceil(n / g), np.minimum(n, g), g
