"""Where each rank's step time goes, read from the job's own profiler traces.

``torch.profiler`` writes one Chrome-trace JSON file per rank (plain or gzipped). Each is read
as a stream into its steps and the unions of its compute and communication intervals
(:mod:`~dpscale.explain.rank_trace`, :mod:`~dpscale.explain.stream`); the breakdown per rank and
step, the slowest rank, the efficiency the run implies, the calibration for ``predict`` and the
levers follow (:mod:`~dpscale.explain.breakdown`), by interval arithmetic
(:mod:`~dpscale.explain.intervals`). What a file may hold, and what the files a server is sent
at once may hold together, is bounded (:mod:`~dpscale.explain.limits`); a server explains them
in a process of its own (:mod:`~dpscale.explain.own_process`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dpscale.errors import InvalidInput
from dpscale.explain.breakdown import LEVERS, Calibration, Explanation, Lever, RankBreakdown, Spread, explain_timelines
from dpscale.explain.rank_trace import RankTimeline, read_trace, trace_files

__all__ = [
    "LEVERS",
    "Calibration",
    "Explanation",
    "Lever",
    "RankBreakdown",
    "RankTimeline",
    "Spread",
    "explain",
    "explain_timelines",
    "read_trace",
    "trace_files",
]


def explain(paths: Iterable[str | Path] | str | Path, *, field: str = "trace") -> Explanation:
    """Explain a run from its profiler traces: files (one per rank), or folders of them.

    Each file is read in turn and reduced to its timeline before the next, so memory holds one
    file's events at most (a chunk of its text and its intervals), never the whole trace. An error
    about the traces names ``field``, the input that gave them (``trace``; predict's ``from_trace``).

    >>> explain(["rank0.json", "rank1.json"]).calibration.single_device_step  # doctest: +SKIP
    """
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    try:
        return explain_timelines([read_trace(path) for path in trace_files(given)])
    except InvalidInput as exc:
        raise exc.renamed(field) if exc.field == "trace" and field != "trace" else exc from None
