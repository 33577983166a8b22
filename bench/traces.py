"""A profiler trace of the size users have, written quickly: steps of nested operators and collectives.

Laid out as ``torch.profiler``'s ``export_chrome_trace`` writes (an indented object per event),
so that the bench reads what a user's file holds: two ranks' worth of steps on one rank's file.
"""

from __future__ import annotations

from pathlib import Path

_OP = """  {{
    "ph": "X", "cat": "cpu_op", "name": "aten::{name}", "pid": 100, "tid": 100,
    "ts": {ts:.3f}, "dur": {dur:.3f},
    "args": {{
      "External id": {n},"Record function id": 0, "Sequence number": {n}, "Fwd thread id": 0, "Ev Idx": {n}
    }}
  }},
"""
_STEP = """  {{
    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": 100, "tid": 100,
    "ts": {ts:.3f}, "dur": {dur:.3f},
    "args": {{
      "External id": {n},"Record function id": 0, "Ev Idx": {n}
    }}
  }},
"""
_COMM = """  {{
    "ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 100, "tid": 101,
    "ts": {ts:.3f}, "dur": {dur:.3f},
    "args": {{
      "External id": {n},"Record function id": 0, "Ev Idx": {n}
    }}
  }},
"""
_HEAD = """{
  "schemaVersion": 1,
  "deviceProperties": [],
  "distributedInfo": {"backend": "gloo", "rank": 0, "world_size": 2},
  "displayTimeUnit": "ms",
  "traceEvents": [
"""
_TAIL = """  {
    "ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 0
  }
],
  "traceName": "bench"
}
"""


def write_trace(path: Path, megabytes: float) -> Path:
    """Write a trace of about ``megabytes`` MB at ``path``: steps of 200 operators and an all-reduce."""
    target = megabytes * 1e6
    written = 0
    n = 0
    step = 0
    ts = 1_000_000.0
    with path.open("w") as out:
        out.write(_HEAD)
        while written < target:
            parts = []
            start = ts
            for i in range(100):  # a parent operator and its child, then a gap
                n += 2
                names = ("linear", "addmm") if i % 2 else ("relu", "clamp_min")
                parts.append(_OP.format(name=names[0], ts=ts, dur=40.0, n=n))
                parts.append(_OP.format(name=names[1], ts=ts + 2.0, dur=30.0, n=n + 1))
                ts += 50.0
            parts.append(_COMM.format(ts=ts - 2500.0, dur=3000.0, n=n))
            ts += 600.0
            parts.append(_STEP.format(step=step, ts=start, dur=ts - start, n=n))
            step += 1
            ts += 10.0
            text = "".join(parts)
            out.write(text)
            written += len(text)
        out.write(_TAIL)
    return path
