"""Measurement records: one JSON object per line, readable by ``dpscale fit``.

No torch here: the launcher, fit and the tests read records without it.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["append", "summarize", "t_interval"]

# Student's t at 97.5 % for 1..30 degrees of freedom, then the normal value: enough for the
# handful of repeats a measurement has, without importing SciPy on this path.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042]  # fmt: skip


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and 95 % confidence interval of the mean (Student's t)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan, math.nan
    dof = len(values) - 1
    t = _T975[dof - 1] if dof <= len(_T975) else 1.96
    half = t * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def summarize(step_times: Sequence[float]) -> dict[str, float]:
    """Median, mean, spread and coefficient of variation of step times (seconds)."""
    ordered = sorted(step_times)
    mean = statistics.fmean(ordered)
    sd = statistics.stdev(ordered) if len(ordered) > 1 else 0.0
    return {
        "median": statistics.median(ordered),
        "mean": mean,
        "p10": ordered[int(0.1 * (len(ordered) - 1))],
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "cv": sd / mean if mean > 0 else 0.0,
    }


def append(path: str | Path, record: dict[str, Any]) -> None:
    """Add ``record`` as one line of ``path`` (created with its folder if need be)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, allow_nan=False) + "\n")
