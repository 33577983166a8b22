"""Network profiles: what ``dpscale probe`` measured, or ``probe --import`` read from nccl-tests.

A profile (:class:`NetworkProfile`) is the JSON file ``dpscale probe --out`` writes
(:func:`write_profile`) and ``dpscale predict --network`` reads: the all-reduce times and each
tier's α and β; from nccl-tests, each collective's tiers and the runs fitted too. Its
``to_dict`` gives the JSON keys dpscale writes, and its ``from_dict`` reads them back equal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpscale.errors import N_, InvalidInput
from dpscale.records._values import JSON_TYPE, integer_at, json_number, number_at, string_at, value_at

__all__ = ["COLLECTIVE_NAMES", "AllReduceTiming", "MeasuredRun", "NetworkProfile", "ProbedLink", "write_profile"]


@dataclass(frozen=True, slots=True)
class ProbedLink:
    """One tier of a probed network: bandwidth in bytes/s, latency α in seconds, and the share of it reached.

    ``in_network``: its switches reduce (NVLink SHARP, SHARP), as a log showed; written only when true.
    """

    bandwidth: float
    latency: float
    efficiency: float = 1.0
    in_network: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"bandwidth": self.bandwidth, "latency": self.latency, "efficiency": self.efficiency}
        return {**out, "in_network": True} if self.in_network else out

    @classmethod
    def from_dict(cls, data: Any) -> ProbedLink:
        """A tier from its JSON object; MissingInput or InvalidInput names the first key missing or of another type.

        ``efficiency`` may be left out (1: the probe measured what the link reaches), and so may
        ``in_network`` (false).
        """
        reduces = data.get("in_network", False) if isinstance(data, Mapping) else False
        if not isinstance(reduces, bool):
            raise InvalidInput("in_network", reduces, JSON_TYPE, params={"type": "boolean"})
        numbers = (number_at(data, "bandwidth"), number_at(data, "latency"), number_at(data, "efficiency", 1.0))
        return cls(*numbers, in_network=reduces)


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
        return cls(integer_at(data, "bytes"), *(number_at(data, key) for key in ("seconds", "algbw", "busbw")))


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
        collective = string_at(data, "collective")
        if collective not in COLLECTIVE_NAMES:
            raise InvalidInput("collective", collective, N_("all_reduce, reduce_scatter or all_gather"))
        shape = {key: integer_at(data, key) for key in ("ranks", "hosts", "devices_per_host")}
        if not (1 <= shape["hosts"] <= shape["ranks"] and shape["devices_per_host"] >= 1):
            raise InvalidInput("hosts", shape["hosts"], N_("from 1 host to one host per rank"))
        rows = value_at(data, "sizes", "array")
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
        return cls(string_at(data, "name"), collective, sizes=tuple(sorted(sizes)), **shape)


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
        sizes = value_at(data, "sizes", "array")
        if not isinstance(sizes, list):
            raise InvalidInput("sizes", sizes, JSON_TYPE, params={"type": "array"})
        intra, inter = (
            None if data.get(key) is None else ProbedLink.from_dict(data[key]) for key in ("intra", "inter")
        )
        optional = {key: None if data.get(key) is None else string_at(data, key) for key in ("source", "device_name")}
        return cls(
            world_size=integer_at(data, "world_size"),
            nodes=integer_at(data, "nodes"),
            devices_per_node=integer_at(data, "devices_per_node"),
            backend=string_at(data, "backend"),
            device_type=string_at(data, "device_type"),
            torch=string_at(data, "torch"),
            intra=intra,
            inter=inter,
            sizes=tuple(AllReduceTiming.from_dict(row) for row in sizes),
            time=string_at(data, "time"),
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
