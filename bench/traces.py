"""A profiler trace of the size users have, written quickly: steps of nested operators and collectives.

Laid out as ``torch.profiler``'s ``export_chrome_trace`` writes (an indented object per event),
so that the bench reads what a user's file holds: two ranks' worth of steps on one rank's file.
And the traces an attacker sends (issue 23): huge names, more kernels than kept, gzip bombs.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
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


# -- hostile traces, as an attacker sends them (issue 23): each bounded by a limit of dpscale.explain.limits --

_ROWS = 100_000  # events formatted at a time


def _gzip_events(path: Path, events: Iterator[str], *, head: str = "", level: int = 1) -> Path:
    """A gzipped trace of one profiler step over everything, then ``events``, written a block at a time."""
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=level) as out:
        out.write((head or "{") + '"traceEvents": [\n')
        out.write('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, ')
        out.write('"dur": 1e12}')
        block: list[str] = []
        for event in events:
            block.append(event)
            if len(block) == _ROWS:
                out.write(",\n" + ",\n".join(block))
                block.clear()
        if block:
            out.write(",\n" + ",\n".join(block))
        out.write("\n]}")
    return path


def huge_names(path: Path, count: int = 10_000, size: int = 100_000) -> Path:
    """``count`` operators, each with a name of its own of ``size`` characters: 1 GB of JSON in 1.3 MB of gzip."""
    filler = "a" * size
    return _gzip_events(
        path,
        (
            f'{{"ph":"X","cat":"cpu_op","name":"{filler}{i}","pid":1,"tid":1,"ts":{i + 1},"dur":1}}'
            for i in range(count)
        ),
        level=6,
    )


def many_kernels(path: Path, count: int = 20_000_000) -> Path:
    """``count`` disjoint kernels, the shortest events that are kept: 20 M are 1 GB of JSON, 55 MB gzipped."""
    return _gzip_events(path, (f'{{"ph":"X","cat":"kernel","name":"k","ts":{2 * i},"dur":1}}' for i in range(count)))


def reversed_operators(path: Path, count: int) -> Path:
    """``count`` disjoint operators on the step's thread, last first: read twice, the second time sorted."""
    return _gzip_events(
        path,
        (
            f'{{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":{2 * (count - i)},"dur":1}}'
            for i in range(count)
        ),
    )


def gzip_bomb(path: Path, mib: int = 1024) -> Path:
    """A trace of ``mib`` MiB of white space between its brackets: gzip takes it to about a thousandth."""
    block = b" " * (1 << 20)
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(b'{"traceEvents": [')
        for _ in range(mib):
            out.write(block)
        out.write(b"]}")
    return path


def many_steps(path: Path, count: int, rank: int) -> Path:
    """``count`` profiler steps of one operator each, on rank ``rank`` (one of two)."""
    head = f'{{"distributedInfo": {{"rank": {rank}, "world_size": 2}}, '
    return _gzip_events(
        path,
        (
            f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{i + 2}","pid":1,"tid":1,"ts":{10 * i + 100},'
            f'"dur":9}},\n{{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":{10 * i + 101},"dur":5}}'
            for i in range(count)
        ),
        head=head,
    )
