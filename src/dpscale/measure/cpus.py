"""The CPUs this process may use: its affinity, and its cgroup's CPU quota where one is set.

``os.cpu_count()`` counts the machine's CPUs, not this process's share of them. Under srun with
CPU binding (``task/affinity``, ``--cpus-per-task``), ``taskset`` or ``numactl``, the scheduler runs
the process on a few of them only (its affinity); under a cgroup quota (Slurm's ``task/cgroup``,
``docker --cpus``, a Kubernetes limit) it may run on any of them, but for a share of the time. A
rank's threads counted from the machine would then share cores and skew the efficiency measured,
so the thread count and the "ranks share cores" warning start from :func:`usable_cpus`.

Nothing here needs torch; nothing read here is trusted: a file missing, unreadable or not as the
kernel writes it counts as no limit.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

__all__ = ["usable_cpus"]

_ESCAPE = re.compile(r"\\([0-7]{3})")  # mountinfo writes a space in a path as \040


def _affinity() -> int:
    """CPUs the scheduler may run this process on (the machine's where the platform cannot say)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no sched_getaffinity outside Linux
        return os.cpu_count() or 1


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _mounts(root: Path) -> Iterator[tuple[str, str, str, set[str]]]:
    """Each cgroup mount as (file system, root inside the hierarchy, mount point, controllers)."""
    for line in (_read(root / "proc/self/mountinfo") or "").splitlines():
        mine, dash, theirs = line.partition(" - ")
        fields, after = mine.split(), theirs.split()
        if not dash or len(fields) < 5 or len(after) < 3 or after[0] not in ("cgroup", "cgroup2"):
            continue
        inside, point = (_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), f) for f in fields[3:5])
        yield after[0], inside, point, set(after[2].split(","))


def _folders(root: Path, inside: str, point: str, own: str) -> Iterator[Path]:
    """This process's cgroup folder under a mount, then each folder above it up to the mount point.

    A limit set on any of them holds for the process; the cgroup's path is told relative to the
    hierarchy, the mount shows the hierarchy from ``inside`` on (a container sees its own part).
    """
    top = root / point.lstrip("/")
    path, base = PurePosixPath(own), PurePosixPath(inside)
    relative = path.relative_to(base) if path.is_relative_to(base) else PurePosixPath()
    parts = [part for part in relative.parts if part not in ("", ".", "..", "/")]
    for depth in range(len(parts), -1, -1):
        yield top.joinpath(*parts[:depth])


def _quota(text: str | None, period_text: str | None = None) -> float | None:
    """CPUs' worth of time a quota allows: ``200000 100000`` (v2 cpu.max) or the v1 pair; None for no limit."""
    if text is None:
        return None
    words = text.split() if period_text is None else [text.strip(), period_text.strip()]
    if len(words) != 2:
        return None
    with contextlib.suppress(ValueError):
        quota, period = int(words[0]), int(words[1])  # "max" (v2) and -1 (v1) mean no limit
        if quota > 0 and period > 0:
            return quota / period
    return None


def _cgroup_cpus(root: Path) -> float | None:
    """The tightest CPU quota over this process's cgroups (v2 ``cpu.max``, v1 CFS), None where none is set."""
    own: dict[str, str] = {}  # "" for the v2 hierarchy, else each v1 controller
    for line in (_read(root / "proc/self/cgroup") or "").splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            own[""] = path
        for controller in filter(None, controllers.split(",")):
            own[controller] = path
    found: list[float] = []
    for kind, inside, point, options in _mounts(root):
        if kind == "cgroup2" and "" in own:
            limits = (_quota(_read(folder / "cpu.max")) for folder in _folders(root, inside, point, own[""]))
        elif kind == "cgroup" and "cpu" in options and "cpu" in own:
            limits = (
                _quota(_read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us"))
                for folder in _folders(root, inside, point, own["cpu"])
            )
        else:
            continue
        found.extend(limit for limit in limits if limit is not None)
    return min(found, default=None)


def usable_cpus(root: Path = Path("/")) -> int:
    """How many CPUs this process may use: its affinity, cut to its cgroup's CPU quota (at least 1).

    A quota of 1.5 CPUs' time counts as 1: a second thread would be throttled half the time.
    ``root`` is where ``/proc`` and the cgroup mounts are read from (another only in tests).
    """
    cpus = _affinity()
    quota = _cgroup_cpus(root)
    if quota is not None:
        cpus = min(cpus, math.floor(quota))
    return max(1, cpus)
