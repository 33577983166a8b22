"""Time as sorted, disjoint intervals: union, difference and the length inside a window.

A timeline is a list of ``(start, end)`` pairs, sorted, disjoint and not touching, in whatever
unit the trace uses. Every operation is a merge of sorted lists, linear in their lengths: a
step of a long trace is measured without an array of microseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["Interval", "Timeline", "difference", "lengths_in", "union"]

Interval = tuple[float, float]
Timeline = list[Interval]


def union(intervals: Iterable[Interval]) -> Timeline:
    """The time covered by any of ``intervals`` (in any order; empty ones dropped), as a timeline."""
    merged: Timeline = []
    for start, end in sorted(intervals):
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def difference(kept: Sequence[Interval], removed: Sequence[Interval]) -> Timeline:
    """The time of timeline ``kept`` that timeline ``removed`` does not cover."""
    out: Timeline = []
    j, count = 0, len(removed)
    for start, end in kept:
        while j < count and removed[j][1] <= start:
            j += 1
        k = j
        while k < count and removed[k][0] < end:
            if removed[k][0] > start:
                out.append((start, removed[k][0]))
            start = max(start, removed[k][1])
            if start >= end:
                break
            k += 1
        if start < end:
            out.append((start, end))
    return out


def lengths_in(timeline: Sequence[Interval], windows: Sequence[Interval]) -> list[float]:
    """How much of ``timeline`` lies inside each window; ``windows`` sorted by start (they may overlap)."""
    out = []
    i, count = 0, len(timeline)
    for low, high in windows:
        while i < count and timeline[i][1] <= low:
            i += 1
        total = 0.0
        k = i
        while k < count and timeline[k][0] < high:
            total += min(timeline[k][1], high) - max(timeline[k][0], low)
            k += 1
        out.append(total)
    return out
