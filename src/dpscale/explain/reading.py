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
import os
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.explain.intervals import Timeline, union
from dpscale.explain.limits import (
    GZIP_FLOOR,
    MAX_EVENTS,
    MAX_KEPT,
    MAX_NAME,
    MAX_NAMES,
    MAX_STEPS,
    MAX_THREADS,
    Budget,
    TooMuch,
)
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
_ROWS = 1 << 16  # events held to be sorted, turned back into numbers this many at a time


@dataclass(frozen=True, slots=True)
class RankTimeline:
    """One rank's trace: its steps and the union of its compute and of its communication, in µs.

    ``steps`` are ``(number, start, end)`` by start; ``compute`` and ``communication`` are
    timelines (flat arrays ``start, end, …``, see :mod:`~dpscale.explain.intervals`); ``sizes``
    the ``start, bytes, …`` of each collective whose size the trace gives, by start; ``skipped``
    counts events that could not be read (a time that is not a number, say) and were left out;
    ``device`` is True for a GPU's kernels.
    """

    file: str
    rank: int | None
    world_size: int | None
    steps: tuple[tuple[int, float, float], ...]
    compute: Timeline
    communication: Timeline
    sizes: Timeline
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


def read_trace(path: str | Path, *, name: str | None = None, budget: Budget | None = None) -> RankTimeline:
    """Read the trace at ``path`` (plain or gzipped JSON) into a :class:`RankTimeline`.

    ``name`` is what results and errors call the file (an upload's own name, where ``path`` is
    the server's copy of it); the path by default. ``budget`` is what the files read with it may
    still hold, together (:class:`~dpscale.explain.limits.Budget`: a server's request); each file
    is bounded on its own in any case (:mod:`~dpscale.explain.limits`).

    ``torch.profiler`` writes each thread's operators in order of start, so one pass finds what
    each thread computes as it reads; a CPU trace whose step thread is out of order is read a
    second time, keeping its events to sort them (a GPU trace's compute is its kernels: the order
    of its threads' events does not matter). A UTF-8 byte-order mark is read as a browser reads
    it (dropped). Raises InvalidInput naming the file when it cannot be opened, is not a trace,
    is cut short, has no profiler step or holds more than a limit.
    """
    marked = budget.mark() if budget is not None else None
    try:
        return _read_file(path, in_order=True, shown=name, budget=budget)
    except _OutOfOrder:
        if budget is not None and marked is not None:
            budget.restore(marked)  # the same text again: it is not counted twice
        return _read_file(path, in_order=False, shown=name, budget=budget)


def _read_file(
    path: str | Path, *, in_order: bool, shown: str | None = None, budget: Budget | None = None
) -> RankTimeline:
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
                return _read(name, text, in_order, _meter(raw, text, budget), budget)
        except (Malformed, TooMuch) as exc:
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
    # utf-8-sig: a byte-order mark at the start is dropped, as a browser's TextDecoder drops it
    if isinstance(raw, io.BufferedReader) and raw.peek(2)[:2] == b"\x1f\x8b":  # gzip's magic number
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw, mode="rb"), encoding="utf-8-sig")
    return io.TextIOWrapper(raw, encoding="utf-8-sig")


def _meter(raw: BinaryIO, text: io.TextIOWrapper, budget: Budget | None) -> Any:
    """What to tell of each piece of text read: the request's budget, and a gzipped file's ratio to its size."""
    if budget is None:
        return None
    unzipped = 0
    allowed = None
    if isinstance(text.buffer, gzip.GzipFile):
        try:
            allowed = max(budget.ratio * os.fstat(raw.fileno()).st_size, GZIP_FLOOR)
        except (OSError, ValueError):  # no file behind it: the request's total bounds it still
            allowed = None

    def read(count: int) -> None:
        nonlocal unzipped
        unzipped += count
        if allowed is not None and unzipped > allowed:
            raise TooMuch(
                Message.of("a gzip file that unzips to at most %(most)s times its size", most=int(budget.ratio))
            )
        budget.take_text(count)

    return read


class _OutOfOrder(Exception):
    """A thread's events are not in order of start: read the file again, sorting them."""


class _Sweep:
    """The time one thread spends with an operator innermost and no collective around it.

    Events arrive in order of start (a parent before the children it holds), so a stack of the
    open events tells, between two boundaries, which one is innermost. An operator inside an
    operator, or anything inside a collective, changes nothing and is not kept. A child that
    outlasts its parent (rounding) is cut at the parent's end. The stack and the time found are
    flat arrays: a thread's million events keep a few MB.
    """

    __slots__ = ("busy", "disordered", "ends", "kinds", "last", "now")

    def __init__(self) -> None:
        self.busy: Timeline = array("d")
        self.ends = array("d")  # the open events' ends, innermost last…
        self.kinds = bytearray()  # …and their kinds
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
        ends = self.ends
        while ends and ends[-1] <= start:
            self._close()
        if ends:
            top_kind = self.kinds[-1]
            if top_kind == _COLLECTIVE or (top_kind == _OP and kind == _OP):
                return
            if top_kind == _OP:
                self._busy(self.now, start)
            end = min(end, ends[-1])
        self.now = start
        ends.append(end)
        self.kinds.append(kind)

    def _close(self) -> None:
        closed = self.ends.pop()
        if self.kinds.pop() == _OP:
            self._busy(self.now, closed)
        self.now = closed

    def _busy(self, start: float, end: float) -> None:
        if end > start:
            busy = self.busy
            if busy and busy[-1] >= start:
                busy[-1] = end
            else:
                busy.append(start)
                busy.append(end)

    def done(self) -> Timeline:
        while self.ends:
            self._close()
        return self.busy


def _read(name: str, text: io.TextIOWrapper, in_order: bool, read: Any, budget: Budget | None) -> RankTimeline:
    top: dict[str, Any] = {}

    def keep(key: str, value: Any) -> None:
        if key in ("distributedInfo", "traceEvents"):
            top[key] = value

    sweeps: dict[Any, _Sweep] = {}
    kept: dict[Any, tuple[array[float], array[float], bytearray]] = {}  # out of order: (start, -end, kind), to sort
    steps: dict[int, tuple[float, float, Any]] = {}
    kernels: Timeline = array("d")
    nccl: Timeline = array("d")
    collectives: Timeline = array("d")
    host_sizes: Timeline = array("d")
    device_sizes: Timeline = array("d")
    kinds: dict[tuple[Any, Any], int] = {}  # at most MAX_NAMES short names: a file's own names are not all kept
    most_kept = MAX_KEPT if budget is None else min(MAX_KEPT, budget.kept)
    most_steps = MAX_STEPS if budget is None else min(MAX_STEPS, budget.steps)
    skipped = used = seen = 0
    for batch in events(text, _files.MAX_TRACE_BYTES, keep, read):
        seen += len(batch)
        if seen > MAX_EVENTS:
            raise TooMuch(Message.of("at most %(most)s events", most=MAX_EVENTS))
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
                    kind = _kind(name_, cat)
                    if (
                        len(kinds) < MAX_NAMES
                        and len(name_) <= MAX_NAME
                        and (cat is None or (type(cat) is str and len(cat) <= MAX_NAME))
                    ):
                        kinds[name_, cat] = kind
                if kind <= _COLLECTIVE:
                    thread = (event.get("pid"), event.get("tid"))
                    if in_order:
                        sweep = sweeps.get(thread)
                        if sweep is None:
                            if len(sweeps) >= MAX_THREADS:
                                raise TooMuch(Message.of("at most %(most)s threads", most=MAX_THREADS))
                            sweep = sweeps[thread] = _Sweep()
                        sweep.push(start, end, kind)
                    else:
                        held = kept.get(thread)
                        if held is None:
                            if len(kept) >= MAX_THREADS:
                                raise TooMuch(Message.of("at most %(most)s threads", most=MAX_THREADS))
                            held = kept[thread] = (array("d"), array("d"), bytearray())
                        held[0].append(start)
                        held[1].append(-end)
                        held[2].append(kind)
                    if kind == _COLLECTIVE:
                        if end > start:
                            collectives.append(start)
                            collectives.append(end)
                        _size(event, start, host_sizes)
                elif kind == _KERNEL:
                    if end > start:
                        kernels.append(start)
                        kernels.append(end)
                elif kind == _NCCL:
                    if end > start:
                        nccl.append(start)
                        nccl.append(end)
                    _size(event, start, device_sizes)
                else:
                    number = int(name_[len("ProfilerStep#") :])
                    where = (event.get("pid"), event.get("tid"))
                    hash(where)  # a thread named by a list or an object: the step cannot be placed, left out
                    if number not in steps:
                        if len(steps) >= most_steps:
                            raise TooMuch(_too_many_steps(budget))
                        steps[number] = (start, end, where)
                used += 1
            except (AttributeError, KeyError, TypeError, ValueError, OverflowError):
                skipped += 1
        if used > most_kept:
            raise TooMuch(_too_many_kept(budget))
    if budget is not None:
        budget.kept -= used
        budget.steps -= len(steps)
    while kept:
        thread, held = kept.popitem()  # each thread's events given back once swept
        sweep = sweeps[thread] = _Sweep()
        for start, negative_end, kind in _sorted_rows(*held):
            sweep.push(start, -negative_end, kind)
        del held
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
        sweeps.clear()  # a GPU's compute is its kernels: the threads' sweeps are not needed
        compute, communication, sizes = union(kernels, in_place=True), union(nccl, in_place=True), device_sizes
    else:
        busy = array("d")
        for thread in {where for _, _, where in steps.values()}:
            if thread in sweeps:
                if sweeps[thread].disordered:  # only now does it matter: a GPU's trace needs no thread's sweep
                    raise _OutOfOrder
                busy.extend(sweeps[thread].done())
        sweeps.clear()
        compute, communication, sizes = union(busy, in_place=True), union(collectives, in_place=True), host_sizes
    return RankTimeline(name, rank, world, ordered, compute, communication, _by_start(sizes), device, skipped)


def _too_many_kept(budget: Budget | None) -> Message:
    if budget is not None and budget.kept < MAX_KEPT:
        return Message.of(
            "at most %(most)s timed events (operators, kernels, collectives) in all the files sent at once",
            most=budget.most_kept,
        )
    return Message.of("at most %(most)s timed events (operators, kernels, collectives)", most=MAX_KEPT)


def _too_many_steps(budget: Budget | None) -> Message:
    if budget is not None and budget.steps < MAX_STEPS:
        return Message.of("at most %(most)s profiler steps in all the files sent at once", most=budget.most_steps)
    return Message.of("at most %(most)s profiler steps", most=MAX_STEPS)


def _sorted_rows(starts: array[float], negative_ends: array[float], kinds: bytearray) -> Any:
    """The ``(start, -end, kind)`` rows of three columns in order, as ``sorted`` of their tuples gives them."""
    import numpy as np

    columns = [
        np.frombuffer(c, dtype=d) for c, d in ((starts, np.float64), (negative_ends, np.float64), (kinds, np.uint8))
    ]
    order = np.lexsort(columns[::-1]).astype(np.int32 if len(starts) < 2**31 else np.int64)
    for first in range(0, len(order), _ROWS):
        some = order[first : first + _ROWS]
        yield from zip(*(column[some].tolist() for column in columns), strict=True)


def _by_start(sizes: Timeline) -> Timeline:
    """``start, bytes, …`` pairs sorted by start (then bytes), as ``sorted`` of their tuples gives them."""
    if len(sizes) > 2:
        import numpy as np

        np.frombuffer(sizes, dtype=np.complex128).sort()
    return sizes


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


def _size(event: dict[str, Any], start: float, sizes: Timeline) -> None:
    args = event.get("args")
    if not isinstance(args, dict):
        return
    count, dtype = args.get("In msg nelems"), args.get("dtype")
    item = _ITEM_BYTES.get(dtype.lower()) if isinstance(dtype, str) else None
    if item is not None and isinstance(count, int | float) and not isinstance(count, bool) and 0 < count < 1e15:
        sizes.append(start)
        sizes.append(float(count) * item)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else None
