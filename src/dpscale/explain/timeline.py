"""One step of each rank as a timeline draws it: when the rank computed, when its communication was exposed.

The same split as :mod:`dpscale.explain.breakdown`, kept as intervals rather than summed: compute
is C ∩ step, exposed communication (M − C) ∩ step, and the rest of the step is other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpscale.errors import N_, InvalidInput
from dpscale.explain.intervals import Timeline, difference, pairs
from dpscale.explain.reading import RankTimeline

__all__ = ["StepDrawing", "step_drawing"]

_US = 1e-6


@dataclass(frozen=True, slots=True)
class StepDrawing:
    """One rank's step: its number and length, and from its start the compute and exposed intervals (seconds)."""

    step: int
    length: float
    compute: tuple[tuple[float, float], ...]
    exposed: tuple[tuple[float, float], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "length": self.length, "compute": self.compute, "exposed": self.exposed}


def step_drawing(timeline: RankTimeline, index: int = -1) -> StepDrawing:
    """The ``index``-th profiler step of ``timeline`` (the last by default), as a timeline draws it."""
    if not -len(timeline.steps) <= index < len(timeline.steps):
        raise InvalidInput("step", index, N_("a step the trace holds"))
    number, low, high = timeline.steps[index]
    exposed = difference(timeline.communication, timeline.compute)
    return StepDrawing(number, (high - low) * _US, _within(timeline.compute, low, high), _within(exposed, low, high))


def _within(timeline: Timeline, low: float, high: float) -> tuple[tuple[float, float], ...]:
    return tuple(
        ((max(start, low) - low) * _US, (min(end, high) - low) * _US)
        for start, end in pairs(timeline)
        if end > low and start < high
    )
