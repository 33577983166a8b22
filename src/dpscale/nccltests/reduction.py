"""In-network reduction as an nccl-tests log shows it: a bus bandwidth no GPU's own links carry.

nccl-tests report busbw = algbw·2(n−1)/n for an all-reduce (doc/PERFORMANCE.md): the rate a
ring would need on each link. Neither a ring nor a tree can beat the line rate of the GPU's
NVLink with it, so a run that does was reduced in the switches: NVLink SHARP in an NVSwitch node
(NCCL's NVLS) when it ran on one host; across hosts, SHARP in the network (CollNet) or NVLS in
each node with a tree across them, which a log cannot tell apart and which is said of the
network tier. The fit then prices that tier with in-network reduction
(:mod:`dpscale.collectives.innetwork`), and the profile says so (``"in_network": true`` in the tier).

The line rates are NVIDIA's, per direction (half the datasheets' "NVLink bandwidth", which counts
both): V100 SXM2 300 GB/s, A100 SXM4 600 GB/s, H100 and H200 SXM 900 GB/s, B200 1.8 TB/s. A GPU
not listed, or a PCIe card, is not judged: its run is fitted as rings and trees.
"""

from __future__ import annotations

from pathlib import PurePath

from dpscale.messages import Message
from dpscale.nccltests.logfiles import Log

__all__ = ["LINE_RATES", "line_rate", "reduced_tiers"]

# NVLink per direction, bytes/s, by the name nccl-tests print (the first listed that the name holds)
LINE_RATES: tuple[tuple[str, float], ...] = (
    ("B200", 900e9),
    ("H200", 450e9),
    ("H100", 450e9),
    ("A100", 300e9),
    ("V100", 150e9),
)


def line_rate(device_name: str | None) -> float | None:
    """The NVLink line rate per direction of the GPU named ``device_name`` (None: not known, or a PCIe card)."""
    if not device_name or "PCIE" in device_name.upper():
        return None
    return next((rate for name, rate in LINE_RATES if name in device_name.upper()), None)


def reduced_tiers(logs: tuple[Log, ...] | list[Log]) -> tuple[set[str], tuple[Message, ...]]:
    """The tiers (``intra``, ``inter``) whose all-reduce ran above the GPU's line rate, and a note for each run."""
    tiers: set[str] = set()
    notes = []
    for log in logs:
        rate = line_rate(log.device_name)
        if log.collective != "all_reduce" or rate is None or not log.rows:
            continue
        best = max(row.busbw for row in log.rows)
        if best <= rate:
            continue
        tier = "intra" if log.hosts == 1 else "inter"
        tiers.add(tier)
        where = (
            Message.of("NVLink SHARP in the node")
            if tier == "intra"
            else Message.of("in the network: SHARP, or NVLink SHARP in each node with a tree across them")
        )
        notes.append(
            Message.of(
                "%(file)s: a bus bandwidth of %(busbw)s GB/s, above the %(rate)s GB/s of the %(gpu)s's NVLink: "
                "reduced in the switches (%(where)s), and fitted so",
                file=PurePath(log.name).name,
                busbw=round(best / 1e9, 1),
                rate=round(rate / 1e9, 1),
                gpu=log.device_name,
                where=where,
            )
        )
    return tiers, tuple(notes)
