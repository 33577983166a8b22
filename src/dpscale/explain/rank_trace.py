"""One rank's profiler trace reduced, in one pass, to its steps and the time it computed and communicated.

What each event counts as (a step, compute, communication) is :mod:`~dpscale.explain.events`'s;
here the file is opened (plain or gzipped, within the limits of :mod:`~dpscale.explain.limits`),
streamed (:mod:`~dpscale.explain.stream`) and its events swept, thread by thread, into a
:class:`RankTimeline`.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.explain.events import COLLECTIVE, KERNEL, NCCL, Sweep, add_size, kind_of
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


def _read(name: str, text: io.TextIOWrapper, in_order: bool, read: Any, budget: Budget | None) -> RankTimeline:
    top: dict[str, Any] = {}

    def keep(key: str, value: Any) -> None:
        if key in ("distributedInfo", "traceEvents"):
            top[key] = value

    sweeps: dict[Any, Sweep] = {}
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
                    kind = kind_of(name_, cat)
                    if (
                        len(kinds) < MAX_NAMES
                        and len(name_) <= MAX_NAME
                        and (cat is None or (type(cat) is str and len(cat) <= MAX_NAME))
                    ):
                        kinds[name_, cat] = kind
                if kind <= COLLECTIVE:
                    thread = (event.get("pid"), event.get("tid"))
                    if in_order:
                        sweep = sweeps.get(thread)
                        if sweep is None:
                            if len(sweeps) >= MAX_THREADS:
                                raise TooMuch(Message.of("at most %(most)s threads", most=MAX_THREADS))
                            sweep = sweeps[thread] = Sweep()
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
                    if kind == COLLECTIVE:
                        if end > start:
                            collectives.append(start)
                            collectives.append(end)
                        add_size(event, start, host_sizes)
                elif kind == KERNEL:
                    if end > start:
                        kernels.append(start)
                        kernels.append(end)
                elif kind == NCCL:
                    if end > start:
                        nccl.append(start)
                        nccl.append(end)
                    add_size(event, start, device_sizes)
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
        sweep = sweeps[thread] = Sweep()
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


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else None
