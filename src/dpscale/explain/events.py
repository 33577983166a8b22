"""What each event of a profiler trace counts as, and the time a thread spends computing.

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

import math
from array import array
from typing import Any

from dpscale.explain.intervals import Timeline

__all__ = ["ANNOTATION", "COLLECTIVE", "KERNEL", "NCCL", "OP", "STEP", "Sweep", "add_size", "kind_of"]

OP, ANNOTATION, COLLECTIVE, KERNEL, NCCL, STEP = range(6)  # an event's kind; the first three are a thread's
_DEVICE = frozenset({"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"})
_OPERATOR = frozenset({"cpu_op", "operator"})
_COLLECTIVE_PREFIXES = (
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


def kind_of(name: Any, cat: Any) -> int:
    """The kind of an event named ``name`` in category ``cat`` (TypeError for a name that is not text)."""
    if not isinstance(name, str):
        raise TypeError(name)
    category = cat.lower() if isinstance(cat, str) else ""
    if name.startswith("ProfilerStep#"):  # the host's; its copy on a GPU's timeline (gpu_user_annotation) is not a step
        return ANNOTATION if category.startswith("gpu") else STEP
    lower = name.lower()
    if category in _DEVICE:
        return NCCL if "nccl" in lower else KERNEL
    if lower.startswith(_COLLECTIVE_PREFIXES):
        return COLLECTIVE
    return OP if category in _OPERATOR else ANNOTATION


def add_size(event: dict[str, Any], start: float, sizes: Timeline) -> None:
    """Add ``start, bytes`` to ``sizes`` where the collective ``event`` says its size (its ``args``)."""
    args = event.get("args")
    if not isinstance(args, dict):
        return
    count, dtype = args.get("In msg nelems"), args.get("dtype")
    item = _ITEM_BYTES.get(dtype.lower()) if isinstance(dtype, str) else None
    if item is not None and isinstance(count, int | float) and not isinstance(count, bool) and 0 < count < 1e15:
        sizes.append(start)
        sizes.append(float(count) * item)


class Sweep:
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
            if top_kind == COLLECTIVE or (top_kind == OP and kind == OP):
                return
            if top_kind == OP:
                self._busy(self.now, start)
            end = min(end, ends[-1])
        self.now = start
        ends.append(end)
        self.kinds.append(kind)

    def _close(self) -> None:
        closed = self.ends.pop()
        if self.kinds.pop() == OP:
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
        """The thread's compute: its busy intervals, once every event still open is closed."""
        while self.ends:
            self._close()
        return self.busy
