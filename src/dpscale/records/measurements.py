"""Measurement records: one JSON object per line of a runs file, as ``dpscale measure`` and Meter write them.

A record (:class:`Measurement`) is written by ``dpscale measure --out`` and :class:`dpscale.Meter`
(:func:`append`) and read by ``dpscale fit``; its ``to_dict`` gives the JSON keys dpscale writes,
and its ``from_dict`` reads them back equal, keeping any other key as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpscale import _validate
from dpscale.errors import InvalidInput, MissingInput
from dpscale.records._values import json_number, number_at

__all__ = ["Measurement", "StepTime", "append", "is_complete"]


def is_complete(data: Mapping[str, Any]) -> bool:
    """Whether a record's run finished: it is not marked ``"complete": false`` (a hand-written line has no mark)."""
    return data.get("complete") is not False


_STEP_KEYS = ("median", "mean", "p10", "p90", "cv")


@dataclass(frozen=True, slots=True)
class StepTime:
    """Step times of a measured run, in seconds: median, mean, 10th and 90th percentiles, coefficient of variation."""

    median: float
    mean: float
    p10: float
    p90: float
    cv: float

    def to_dict(self) -> dict[str, float]:
        return {"median": self.median, "mean": self.mean, "p10": self.p10, "p90": self.p90, "cv": self.cv}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepTime:
        return cls(*(number_at(data, key) for key in _STEP_KEYS))


# How each key of a record other than devices and throughput is read. A value of another type
# than dpscale writes there (a Meter's own meaning for the key, another tool's line) is not an
# error: the record keeps it as it is, among its extra keys.
_OTHER = object()


def _read(check: Callable[[Any], bool], convert: Callable[[Any], Any] = lambda v: v) -> Callable[[Any], Any]:
    return lambda value: convert(value) if check(value) else _OTHER


def _is_number(v: Any) -> bool:
    return json_number(v) is not None


def _is_steps(v: Any) -> bool:
    return isinstance(v, Mapping) and sorted(v) == sorted(_STEP_KEYS) and all(_is_number(v[k]) for k in _STEP_KEYS)


_TEXT = _read(lambda v: isinstance(v, str))
_WHOLE = _read(lambda v: isinstance(v, int) and not isinstance(v, bool))
_REAL = _read(_is_number)
_REALS = _read(lambda v: isinstance(v, list) and all(map(_is_number, v)), tuple)
_INTERVAL = _read(lambda v: isinstance(v, list) and len(v) == 2 and all(x is None or _is_number(x) for x in v), tuple)
_FLAG = _read(lambda v: isinstance(v, bool))
_STEPS = _read(_is_steps, StepTime.from_dict)

_ALWAYS, _NULLABLE, _KNOWN = "always", "nullable", "known"  # written always; always, null if unknown; when known
_KEYS: dict[str, tuple[Callable[[Any], Any], str]] = {  # in the order dpscale writes them, after devices and throughput
    "throughput_ci": (_INTERVAL, _KNOWN),
    "per_rank_throughput": (_REALS, _ALWAYS),
    "nodes": (_WHOLE, _KNOWN),
    "backend": (_TEXT, _NULLABLE),
    "device_type": (_TEXT, _NULLABLE),
    "device_name": (_TEXT, _KNOWN),
    "torch": (_TEXT, _NULLABLE),
    "threads_per_rank": (_WHOLE, _KNOWN),
    "cpus_usable": (_WHOLE, _KNOWN),
    "workload": (_TEXT, _KNOWN),
    "params": (_REAL, _KNOWN),
    "batch": (_WHOLE, _NULLABLE),
    "steps": (_WHOLE, _NULLABLE),
    "warmup": (_WHOLE, _NULLABLE),
    "repeats": (_WHOLE, _KNOWN),
    "step_time": (_STEPS, _NULLABLE),
    "source": (_TEXT, _KNOWN),
    "complete": (_FLAG, _ALWAYS),
    "time": (_TEXT, _NULLABLE),
    "efficiency": (_REAL, _KNOWN),
    "efficiency_ci": (_INTERVAL, _KNOWN),
    "sharding": (_TEXT, _KNOWN),
    "peak_memory": (_REAL, _KNOWN),
    "communication_time": (_REAL, _KNOWN),
    "exposed_communication": (_REAL, _KNOWN),
}


@dataclass(frozen=True)
class Measurement:
    """One measured size: what ``dpscale measure`` and :class:`dpscale.Meter` write as a line of JSON.

    ``throughput`` is the cluster's samples per second (0 in a Meter's record of a loop that never
    stepped); ``throughput_ci`` and ``efficiency_ci`` are 95 % intervals over the repeats, an end
    None where one run leaves it undefined; ``efficiency`` is against the 1-rank run, where one was
    measured. ``extra`` holds every other key the line had, as it was: a Meter's own keys
    (``run="solo"``) and any value of another type than dpscale writes.
    """

    devices: int
    throughput: float
    per_rank_throughput: tuple[float, ...] = ()
    backend: str | None = None
    device_type: str | None = None
    torch: str | None = None
    batch: int | None = None
    steps: int | None = None
    warmup: int | None = None
    step_time: StepTime | None = None
    complete: bool = True
    time: str | None = None
    throughput_ci: tuple[float | None, float | None] | None = None
    nodes: int | None = None
    device_name: str | None = None
    threads_per_rank: int | None = None
    # CPUs the measuring process could use (its affinity and cgroup quota), which its threads per
    # rank were counted from. Written only when known: a reader that predates it keeps it among
    # ``extra``, and a record without it reads as it always did.
    cpus_usable: int | None = None
    workload: str | None = None
    params: float | None = None
    repeats: int | None = None
    source: str | None = None  # "meter" for a Meter's record
    efficiency: float | None = None
    efficiency_ci: tuple[float, float] | None = None
    sharding: str | None = None  # how the copies were kept: ddp, zero2, zero3 or hybrid (PyTorch's FSDP)
    peak_memory: float | None = None  # bytes the hungriest rank held at most (a GPU's allocator; a CPU's resident size)
    communication_time: float | None = None  # a Meter's watch(): seconds per step an all-reduce was in flight
    exposed_communication: float | None = None  # ... and of them, after the backward pass's last gradients
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _validate.device_count("devices", self.devices)
        if self.complete:
            _validate.positive("throughput", self.throughput)
            return
        number = json_number(self.throughput)  # a run that never stepped measured nothing: 0
        if number is None or not number >= 0:
            raise InvalidInput("throughput", self.throughput, _validate.POSITIVE)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"devices": self.devices, "throughput": self.throughput}
        for key, (_, written) in _KEYS.items():
            value = getattr(self, key)
            if value is None and written == _KNOWN:
                continue
            out[key] = (
                value.to_dict() if isinstance(value, StepTime) else list(value) if isinstance(value, tuple) else value
            )
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Measurement:
        """A record from its JSON object; InvalidInput names devices or throughput where either is missing or wrong."""
        for key in ("devices", "throughput"):
            if key not in data:
                raise MissingInput(key, "a JSON object with devices and throughput")
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key in ("devices", "throughput"):
                continue
            read, written = _KEYS.get(key, (lambda _: _OTHER, _KNOWN))
            clean = None if value is None and written == _NULLABLE else read(value)
            if clean is _OTHER:
                extra[key] = value
            else:
                known[key] = clean
        return cls(data["devices"], data["throughput"], **known, extra=extra)


def append(path: str | Path, record: Measurement) -> None:
    """Add ``record`` as one line of ``path`` (created with its folder if need be)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record.to_dict(), allow_nan=False) + "\n")
