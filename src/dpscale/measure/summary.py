"""The statistics of measured runs: each step as the slowest rank took it, throughputs, intervals.

Shared by ``dpscale measure`` (over its repeats) and :class:`dpscale.Meter` (over one loop). No
torch, and no SciPy: Student's t comes from a table.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from dpscale.records import StepTime

__all__ = ["Repeats", "efficiency", "rate", "repeats", "slowest_steps", "step_time", "t_interval"]

# Student's t at 97.5 % for 1..30 degrees of freedom, then the normal value: enough for the
# handful of repeats a measurement has, without importing SciPy on this path.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042]  # fmt: skip


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95 % confidence interval of the mean (Student's t); NaN ends from a single value."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan, math.nan
    dof = len(values) - 1
    t = _T975[dof - 1] if dof <= len(_T975) else 1.96
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def step_time(step_times: Sequence[float]) -> StepTime:
    """Median, mean, 10th and 90th percentiles and coefficient of variation of step times (seconds)."""
    ordered = sorted(step_times)
    mean = statistics.fmean(ordered)
    sd = statistics.stdev(ordered) if len(ordered) > 1 else 0.0
    return StepTime(
        median=statistics.median(ordered),
        mean=mean,
        p10=ordered[int(0.1 * (len(ordered) - 1))],
        p90=ordered[int(0.9 * (len(ordered) - 1))],
        cv=sd / mean if mean > 0 else 0.0,
    )


def slowest_steps(rank_times: Sequence[Sequence[float]]) -> list[float]:
    """Each step's time as the slowest rank took it, over the steps every rank timed.

    Every step ends with the all-reduce, so the ranks move together and the slowest sets the pace.
    """
    steps = min(len(times) for times in rank_times)
    return [max(times[i] for times in rank_times) for i in range(steps)]


def rate(samples_per_step: float, step_times: Sequence[float]) -> float:
    """Samples per second over ``step_times``; 0 where there is no time to divide by."""
    total = sum(step_times)
    return samples_per_step * len(step_times) / total if total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Repeats:
    """One size measured ``repeats`` times: the cluster's throughput with its 95 % interval, and more."""

    devices: int
    throughput: float
    low: float  # NaN from one run; never below 0
    high: float
    per_rank: tuple[float, ...]  # each rank's throughput, the mean over the runs
    step_time: StepTime  # over every step of every run, each as the slowest rank took it


def repeats(runs: Sequence[Sequence[Sequence[float]]], batch: int) -> Repeats:
    """The runs of one size, each given as every rank's step times, ``batch`` samples per rank per step."""
    world = len(runs[0])
    throughputs = []
    steps: list[float] = []
    for rank_times in runs:
        slowest = slowest_steps(rank_times)
        steps += slowest
        throughputs.append(rate(world * batch, slowest))
    mean, low, high = t_interval(throughputs)
    low = max(low, 0.0) if math.isfinite(low) else low  # a throughput is never negative
    per_rank = tuple(sum(rate(batch, run[r]) for run in runs) / len(runs) for r in range(world))
    return Repeats(world, mean, low, high, per_rank, step_time(steps))


def efficiency(here: Repeats, single: Repeats) -> tuple[float, tuple[float, float] | None]:
    """E against the 1-rank run, and its interval where both intervals are known (from the ends of each)."""
    n = here.devices
    e = here.throughput / (n * single.throughput)
    ends = (single.low, single.high, here.low, here.high)
    if not all(map(math.isfinite, ends)) or single.low <= 0:
        return e, None
    return e, (here.low / (n * single.high), here.high / (n * single.low))
