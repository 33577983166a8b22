"""Time as sorted, disjoint intervals: union, difference and the length inside a window.

A timeline is a flat array of floats, ``start, end, start, end, …``: its intervals sorted,
disjoint and not touching, in whatever unit the trace uses. An interval takes 16 bytes there
(a list of tuples takes 112), so that a trace's million kernels stay a few MB. Every operation
is a merge of sorted arrays, linear in their lengths (the union sorts first): a step of a long
trace is measured without an array of microseconds, and every end point of a result is one of
its inputs', never computed.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, TypeAlias

__all__ = ["Interval", "Timeline", "difference", "lengths_in", "pairs", "timeline", "union"]

Interval = tuple[float, float]
if TYPE_CHECKING:
    Timeline: TypeAlias = array[float]  # array("d"): start, end, start, end, …
else:
    Timeline = array


def timeline(intervals: Iterable[Interval] = ()) -> Timeline:
    """A flat array of ``intervals``' ends, in their order (not merged: see :func:`union`)."""
    return array("d", chain.from_iterable(intervals))


def pairs(flat: Sequence[float]) -> Iterator[Interval]:
    """The ``(start, end)`` pairs of a flat array."""
    ends = iter(flat)
    return zip(ends, ends, strict=True)


def union(intervals: Timeline | Iterable[Interval], *, in_place: bool = False) -> Timeline:
    """The time covered by any of ``intervals`` (in any order; empty ones dropped), as a timeline.

    ``intervals`` is a flat array (as a timeline is) or pairs. With ``in_place``, a flat array is
    sorted and merged where it is, and returned: its owner no longer needs it as it was, and the
    union then takes little more memory than the array (two bytes an interval, and the result's
    ends while they are moved), rather than a copy and numpy's work arrays besides.
    """
    import numpy as np

    flat = intervals if isinstance(intervals, array) else timeline(intervals)
    if not in_place:
        flat = array("d", flat)
    # Each interval as a complex number (start + end·i): numpy sorts those by start, then end.
    both = np.frombuffer(flat, dtype=np.complex128)
    both.sort()
    empty = both.imag <= both.real
    if empty.any() or np.isnan(both.imag).any():  # empty (or NaN) intervals cover nothing
        kept = both[~empty & ~np.isnan(both.imag) & ~np.isnan(both.real)]
        del both, empty
        flat = array("d")
        flat.frombytes(kept.tobytes())
        del kept
        both = np.frombuffer(flat, dtype=np.complex128)
    else:
        del empty
    count = len(both)
    if count:
        np.maximum.accumulate(both.imag, out=both.imag)  # each end becomes the furthest end so far
        # An interval that starts past every earlier end opens a merged one; the one before it closes one.
        first = np.empty(count, dtype=bool)
        first[0] = True
        np.greater(both.real[1:], both.imag[:-1], out=first[1:])
        last = np.empty(count, dtype=bool)
        last[:-1] = first[1:]
        last[-1] = True
        starts, ends = both.real[first], both.imag[last]
        del first, last
        merged = len(starts)
        both[:merged].real = starts  # the merged intervals, in the array's first places
        both[:merged].imag = ends
        del starts, ends, both
        del flat[2 * merged :]
    return flat


def difference(kept: Sequence[float], removed: Sequence[float]) -> Timeline:
    """The time of timeline ``kept`` that timeline ``removed`` does not cover."""
    out = array("d")
    j, count = 0, len(removed)
    for start, end in pairs(kept):
        while j < count and removed[j + 1] <= start:
            j += 2
        k = j
        while k < count and removed[k] < end:
            if removed[k] > start:
                out.append(start)
                out.append(removed[k])
            start = max(start, removed[k + 1])
            if start >= end:
                break
            k += 2
        if start < end:
            out.append(start)
            out.append(end)
    return out


def lengths_in(flat: Sequence[float], windows: Sequence[Interval]) -> list[float]:
    """How much of timeline ``flat`` lies inside each window; ``windows`` sorted by start (they may overlap)."""
    out = []
    i, count = 0, len(flat)
    for low, high in windows:
        while i < count and flat[i + 1] <= low:
            i += 2
        total = 0.0
        k = i
        while k < count and flat[k] < high:
            total += min(flat[k + 1], high) - max(flat[k], low)
            k += 2
        out.append(total)
    return out
