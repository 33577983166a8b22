"""Link presets (presets.toml): common GPU interconnects and networks, with their sources.

A preset may say its switches reduce (``in_network = true``: NVLink SHARP, SHARP), which is how
a user chooses in-network reduction (:mod:`dpscale.collectives.innetwork`); a profile's tier says so
with ``"in_network": true``.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.messages import Message

if TYPE_CHECKING:
    from dpscale.collectives.link import Link
    from dpscale.records import MeasuredRun

__all__ = ["Profile", "from_profile", "link", "presets", "profile_links", "read_profile", "resolve_link"]

Tier = Literal["intra", "inter"]


@functools.cache
def presets() -> dict[str, dict[str, dict[str, Any]]]:
    with (Path(__file__).parent / "presets.toml").open("rb") as f:
        return tomllib.load(f)


def link(tier: Tier, name: str, *, nics: int = 1) -> Link:
    """The preset ``name`` of ``tier``; ``nics`` network cards per node multiply a network's bandwidth."""
    from dpscale.collectives.link import Link  # numpy: loaded when a link is made

    table = presets()[tier]
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in table:
        raise InvalidInput(tier, name, N_("one of %(choices)s"), params={"choices": ", ".join(sorted(table))})
    entry = table[key]
    return Link(entry["bandwidth"] * nics, entry["latency"], entry["efficiency"], entry.get("in_network", False))


FREE_BANDWIDTH = 1e18  # a node's links assumed free, as dpscale.nccltests.profiling.FREE writes them
DEFAULT_LATENCY = {"intra": 3e-6, "inter": 10e-6}  # seconds; typical NCCL-level values, an assumption
DEFAULT_EFFICIENCY = 0.8  # share of line rate an all-reduce reaches; an assumption, as in presets.toml


def resolve_link(
    tier: Tier,
    preset: str | None = None,
    bandwidth: float | None = None,
    latency: float | None = None,
    efficiency: float | None = None,
    *,
    nics: int = 1,
) -> Link | None:
    """A link from a preset or a bandwidth (not both), with latency and efficiency overriding either.

    None when neither a preset nor a bandwidth is given (no such tier: a single node).
    """
    from dpscale.collectives.link import Link  # numpy: loaded when a link is made

    if preset is not None and bandwidth is not None:
        raise InvalidInput(f"{tier}_bandwidth", bandwidth, "a preset or a bandwidth, not both")
    if preset is None and bandwidth is None:
        if latency is not None or efficiency is not None:
            raise MissingInput(f"{tier}_bandwidth", "a bandwidth or a preset before a latency or an efficiency")
        return None
    base = (
        link(tier, preset, nics=nics if tier == "inter" else 1)
        if preset is not None
        else Link(float(bandwidth or 0) * (nics if tier == "inter" else 1), DEFAULT_LATENCY[tier], DEFAULT_EFFICIENCY)
    )
    return Link(
        base.bandwidth,
        base.latency if latency is None else latency,
        base.efficiency if efficiency is None else efficiency,
        base.in_network,
    )


def from_profile(path: str) -> tuple[Link | None, Link | None, int]:
    """The links a ``dpscale probe`` profile measured, and its devices per node (see :func:`profile_links`)."""
    intra, inter, per_node, _ = profile_links(path)
    return intra, inter, per_node


def profile_links(path: str) -> tuple[Link | None, Link | None, int, tuple[tuple[Any, Link | None, Link | None], ...]]:
    """The links a ``dpscale probe`` profile measured, its devices per node, and each collective's own links.

    The last are those of a profile of nccl-tests runs (``probe --import``): (collective, intra,
    inter) for each of all_reduce, reduce_scatter and all_gather it measured, None where a tier
    was not. The file is read within MAX_PROFILE_BYTES and decoded by :func:`dpscale._files.decode_json`:
    a binary, a huge file or JSON nested a hundred thousand deep is one error naming it.
    """
    found = read_profile(path)
    return found.intra, found.inter, found.devices_per_node, found.collectives


@dataclass(frozen=True)
class Profile:
    """What ``predict --network`` takes from a profile: the links it measured and the runs it measured them on.

    ``runs`` are the nccl-tests runs of a profile of ``probe --import``, or the all-reduce a
    ``dpscale probe`` timed (its ``sizes``) as one run over its world size; ``source`` says which.
    """

    intra: Link | None
    inter: Link | None
    devices_per_node: int
    collectives: tuple[tuple[Any, Link | None, Link | None], ...]
    runs: tuple[MeasuredRun, ...]
    source: str  # "nccl-tests log" or "probe"


def _assumed_free(entry: Any) -> bool:
    """A tier written as the node's links assumed free: ``{"assumed": "free"}``, or, as profiles and
    predictions once wrote it, a bandwidth of 1e18 B/s and no latency (read as not measured)."""
    if not isinstance(entry, dict):
        return False
    if entry.get("assumed") == "free":
        return True
    bandwidth, latency = entry.get("bandwidth"), entry.get("latency")
    numbers = [v for v in (bandwidth, latency) if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return len(numbers) == 2 and numbers[0] >= FREE_BANDWIDTH and numbers[1] == 0


def read_profile(path: str) -> Profile:
    """The profile at ``path`` as ``predict --network`` takes it (see :func:`profile_links`)."""
    from dpscale import _files
    from dpscale.collectives.link import Link  # numpy: loaded when a link is made
    from dpscale.records import MeasuredRun, ProbedLink

    unreadable = N_("a readable JSON profile from dpscale probe (%(reason)s)")
    with _files.open_text(
        path,
        field="network",
        most=_files.MAX_PROFILE_BYTES,
        missing=N_("a profile written by dpscale probe --out"),
        unreadable=unreadable,
    ) as stream:
        text = _files.read_text(stream, "network", str(path), most=_files.MAX_PROFILE_BYTES)
    data = _files.decode_json(text, "network", str(path), unreadable)

    def tier(name: str, within: Any = data) -> Link | None:
        entry = within.get(name) if isinstance(within, dict) else None
        if entry is None or _assumed_free(entry):
            return None
        reduces = entry.get("in_network", False) if isinstance(entry, dict) else False
        if not isinstance(reduces, bool):
            raise InvalidInput(
                "network",
                path,
                N_("a profile whose %(tier)s tier says in_network as true or false (got %(value)s)"),
                params={"tier": name, "value": repr(_files.shown(reduces))},
            )
        try:
            probed = ProbedLink.from_dict(entry)
        except InvalidInput as exc:  # a key missing, or not a number
            reason = (
                Message.of("no %(key)s", key=exc.field)
                if isinstance(exc, MissingInput)
                else Message.of("%(key)s is %(value)s", key=exc.field, value=repr(_files.shown(exc.value)))
            )
            raise InvalidInput(
                "network",
                path,
                N_("a profile whose %(tier)s tier has bandwidth and latency (%(reason)s)"),
                params={"tier": name, "reason": reason},
            ) from None
        try:
            return Link(probed.bandwidth, probed.latency, probed.efficiency, reduces)
        except InvalidInput as exc:  # a bandwidth of 0, an efficiency past 1
            place = Message.of("%(file)s, %(tier)s %(key)s", file=path, tier=name, key=exc.field)
            raise exc.as_given(place, exc.value) from None

    if not isinstance(data, dict) or (data.get("intra") is None and data.get("inter") is None):
        raise InvalidInput("network", path, "a profile with an intra or inter tier, as dpscale probe writes")
    per_node = data.get("devices_per_node", 1)
    if isinstance(per_node, bool) or not isinstance(per_node, int) or per_node < 1:
        raise InvalidInput("network", path, "a profile with devices_per_node, a whole number of at least 1")
    found = data.get("collectives") or {}
    if not isinstance(found, dict) or not set(found) <= {"all_reduce", "reduce_scatter", "all_gather"}:
        raise InvalidInput("network", path, "a profile whose collectives are all_reduce, reduce_scatter or all_gather")
    collectives = tuple((name, tier("intra", tiers), tier("inter", tiers)) for name, tiers in found.items())
    try:
        runs = tuple(MeasuredRun.from_dict(run) for run in data.get("runs") or ())
    except InvalidInput as exc:
        place = Message.of("%(file)s, runs %(key)s", file=path, key=exc.field)
        raise exc.as_given(place, exc.value) from None
    if not runs and isinstance(data.get("sizes"), list) and data["sizes"]:  # a dpscale probe's all-reduce
        shape = {"ranks": data.get("world_size"), "hosts": data.get("nodes"), "devices_per_host": per_node}
        timed = [[row.get("bytes"), row.get("seconds")] for row in data["sizes"] if isinstance(row, dict)]
        try:
            runs = (MeasuredRun.from_dict({"name": "probe", "collective": "all_reduce", **shape, "sizes": timed}),)
        except InvalidInput:  # a profile written by hand without its sizes as a probe writes them: links only
            runs = ()
    source = "nccl-tests log" if data.get("source") == "nccl-tests" else "probe"
    return Profile(tier("intra"), tier("inter"), per_node, collectives, runs, source)
