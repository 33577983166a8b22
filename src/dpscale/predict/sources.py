"""Where each term of a predicted step came from: assumed, measured, fitted, from a log or from traces.

A term's figure is only as good as what it rests on, and a user acts on the largest term named:
each of compute, exposed communication, straggler wait and input wait says its source, the
bottleneck and the levers rank what was measured ahead of what was assumed.

- ``assumed``: a default or a prior's median (a preset's links at the assumed share of their
  bandwidth, a variation of 2 %, an input pipeline that keeps up), or one device's throughput
  derived from an MFU given for a model that has never run (:func:`speed`);
- ``measured``: given by the user as measured (one device's throughput alone, a variation, an
  input rate, a network profile's probe);
- ``fitted``: calibrated on the cluster's measured throughputs (``--measured``);
- ``log``: an nccl-tests log of the cluster's network;
- ``trace``: a run's profiler traces (``--from-trace``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from dpscale.predict.job import Cluster, Workload

__all__ = ["ASSUMED", "SOURCES", "TERMS", "Source", "of", "speed"]

Source = Literal["assumed", "measured", "fitted", "log", "trace"]
SOURCES: tuple[Source, ...] = ("assumed", "measured", "fitted", "log", "trace")
ASSUMED: Source = "assumed"
TERMS = ("compute", "exposed_communication", "straggler_wait", "input_wait")
_NETWORK: dict[str, Source] = {"nccl-tests log": "log", "probe": "measured"}  # a tier's source as job.py names it


def speed(*, known: bool, from_mfu: bool = False) -> Source:
    """Where one device's throughput (the compute term) came from: ``assumed`` when derived from an MFU
    (a utilization expected, not a throughput measured), ``measured`` when given, else ``fitted``."""
    if from_mfu:
        return ASSUMED
    return "measured" if known else "fitted"


def of(
    devices: int,
    workload: Workload,
    cluster: Cluster,
    *,
    speed: Source,
    unknowns: Collection[str],
    learned: Collection[str] = (),
    traced: Collection[str] = (),
) -> tuple[tuple[str, Source], ...]:
    """Each term's source for the largest of ``devices`` on ``cluster``.

    ``speed``: where one device's throughput came from; ``unknowns``: what the priors stand for
    (:func:`dpscale.predict.uncertainty.unknowns`); ``learned``: the unknowns a calibration moved
    from their priors; ``traced``: what traces set (``jitter``, ``intra`` or ``inter``).
    """
    crosses = cluster.inter is not None and devices > cluster.devices_per_node
    tier = "inter" if crosses else "intra"
    network: Source = _NETWORK.get(dict(cluster.sources).get(tier, ""), ASSUMED)
    if tier in traced:
        network = "trace"
    if "interference" in learned or (crosses and "network_share" in learned):
        network = "fitted"
    wait: Source
    if "jitter" in unknowns:
        wait = "fitted" if "jitter" in learned else ASSUMED
    else:
        wait = "trace" if "jitter" in traced else "measured"
    fed: Source = ASSUMED if workload.input_throughput is None else "measured"
    return (("compute", speed), ("exposed_communication", network), ("straggler_wait", wait), ("input_wait", fed))
