"""One step of each rank as a timeline draws it: when the rank computed, when its communication was exposed.

The same split as :mod:`dpscale.explain.breakdown`, kept as intervals rather than summed: compute
is C ∩ step, exposed communication (M − C) ∩ step, and the rest of the step is other. A step of
more intervals of a kind than it may draw (:data:`MAX_DRAWN`, fewer where many ranks are drawn:
:func:`drawn_most`) is drawn at that resolution: intervals closer than the step's length over
that number are drawn as one, as a screen would show them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpscale.errors import N_, InvalidInput
from dpscale.explain.intervals import Timeline, difference
from dpscale.explain.rank_trace import RankTimeline

__all__ = ["MAX_DRAWN", "MAX_DRAWN_IN_ALL", "StepDrawing", "drawn_most", "step_drawing"]

MAX_DRAWN = 2000  # intervals of a kind drawn for a rank's step: its timeline is some 1000 pixels wide
MAX_DRAWN_IN_ALL = 100_000  # intervals drawn for all the ranks at once: some MB of a page, whatever the run
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


def drawn_most(ranks: int) -> int:
    """The intervals of a kind drawn for each of ``ranks`` ranks drawn together."""
    return max(16, min(MAX_DRAWN, MAX_DRAWN_IN_ALL // max(1, 2 * ranks)))


def step_drawing(timeline: RankTimeline, index: int = -1, *, most: int = MAX_DRAWN) -> StepDrawing:
    """The ``index``-th profiler step of ``timeline`` (the last by default), as a timeline draws it, with at most
    ``most`` (and one) intervals of each kind."""
    if not -len(timeline.steps) <= index < len(timeline.steps):
        raise InvalidInput("step", index, N_("a step the trace holds"))
    number, low, high = timeline.steps[index]
    exposed = difference(timeline.communication, timeline.compute)
    return StepDrawing(
        number, (high - low) * _US, _within(timeline.compute, low, high, most), _within(exposed, low, high, most)
    )


def _within(timeline: Timeline, low: float, high: float, most: int) -> tuple[tuple[float, float], ...]:
    import numpy as np

    both = np.frombuffer(timeline, dtype=np.float64).reshape(-1, 2)
    first = int(np.searchsorted(both[:, 1], low, side="right"))  # the first that ends past the step's start
    past = int(np.searchsorted(both[:, 0], high, side="left"))  # the first that starts at or past its end
    if past - first <= most:
        return tuple(
            ((max(start, low) - low) * _US, (min(end, high) - low) * _US) for start, end in both[first:past].tolist()
        )
    starts = (np.maximum(both[first:past, 0], low) - low) * _US
    ends = (np.minimum(both[first:past, 1], high) - low) * _US
    apart = starts[1:] - ends[:-1] >= (high - low) * _US / most  # a gap a screen shows
    opens = np.concatenate(([True], apart))
    closes = np.concatenate((apart, [True]))
    return tuple(zip(starts[opens].tolist(), ends[closes].tolist(), strict=True))
