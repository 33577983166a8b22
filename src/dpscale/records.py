"""Measurement records and network profiles, typed: what dpscale measure, probe and Meter write.

A record (:class:`Measurement`) is one JSON object per line of a runs file, written by ``dpscale
measure --out`` and :class:`dpscale.Meter` and read by ``dpscale fit``; a profile
(:class:`NetworkProfile`) is the JSON file ``dpscale probe --out`` writes and ``dpscale predict
--network`` reads. Each type's ``to_dict`` gives the JSON keys dpscale writes, and its
``from_dict`` reads them back equal. Neither torch nor numpy is imported here.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpscale import _validate
from dpscale.errors import N_, InvalidInput, MissingInput

__all__ = [
    "JSON_TYPE",
    "AllReduceTiming",
    "MeasuredRun",
    "Measurement",
    "NetworkProfile",
    "ProbedLink",
    "StepTime",
    "append",
    "finite_or_none",
    "is_complete",
    "json_number",
    "timestamp",
    "write_profile",
]

JSON_TYPE = N_("a value of JSON type %(type)s")  # params={"type": "number"}, "integer", "string", "array"


def json_number(value: Any) -> float | None:
    """``value`` as a float if it is a JSON number within float's range, else None (true and false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer of 400 digits
        return None


def finite_or_none(x: float) -> float | None:
    """JSON has no NaN: an undefined number (an interval from one run, an error from two points) is null."""
    return x if math.isfinite(x) else None


def timestamp() -> str:
    """Now in UTC, as records and profiles note it: ``2024-05-01T12:00:00Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def is_complete(data: Mapping[str, Any]) -> bool:
    """Whether a record's run finished: it is not marked ``"complete": false`` (a hand-written line has no mark)."""
    return data.get("complete") is not False


def _given(data: Any, key: str, kind: str, default: Any = None) -> Any:
    """``data[key]``, or MissingInput where it is absent or null (anything but an object holds no key)."""
    value = data.get(key, default) if isinstance(data, Mapping) else None
    if value is None:
        raise MissingInput(key, JSON_TYPE, params={"type": kind})
    return value


def _number(data: Any, key: str, default: float | None = None) -> float:
    value = _given(data, key, "number", default)
    number = json_number(value)
    if number is None:
        raise InvalidInput(key, value, JSON_TYPE, params={"type": "number"})
    return number


def _integer(data: Any, key: str) -> int:
    value = _given(data, key, "integer")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(key, value, JSON_TYPE, params={"type": "integer"})
    return value


def _string(data: Any, key: str) -> str:
    value = _given(data, key, "string")
    if not isinstance(value, str):
        raise InvalidInput(key, value, JSON_TYPE, params={"type": "string"})
    return value


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
        return cls(*(_number(data, key) for key in _STEP_KEYS))


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


@dataclass(frozen=True, slots=True)
class ProbedLink:
    """One tier of a probed network: bandwidth in bytes/s, latency α in seconds, and the share of it reached."""

    bandwidth: float
    latency: float
    efficiency: float = 1.0

    def to_dict(self) -> dict[str, float]:
        return {"bandwidth": self.bandwidth, "latency": self.latency, "efficiency": self.efficiency}

    @classmethod
    def from_dict(cls, data: Any) -> ProbedLink:
        """A tier from its JSON object; MissingInput or InvalidInput names the first key missing or not a number.

        ``efficiency`` may be left out (1: the probe measured what the link reaches).
        """
        return cls(_number(data, "bandwidth"), _number(data, "latency"), _number(data, "efficiency", 1.0))


@dataclass(frozen=True, slots=True)
class AllReduceTiming:
    """One all-reduce size of a probe: its bytes, its time, and nccl-tests' algbw and busbw (bytes/s)."""

    bytes: int
    seconds: float
    algbw: float
    busbw: float

    def to_dict(self) -> dict[str, float]:
        return {"bytes": self.bytes, "seconds": self.seconds, "algbw": self.algbw, "busbw": self.busbw}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AllReduceTiming:
        return cls(_integer(data, "bytes"), *(_number(data, key) for key in ("seconds", "algbw", "busbw")))


COLLECTIVE_NAMES = ("all_reduce", "reduce_scatter", "all_gather")


@dataclass(frozen=True, slots=True)
class MeasuredRun:
    """One nccl-tests run as a profile keeps it: the collective, its shape, and its time at each size.

    ``sizes`` holds (bytes, seconds) in increasing size, each the median of the times the run
    printed for that size (its out-of-place and in-place halves). ``dpscale predict`` gives these
    times back where it prices that collective at that shape, and fits the network to them again
    when the node's links it is given differ from those the profile was fitted with.
    """

    name: str
    collective: str
    ranks: int
    hosts: int
    devices_per_host: int
    sizes: tuple[tuple[int, float], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "collective": self.collective,
            "ranks": self.ranks,
            "hosts": self.hosts,
            "devices_per_host": self.devices_per_host,
            "sizes": [[size, seconds] for size, seconds in self.sizes],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MeasuredRun:
        """A run from its JSON object; MissingInput or InvalidInput names the first key missing or wrong."""
        collective = _string(data, "collective")
        if collective not in COLLECTIVE_NAMES:
            raise InvalidInput("collective", collective, N_("all_reduce, reduce_scatter or all_gather"))
        shape = {key: _integer(data, key) for key in ("ranks", "hosts", "devices_per_host")}
        if not (1 <= shape["hosts"] <= shape["ranks"] and shape["devices_per_host"] >= 1):
            raise InvalidInput("hosts", shape["hosts"], N_("from 1 host to one host per rank"))
        rows = _given(data, "sizes", "array")
        if not isinstance(rows, list) or not rows:
            raise InvalidInput("sizes", rows, JSON_TYPE, params={"type": "array"})
        sizes = []
        for row in rows:
            size = row[0] if isinstance(row, list) and len(row) == 2 else None
            seconds = json_number(row[1]) if isinstance(row, list) and len(row) == 2 else None
            if isinstance(size, bool) or not isinstance(size, int) or size < 0 or not (seconds and seconds > 0):
                raise InvalidInput("sizes", row, N_("[bytes, seconds] pairs: a whole number and a time above 0"))
            if not math.isfinite(seconds):
                raise InvalidInput("sizes", row, N_("[bytes, seconds] pairs: a whole number and a time above 0"))
            sizes.append((size, seconds))
        return cls(_string(data, "name"), collective, sizes=tuple(sorted(sizes)), **shape)


@dataclass(frozen=True)
class NetworkProfile:
    """What ``dpscale probe`` measured (or ``probe --import`` read from nccl-tests): the all-reduce
    times and each tier's α and β (None where absent).

    A profile from nccl-tests also says so (``source``), names the GPU, and keeps each
    collective's own tiers (``collectives``: ``all_reduce``, ``reduce_scatter``, ``all_gather``,
    each an (intra, inter) pair); ``intra`` and ``inter`` are then the all-reduce's, and ``runs``
    every run it was fitted to, as measured (:class:`MeasuredRun`). These keys are written only
    when known, so a profile of ``dpscale probe`` reads as it always did.
    """

    world_size: int
    nodes: int
    devices_per_node: int
    backend: str
    device_type: str
    torch: str
    intra: ProbedLink | None
    inter: ProbedLink | None
    sizes: tuple[AllReduceTiming, ...]
    time: str
    source: str | None = None
    device_name: str | None = None
    collectives: Mapping[str, tuple[ProbedLink | None, ProbedLink | None]] = field(default_factory=dict)
    runs: tuple[MeasuredRun, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "world_size": self.world_size,
            "nodes": self.nodes,
            "devices_per_node": self.devices_per_node,
            "backend": self.backend,
            "device_type": self.device_type,
            "torch": self.torch,
            "intra": None if self.intra is None else self.intra.to_dict(),
            "inter": None if self.inter is None else self.inter.to_dict(),
            "sizes": [row.to_dict() for row in self.sizes],
            "time": self.time,
        }
        if self.source is not None:
            out["source"] = self.source
        if self.device_name is not None:
            out["device_name"] = self.device_name
        if self.collectives:
            out["collectives"] = {
                name: {tier: None if link is None else link.to_dict() for tier, link in zip(_TIERS, links, strict=True)}
                for name, links in self.collectives.items()
            }
        if self.runs:
            out["runs"] = [run.to_dict() for run in self.runs]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NetworkProfile:
        """A profile from its JSON object; MissingInput or InvalidInput names the first key missing or wrong."""
        sizes = _given(data, "sizes", "array")
        if not isinstance(sizes, list):
            raise InvalidInput("sizes", sizes, JSON_TYPE, params={"type": "array"})
        intra, inter = (
            None if data.get(key) is None else ProbedLink.from_dict(data[key]) for key in ("intra", "inter")
        )
        optional = {key: None if data.get(key) is None else _string(data, key) for key in ("source", "device_name")}
        return cls(
            world_size=_integer(data, "world_size"),
            nodes=_integer(data, "nodes"),
            devices_per_node=_integer(data, "devices_per_node"),
            backend=_string(data, "backend"),
            device_type=_string(data, "device_type"),
            torch=_string(data, "torch"),
            intra=intra,
            inter=inter,
            sizes=tuple(AllReduceTiming.from_dict(row) for row in sizes),
            time=_string(data, "time"),
            collectives=_collectives(data.get("collectives")),
            runs=_runs(data.get("runs")),
            **optional,
        )


_TIERS = ("intra", "inter")


def _collectives(data: Any) -> dict[str, tuple[ProbedLink | None, ProbedLink | None]]:
    """A profile's ``collectives`` object: for each collective its intra and inter tiers (null where absent)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping) or not all(isinstance(v, Mapping) for v in data.values()):
        raise InvalidInput("collectives", data, JSON_TYPE, params={"type": "object"})

    def tier(tiers: Mapping[str, Any], key: str) -> ProbedLink | None:
        return None if tiers.get(key) is None else ProbedLink.from_dict(tiers[key])

    return {str(name): (tier(tiers, "intra"), tier(tiers, "inter")) for name, tiers in data.items()}


def _runs(data: Any) -> tuple[MeasuredRun, ...]:
    """A profile's ``runs`` array (absent: none, as a profile of ``dpscale probe`` has)."""
    if data is None:
        return ()
    if not isinstance(data, list):
        raise InvalidInput("runs", data, JSON_TYPE, params={"type": "array"})
    return tuple(MeasuredRun.from_dict(run) for run in data)


def write_profile(path: str | Path, profile: NetworkProfile) -> None:
    """Write ``profile`` as the JSON file ``predict --network`` reads (its folder made if need be)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(profile.to_dict(), indent=1, allow_nan=False), encoding="utf-8")
