"""One rank's profiler trace reduced, in one pass, to its steps and the time it computed and communicated.

What counts as what (the names ``torch.profiler`` writes; Chrome-trace ``X`` events, in µs):

- **steps**: ``ProfilerStep#N``, one per ``prof.step()``.
- **on a GPU** (the trace has kernels: ``cat`` kernel, gpu_memcpy, gpu_memset): compute is the
  union of the kernels that are not NCCL's; communication the union of NCCL kernels.
- **on a CPU** (no kernels): compute is the time the step's thread spends inside an operator
  (``cat`` cpu_op), where the innermost event is that operator and no collective encloses it.
  An annotation's own time (``DistributedDataParallel.forward``'s Python, FSDP's
  ``all_gather`` region while it waits) is not compute. Communication is the union of the
  collectives on any thread: ``gloo:*``, ``nccl:*``, ``c10d::*``, ``record_param_comms`` and the
  functional collectives (``_c10d_functional::*``).

A collective's size comes from its ``args`` (``In msg nelems`` and ``dtype``) where the profiler
wrote them (NCCL kernels and ``record_param_comms`` in recent PyTorch); gloo's events carry none.
"""

from __future__ import annotations

import gzip
import io
import math
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.explain.intervals import Interval, Timeline, union
from dpscale.explain.stream import Malformed, events
from dpscale.messages import Message

__all__ = ["NO_STEPS", "TRACE", "RankTimeline", "read_trace", "trace_files"]

TRACE = N_("a PyTorch profiler trace (Chrome trace JSON, plain or gzipped): %(reason)s")
NO_STEPS = N_("a trace with profiler steps (ProfilerStep#N: a torch.profiler schedule and prof.step() each step)")
_OP, _ANNOTATION, _COLLECTIVE, _KERNEL, _NCCL, _STEP = range(6)  # the first three are a thread's
_DEVICE = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"})
_OPERATOR = frozenset({"cpu_op", "operator"})
_COLLECTIVES = (
    "gloo:",
    "nccl",
    "c10d::",
    "_c10d_functional::",
    "c10d_functional::",
    "record_param_comms",
    "ucc:",
    "mpi:",
)
_ITEM_BYTES = {"float": 4, "float32": 4, "half": 2, "float16": 2, "bfloat16": 2, "double": 8, "float64": 8,
               "int": 4, "int32": 4, "long": 8, "int64": 8, "byte": 1, "char": 1, "uint8": 1, "int8": 1,
               "bool": 1, "short": 2, "int16": 2}  # fmt: skip
_LONGEST = 1e15  # µs in an event: 30 years; a longer one is not a measurement


@dataclass(frozen=True, slots=True)
class RankTimeline:
    """One rank's trace: its steps and the union of its compute and of its communication, in µs.

    ``steps`` are ``(number, start, end)`` by start; ``sizes`` the ``(start, bytes)`` of each
    collective whose size the trace gives; ``skipped`` counts events that could not be read (a
    time that is not a number, say) and were left out; ``device`` is True for a GPU's kernels.
    """

    file: str
    rank: int | None
    world_size: int | None
    steps: tuple[tuple[int, float, float], ...]
    compute: Timeline
    communication: Timeline
    sizes: tuple[tuple[float, float], ...]
    device: bool
    skipped: int


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """The trace files ``paths`` name: each file, and each folder's ``*.json`` and ``*.json.gz`` files by name."""
    found: list[Path] = []
    for given in paths:
        if not isinstance(given, str | Path):
            raise InvalidInput("trace", _files.shown(given), N_("a trace file or a folder of them"))
        path = Path(given)
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith((".json", ".json.gz")))
            if not inside:
                raise InvalidInput("trace", str(given), N_("a folder holding trace files (*.json or *.json.gz)"))
            found.extend(inside)
        else:
            found.append(path)
        if len(found) > _files.MAX_TRACE_FILES:
            raise InvalidInput(
                "trace", str(given), N_("at most %(most)s trace files"), params={"most": _files.MAX_TRACE_FILES}
            )
    if not found:
        raise InvalidInput("trace", "", N_("one or more trace files, or a folder of them"))
    return found


def read_trace(path: str | Path, *, name: str | None = None) -> RankTimeline:
    """Read the trace at ``path`` (plain or gzipped JSON) into a :class:`RankTimeline`.

    ``name`` is what results and errors call the file (an upload's own name, where ``path`` is
    the server's copy of it); the path by default.

    ``torch.profiler`` writes each thread's operators in order of start, so one pass finds what
    each thread computes as it reads; a CPU trace whose step thread is out of order is read a
    second time, keeping its events to sort them (a GPU trace's compute is its kernels: the order
    of its threads' events does not matter). Raises InvalidInput naming the file when it cannot be
    opened, is not a trace, is cut short or has no profiler step.
    """
    try:
        return _read_file(path, in_order=True, shown=name)
    except _OutOfOrder:
        return _read_file(path, in_order=False, shown=name)


def _read_file(path: str | Path, *, in_order: bool, shown: str | None = None) -> RankTimeline:
    name = str(path) if shown is None else shown
    raw = _files.open_binary(
        path,
        field="trace",
        most=_files.MAX_TRACE_BYTES,
        missing=N_("an existing trace file or folder"),
        unreadable=N_("a readable trace file (%(reason)s)"),
    )
    with raw:
        try:
            with _text(raw) as text:
                return _read(name, text, in_order)
        except Malformed as exc:
            raise InvalidInput("trace", name, TRACE, params={"reason": exc.reason}) from None
        except (gzip.BadGzipFile, EOFError, zlib.error):
            reason = Message.of("a gzip file that is damaged or cut short")
            raise InvalidInput("trace", name, TRACE, params={"reason": reason}) from None
        except UnicodeDecodeError as exc:
            reason = Message.of("UTF-8 text (a byte that is not UTF-8 near byte %(at)s)", at=exc.start)
            raise InvalidInput("trace", name, TRACE, params={"reason": reason}) from None
        except OSError as exc:
            reason = Message.of("a readable file (%(reason)s)", reason=exc.strerror or type(exc).__name__)
            raise InvalidInput("trace", name, TRACE, params={"reason": reason}) from None


def _text(raw: BinaryIO) -> io.TextIOWrapper:
    if isinstance(raw, io.BufferedReader) and raw.peek(2)[:2] == b"\x1f\x8b":  # gzip's magic number
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw, mode="rb"), encoding="utf-8")
    return io.TextIOWrapper(raw, encoding="utf-8")


class _OutOfOrder(Exception):
    """A thread's events are not in order of start: read the file again, sorting them."""


class _Sweep:
    """The time one thread spends with an operator innermost and no collective around it.

    Events arrive in order of start (a parent before the children it holds), so a stack of the
    open events tells, between two boundaries, which one is innermost. An operator inside an
    operator, or anything inside a collective, changes nothing and is not kept. A child that
    outlasts its parent (rounding) is cut at the parent's end.
    """

    __slots__ = ("busy", "disordered", "last", "now", "stack")

    def __init__(self) -> None:
        self.busy: Timeline = []
        self.stack: list[tuple[float, int]] = []
        self.now = 0.0
        self.last = (-math.inf, 0.0)
        self.disordered = False  # an event came before one it follows: the sweep stops, its result is void

    def push(self, start: float, end: float, kind: int) -> None:
        if self.disordered:
            return
        if (start, -end) < self.last:
            self.disordered = True
            return
        self.last = (start, -end)
        stack = self.stack
        while stack and stack[-1][0] <= start:
            self._close()
        if stack:
            top_end, top_kind = stack[-1]
            if top_kind == _COLLECTIVE or (top_kind == _OP and kind == _OP):
                return
            if top_kind == _OP:
                self._busy(self.now, start)
            end = min(end, top_end)
        self.now = start
        stack.append((end, kind))

    def _close(self) -> None:
        closed, kind = self.stack.pop()
        if kind == _OP:
            self._busy(self.now, closed)
        self.now = closed

    def _busy(self, start: float, end: float) -> None:
        if end > start:
            if self.busy and self.busy[-1][1] >= start:
                self.busy[-1] = (self.busy[-1][0], end)
            else:
                self.busy.append((start, end))

    def done(self) -> Timeline:
        while self.stack:
            self._close()
        return self.busy


def _read(name: str, text: io.TextIOWrapper, in_order: bool) -> RankTimeline:
    top: dict[str, Any] = {}

    def keep(key: str, value: Any) -> None:
        if key in ("distributedInfo", "traceEvents"):
            top[key] = value

    sweeps: dict[Any, _Sweep] = {}
    kept: dict[Any, list[tuple[float, float, int]]] = {}  # when out of order: each thread's events, to sort
    steps: dict[int, tuple[float, float, Any]] = {}
    kernels: list[Interval] = []
    nccl: list[Interval] = []
    collectives: list[Interval] = []
    host_sizes: list[tuple[float, float]] = []
    device_sizes: list[tuple[float, float]] = []
    kinds: dict[tuple[Any, Any], int] = {}
    skipped = 0
    for batch in events(text, _files.MAX_TRACE_BYTES, keep):
        for event in batch:
            try:
                if event.get("ph") != "X":
                    continue
                name_, cat = event["name"], event.get("cat")
                start = event["ts"] * 1.0
                end = start + event["dur"] * 1.0
                if not 0 <= end - start < _LONGEST:
                    raise ValueError(end)
                kind = kinds.get((name_, cat))
                if kind is None:
                    kind = kinds[name_, cat] = _kind(name_, cat)
                if kind <= _COLLECTIVE:
                    thread = (event.get("pid"), event.get("tid"))
                    if in_order:
                        sweep = sweeps.get(thread)
                        if sweep is None:
                            sweep = sweeps[thread] = _Sweep()
                        sweep.push(start, end, kind)
                    else:
                        kept.setdefault(thread, []).append((start, -end, kind))
                    if kind == _COLLECTIVE:
                        collectives.append((start, end))
                        _size(event, start, host_sizes)
                elif kind == _KERNEL:
                    kernels.append((start, end))
                elif kind == _NCCL:
                    nccl.append((start, end))
                    _size(event, start, device_sizes)
                else:
                    number = int(name_[len("ProfilerStep#") :])
                    where = (event.get("pid"), event.get("tid"))
                    hash(where)  # a thread named by a list or an object: the step cannot be placed, left out
                    steps.setdefault(number, (start, end, where))
            except (AttributeError, KeyError, TypeError, ValueError, OverflowError):
                skipped += 1
    for thread, held in kept.items():
        sweep = sweeps[thread] = _Sweep()
        for start, negative_end, kind in sorted(held):
            sweep.push(start, -negative_end, kind)
    if "traceEvents" not in top:
        raise Malformed(Message.of("JSON without traceEvents"))
    if not steps:
        raise InvalidInput("trace", name, NO_STEPS)
    info = top.get("distributedInfo")
    rank = _whole(info.get("rank")) if isinstance(info, dict) else None
    world = _whole(info.get("world_size")) if isinstance(info, dict) else None
    ordered = tuple(sorted(((n, s, e) for n, (s, e, _) in steps.items()), key=lambda step: step[1]))
    device = bool(kernels or nccl)
    if device:
        compute, communication, sizes = union(kernels), union(nccl), device_sizes
    else:
        busy: list[Interval] = []
        for thread in {where for _, _, where in steps.values()}:
            if thread in sweeps:
                if sweeps[thread].disordered:  # only now does it matter: a GPU's trace needs no thread's sweep
                    raise _OutOfOrder
                busy.extend(sweeps[thread].done())
        compute, communication, sizes = union(busy), union(collectives), host_sizes
    return RankTimeline(name, rank, world, ordered, compute, communication, tuple(sorted(sizes)), device, skipped)


def _kind(name: Any, cat: Any) -> int:
    if not isinstance(name, str):
        raise TypeError(name)
    category = cat.lower() if isinstance(cat, str) else ""
    if name.startswith("ProfilerStep#"):  # the host's; its copy on a GPU's timeline (gpu_user_annotation) is not a step
        return _ANNOTATION if category.startswith("gpu") else _STEP
    lower = name.lower()
    if category in _DEVICE:
        return _NCCL if "nccl" in lower else _KERNEL
    if lower.startswith(_COLLECTIVES):
        return _COLLECTIVE
    return _OP if category in _OPERATOR else _ANNOTATION


def _size(event: dict[str, Any], start: float, sizes: list[tuple[float, float]]) -> None:
    args = event.get("args")
    if not isinstance(args, dict):
        return
    count, dtype = args.get("In msg nelems"), args.get("dtype")
    item = _ITEM_BYTES.get(dtype.lower()) if isinstance(dtype, str) else None
    if item is not None and isinstance(count, int | float) and not isinstance(count, bool) and 0 < count < 1e15:
        sizes.append((start, float(count) * item))


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else None
