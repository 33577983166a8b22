"""A prediction calibrated on a real run's profiler traces (``dpscale predict --from-trace DIR``).

:func:`dpscale.explain.explain` measures, on the run's own ranks, the step one device would take
alone (compute and host time, T_c), the time collectives were in flight (T_comm at the run's
size) and how much the step time varied across ranks and steps. Those replace the prediction's
assumptions: one device's throughput is batch·k / T_c, the step-time variation is the measured
one, and the link the run's collectives crossed is given the share of its bandwidth (from 1 % to
all of it) that makes the model's T_comm at the run's size the measured one, its latency kept.
The other sizes then follow from the model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dpscale.errors import N_, InvalidInput

if TYPE_CHECKING:
    from dpscale.explain import Calibration
    from dpscale.predict.job import Cluster, Workload

__all__ = ["Traced", "calibrated"]

MAX_JITTER = 0.5  # the bound predict's --jitter holds a variation to
LOWEST_SHARE = 0.01  # the least share of a link's bandwidth predict takes (its --intra-efficiency bound)


@dataclass(frozen=True, slots=True)
class Traced:
    """What the traces changed: the run's size, and each value taken from them (None: kept)."""

    devices: int
    per_device_throughput: float | None
    jitter: float
    link_efficiency: float | None
    tier: str | None  # intra or inter: the link whose share of bandwidth was calibrated

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


def calibrated(
    measured: Calibration, workload: Workload, cluster: Cluster, *, speed_given: bool, jitter_given: bool
) -> tuple[Workload, Cluster, Traced]:
    """``workload`` and ``cluster`` with what the traces measured in place of the assumptions not given."""
    import numpy as np

    from dpscale.predict.model import time_terms  # the point terms alone: no interval to bisect on

    if measured.single_device_step <= 0:
        raise InvalidInput("from_trace", measured.devices, N_("traces in which the ranks compute"))
    speed = None
    if not speed_given:
        speed = workload.batch * workload.accumulation / measured.single_device_step
        workload = replace(workload, per_device_throughput=speed)
    jitter = cluster.jitter if jitter_given else min(measured.step_time_cv, MAX_JITTER * 0.999)
    cluster = replace(cluster, jitter=jitter)
    efficiency, tier = None, None
    if measured.devices > 1 and measured.communication_time > 0:
        across = cluster.inter is not None and measured.devices > cluster.devices_per_node
        link = cluster.inter if across and cluster.inter is not None else cluster.intra

        def with_share(share: float) -> Cluster:
            fitted = replace(link, efficiency=share)
            return replace(cluster, inter=fitted) if across else replace(cluster, intra=fitted)

        size = np.array([measured.devices])

        def communication(share: float) -> float:
            return float(time_terms(size, workload, with_share(share))[1][0])

        # T_comm falls as the share rises: bisect for the share that gives the measured time
        low, high = LOWEST_SHARE, 1.0
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (middle, high) if communication(middle) > measured.communication_time else (low, middle)
        efficiency, tier = high, "inter" if across else "intra"
        cluster = with_share(efficiency)
    return workload, cluster, Traced(measured.devices, speed, jitter, efficiency, tier)
