"""The pipeline bubble: the idle time of splitting a model into p stages fed m micro-batches.

With p stages, m micro-batches per step and t the time of one micro-batch's forward and backward
pass on one stage, every schedule below keeps each stage busy for m·t per step and idle for
(p−1)·t/v while the pipeline fills and drains:

    T_step = (m + (p−1)/v)·t
    bubble = (p−1)/(v·m + p − 1)     share of the step that a stage sits idle
    overhead = (p−1)/(v·m)           idle time relative to the useful time

GPipe (Huang et al. 2019, arXiv:1811.06965) and 1F1B (PipeDream-Flush; Narayanan et al. 2021,
arXiv:2104.04473, section 2.2.1) have the same bubble (v = 1); 1F1B holds at most p micro-batches
of activations on the first stage instead of m. The interleaved schedule of Narayanan et al. 2021
(section 2.2.2) gives each device v model chunks and divides the bubble by v, for v times as many
point-to-point messages; Megatron-LM requires m to be a multiple of p for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, cast, get_args

from dpscale import _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput

__all__ = ["SCHEDULES", "Bubble", "Schedule", "Slot", "bubble", "micro_batches_for", "schedule"]

Schedule = Literal["1f1b", "gpipe", "interleaved"]
SCHEDULES: tuple[str, ...] = get_args(Schedule)
BACKWARD_OVER_FORWARD = 2  # a backward pass costs about twice a forward one (two matmuls per one)


def _schedule(value: Any) -> Schedule:
    text = value.strip().lower() if isinstance(value, str) else value
    if text not in SCHEDULES:
        raise InvalidInput("schedule", value, N_("one of %(choices)s"), params={"choices": ", ".join(SCHEDULES)})
    return cast(Schedule, text)


@dataclass(frozen=True, slots=True)
class Bubble(ShowsAsTable):
    """A pipeline of ``stages`` stages fed ``micro_batches`` micro-batches per step."""

    stages: int
    micro_batches: int
    schedule: Schedule = "1f1b"
    chunks: int = 1
    micro_batch_time: float | None = None

    def __post_init__(self) -> None:
        _validate.whole("stages", self.stages)
        _validate.whole("micro_batches", self.micro_batches)
        _validate.whole("chunks", self.chunks)
        _schedule(self.schedule)
        if self.schedule != "interleaved" and self.chunks != 1:
            raise InvalidInput("chunks", self.chunks, "1 unless the schedule is interleaved")
        if self.micro_batch_time is not None:
            _validate.positive("micro_batch_time", self.micro_batch_time)

    @property
    def drawable(self) -> bool:
        """Whether :func:`schedule` draws it: GPipe or 1F1B, at most MAX_DRAWN blocks."""
        return self.schedule != "interleaved" and self.stages * self.micro_batches <= MAX_DRAWN

    @property
    def _exact(self) -> Fraction:
        p, m, v = self.stages, self.micro_batches, self.chunks
        return Fraction(p - 1, v * m + p - 1)

    @property
    def fraction(self) -> float:
        """(p−1)/(v·m + p − 1): the share of each step a stage spends idle."""
        return float(self._exact)

    @property
    def overhead(self) -> float:
        """(p−1)/(v·m): idle time as a share of the useful time (Narayanan et al.'s bubble fraction)."""
        return float(Fraction(self.stages - 1, self.chunks * self.micro_batches))

    @property
    def efficiency(self) -> float:
        """1 − bubble: the share of ideal pipeline throughput that remains."""
        return float(1 - self._exact)

    @property
    def step_time(self) -> float | None:
        """(m + (p−1)/v)·t, when the time t of one micro-batch's forward and backward is known."""
        if self.micro_batch_time is None:
            return None
        return (self.micro_batches + (self.stages - 1) / self.chunks) * self.micro_batch_time

    @property
    def idle_time(self) -> float | None:
        """(p−1)·t/v of each step spent idle."""
        if self.micro_batch_time is None:
            return None
        return (self.stages - 1) / self.chunks * self.micro_batch_time

    @property
    def activations_in_flight(self) -> int | None:
        """Micro-batches whose activations the first stage holds at peak (None: see Narayanan et al.)."""
        if self.schedule == "gpipe":
            return self.micro_batches
        if self.schedule == "1f1b":
            return min(self.stages, self.micro_batches)
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "stages": self.stages,
            "micro_batches": self.micro_batches,
            "schedule": self.schedule,
            "chunks": self.chunks,
            "bubble_fraction": self.fraction,
            "bubble_overhead": self.overhead,
            "pipeline_efficiency": self.efficiency,
            "micro_batch_time": self.micro_batch_time,
            "step_time": self.step_time,
            "idle_time": self.idle_time,
            "activations_in_flight": self.activations_in_flight,
        }


def bubble(
    stages: int,
    micro_batches: int,
    *,
    schedule: Schedule | str = "1f1b",
    chunks: int = 1,
    micro_batch_time: float | None = None,
) -> Bubble:
    """The bubble of ``stages`` stages and ``micro_batches`` micro-batches under ``schedule``.

    >>> bubble(4, 8).fraction
    0.2727272727272727
    """
    kind = _schedule(schedule)
    p = _validate.device_count("stages", stages)
    m = _validate.count("micro_batches", micro_batches)
    v = _validate.count("chunks", chunks)
    if kind == "interleaved" and m % p:
        raise InvalidInput(
            "micro_batches",
            micro_batches,
            N_("a multiple of the %(stages)s stages for the interleaved schedule"),
            params={"stages": p},
        )
    t = None if micro_batch_time is None else _validate.positive("micro_batch_time", micro_batch_time)
    result = Bubble(p, m, kind, v, t)
    if result.step_time is not None:
        _validate.finite_result("micro_batch_time", micro_batch_time, result.step_time)
    return result


def micro_batches_for(stages: int, max_bubble: float, *, schedule: Schedule | str = "1f1b", chunks: int = 1) -> Bubble:
    """The fewest micro-batches that keep the bubble at or under ``max_bubble``.

    From (p−1)/(v·m + p − 1) ≤ f: m = ⌈(p−1)(1−f)/(f·v)⌉, rounded up to a multiple of p for the
    interleaved schedule.
    """
    kind = _schedule(schedule)
    p = _validate.device_count("stages", stages)
    v = _validate.count("chunks", chunks)
    f = _validate.fraction("max_bubble", max_bubble)
    if f == 1:
        m = 1
    else:
        exact = Fraction(p - 1) * (1 - Fraction(repr(f))) / (Fraction(repr(f)) * v)
        m = max(1, math.ceil(exact))
    if kind == "interleaved":
        m = -(-m // p) * p
    if m > _validate.MAX_DEVICES:
        raise InvalidInput("max_bubble", max_bubble, N_("a bubble that a billion micro-batches (10⁹) or fewer reach"))
    return bubble(p, m, schedule=kind, chunks=v)


@dataclass(frozen=True, slots=True)
class Slot:
    """One block of work in a schedule: a stage runs a micro-batch's forward or backward pass."""

    stage: int
    micro_batch: int
    phase: Literal["forward", "backward"]
    start: int
    end: int


MAX_DRAWN = 64  # stages × micro-batches beyond which a picture stops being readable


def schedule(stages: int, micro_batches: int, kind: Schedule | str = "1f1b") -> tuple[Slot, ...]:
    """The timeline of one step, in units of a forward pass (a backward takes two).

    Each stage runs its own order of work (GPipe: all forwards then all backwards; 1F1B: p−s−1
    warm-up forwards, then one forward one backward); a block starts once the stage is free and
    its input is there (the previous stage's forward, the next stage's backward). Only GPipe and
    1F1B are drawn; the interleaved schedule's order is Megatron-LM's and is not reproduced here.
    """
    sched = _schedule(kind)
    if sched == "interleaved":
        raise InvalidInput("schedule", kind, "gpipe or 1f1b for a picture of the schedule")
    p = _validate.whole("stages", stages)
    m = _validate.whole("micro_batches", micro_batches)
    if p * m > MAX_DRAWN:
        raise InvalidInput(
            "stages",
            f"{p} stages × {m} micro-batches",
            N_("at most %(most)s blocks to draw"),
            params={"most": MAX_DRAWN},
        )
    orders: list[list[tuple[str, int]]] = []
    for s in range(p):
        if sched == "gpipe":
            order = [("forward", i) for i in range(m)] + [("backward", i) for i in range(m)]
        else:
            warm = min(p - s - 1, m)
            order = [("forward", i) for i in range(warm)]
            fwd, bwd = warm, 0
            while bwd < m:
                if fwd < m:
                    order.append(("forward", fwd))
                    fwd += 1
                order.append(("backward", bwd))
                bwd += 1
        orders.append(order)
    done: dict[tuple[str, int, int], int] = {}
    free = [0] * p
    position = [0] * p
    slots: list[Slot] = []
    while any(position[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if position[s] == len(orders[s]):
                continue
            phase, i = orders[s][position[s]]
            if phase == "forward":
                needs = [("forward", s - 1, i)] if s > 0 else []
            else:
                needs = [("forward", s, i)] + ([("backward", s + 1, i)] if s < p - 1 else [])
            if not all(n in done for n in needs):
                continue
            start = max([free[s], *(done[n] for n in needs)])
            end = start + (1 if phase == "forward" else BACKWARD_OVER_FORWARD)
            done[(phase, s, i)] = end
            free[s] = end
            position[s] += 1
            slots.append(Slot(s, i, phase, start, end))  # type: ignore[arg-type]
            progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("pipeline schedule deadlocked")
    return tuple(sorted(slots, key=lambda x: (x.stage, x.start)))
