"""A prediction calibrated on a real run's profiler traces (``dpscale predict --from-trace DIR``).

:func:`dpscale.explain.explain` measures, on the run's own ranks, the step one device would take
alone (compute and host time, T_c), the time collectives were in flight (T_comm at the run's
size) and how much the step time varied across ranks and steps. Those replace the prediction's
assumptions: one device's throughput is batch·k / T_c, the link the run's collectives crossed is
given the share of its bandwidth (from 1 % to all of it) that makes the model's T_comm at the run's
size the measured one, its latency kept; the other sizes then follow from the model.

The variation is split in two. Where the same rank was the slowest at every step, its excess over
the ranks' mean is a fixed imbalance f (more work, a slower device): one rank slow by f·T_c, at any
device count, which does not grow as more ranks are added; what varies within each rank from step
to step is the random variation cv, which grows as the expected maximum of more draws. Where the
slowest rank changes from step to step, the whole variation over ranks and steps is random.

Everything taken is said (:class:`Traced`, the prediction's ``assumptions.from_trace``), and a
measured value past what the model takes (a variation above 50 %, a link faster than its whole
bandwidth) is said as a warning with the value used, never clipped silently.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message

if TYPE_CHECKING:
    from dpscale.explain import Calibration
    from dpscale.explain.breakdown import RankBreakdown
    from dpscale.predict.job import Cluster, Workload

__all__ = ["Traced", "calibrated", "split"]

MAX_JITTER = 0.5  # the bound predict's --jitter holds a variation to
TAKEN_JITTER = MAX_JITTER * 0.999  # what a variation at or past it is taken as (the cluster wants it below 1)
LOWEST_SHARE = 0.01  # the least share of a link's bandwidth predict takes (its --intra-efficiency bound)
SAME_RANK = 1e-9  # the slowest rank waited at most this share of a step at any step: slowest at every step


@dataclass(frozen=True, slots=True)
class Traced:
    """What the traces changed: the run's size, and each value taken from them (None: kept).

    ``jitter``: the random variation taken; ``measured_jitter``: the traces' whole variation over
    ranks and steps; ``imbalance``: the fixed excess of ``slowest_rank`` (None: no rank was the
    slowest at every step); ``link_efficiency`` of ``tier`` and ``measured_communication``, the time
    its collectives were in flight; ``warnings``: what was measured past what the model takes.
    """

    devices: int
    per_device_throughput: float | None
    jitter: float
    link_efficiency: float | None
    tier: str | None  # intra or inter: the link whose share of bandwidth was calibrated
    measured_jitter: float | None = None
    imbalance: float | None = None
    slowest_rank: int | None = None
    measured_communication: float | None = None
    warnings: tuple[Message, ...] = ()

    @property
    def taken(self) -> tuple[str, ...]:
        """What the traces set: ``speed``, ``jitter`` and the tier whose link they calibrated."""
        out: tuple[str, ...] = ("speed",) if self.per_device_throughput is not None else ()
        out += ("jitter",) if self.measured_jitter is not None else ()
        return out + ((self.tier,) if self.tier else ())

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {name: getattr(self, name) for name in self.__slots__ if name != "warnings"}
        out["warnings"] = [str(warning) for warning in self.warnings]
        return out


def split(measured: Calibration, ranks: Sequence[RankBreakdown]) -> tuple[float, float | None, int | None]:
    """The random variation, and the fixed imbalance of the rank that was the slowest at every step (if one was).

    The variance over ranks and steps (``step_time_cv``'s) is the variance between the ranks' means
    plus the mean variance within each rank (every rank has the same steps).
    """
    cv = measured.step_time_cv
    if len(ranks) < 2:
        return cv, None, None
    works = [r.compute.mean + r.other.mean for r in ranks]
    mean = statistics.fmean(works)
    slowest = max(range(len(ranks)), key=lambda i: (works[i], -i))
    if mean <= 0 or ranks[slowest].wait.high > SAME_RANK * mean:
        return cv, None, None
    within = max(0.0, (cv * mean) ** 2 - statistics.pvariance(works))
    return within**0.5 / mean, (works[slowest] - mean) / mean, ranks[slowest].rank


def calibrated(
    measured: Calibration,
    workload: Workload,
    cluster: Cluster,
    *,
    speed_given: bool,
    jitter_given: bool,
    ranks: Sequence[RankBreakdown] = (),
    variation: tuple[float, float | None, int | None] | None = None,
) -> tuple[Workload, Cluster, Traced]:
    """``workload`` and ``cluster`` with what the traces measured in place of the assumptions not given.

    ``ranks``: each rank's breakdown (:class:`dpscale.explain.Explanation`'s), to tell a rank slow at
    every step from a random variation; without them the whole variation is taken as random.
    ``variation``: that split (:func:`split`) already made, as a link from /explain carries it.
    """
    import numpy as np

    from dpscale.predict.model import Imbalanced, time_terms  # the point terms alone: no interval to bisect on

    if measured.single_device_step <= 0:
        raise InvalidInput("from_trace", measured.devices, N_("traces in which the ranks compute"))
    warnings: list[Message] = []
    speed = None
    if not speed_given:
        speed = workload.batch * workload.accumulation / measured.single_device_step
        workload = replace(workload, per_device_throughput=speed)
    measured_jitter, imbalance, slowest = None, None, None
    jitter = cluster.jitter
    if not jitter_given:
        random, imbalance, slowest = variation if variation is not None else split(measured, ranks)
        measured_jitter = measured.step_time_cv
        jitter = min(random, TAKEN_JITTER)
        if random > jitter:
            warnings.append(
                Message.of(
                    "The traces' step-time variation, %(measured)s %%, is past what predict takes (%(most)s %%): "
                    "%(used)s %% is used.",
                    measured=round(100 * random, 2),
                    most=round(100 * MAX_JITTER, 2),
                    used=round(100 * jitter, 2),
                )
            )
        fixed = {f.name: getattr(cluster, f.name) for f in fields(cluster) if f.name not in ("jitter", "imbalance")}
        cluster = Imbalanced(**fixed, jitter=jitter, imbalance=imbalance or 0.0)
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
        if high > 1.0 - 1e-9 and communication(1.0) > measured.communication_time * 1.01:
            warnings.append(_past_link(measured.communication_time, communication(1.0), "all"))
        elif low < LOWEST_SHARE + 1e-9 and communication(LOWEST_SHARE) < measured.communication_time * 0.99:
            warnings.append(_past_link(measured.communication_time, communication(LOWEST_SHARE), "least"))
        cluster = with_share(efficiency)
    traced = Traced(
        measured.devices,
        speed,
        jitter,
        efficiency,
        tier,
        measured_jitter,
        imbalance,
        slowest,
        measured.communication_time if tier else None,
        tuple(warnings),
    )
    return workload, cluster, traced


def _past_link(measured: float, model: float, bound: str) -> Message:
    """A measured communication time the link cannot give at any share of its bandwidth."""
    if bound == "all":
        return Message.of(
            "The traces' collectives took %(measured)s ms, less than the link allows at its whole bandwidth "
            "(%(model)s ms): the link is taken at 100 %% of it; check its bandwidth.",
            measured=round(1e3 * measured, 3),
            model=round(1e3 * model, 3),
        )
    return Message.of(
        "The traces' collectives took %(measured)s ms, more than the link gives at 1 %% of its bandwidth "
        "(%(model)s ms): the link is taken at 1 %%; check its bandwidth.",
        measured=round(1e3 * measured, 3),
        model=round(1e3 * model, 3),
    )
