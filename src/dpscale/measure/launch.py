"""Where and how a measured run starts: :class:`Launch`, checked when made, and torchrun's command line.

Beside it, the checks measure and probe share, made before any rank starts: a bounded whole
number (:func:`bounded`) and the file a run writes (:func:`writable`).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpscale._validate import WHOLE_NUMBER
from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.measure.cpus import usable_cpus

__all__ = [
    "MAX_NODES",
    "MAX_RANKS_PER_NODE",
    "MAX_STEPS",
    "MAX_THREADS",
    "MAX_TIMEOUT",
    "MIN_TIMEOUT",
    "RANGE",
    "Launch",
    "bounded",
    "clip",
    "writable",
]

MAX_RANKS_PER_NODE = 1024  # past any node; torchrun would start every one of them
MAX_NODES = 65536
MAX_THREADS = 4096  # CPU threads per rank
MAX_STEPS = 100_000  # timed steps, warm-up steps, all-reduces per size
MIN_TIMEOUT = 1.0  # seconds
MAX_TIMEOUT = 24 * 3600.0
DEFAULT_RDZV_PORT = 29400  # torchrun's, for an endpoint given without a port

RANGE = N_("a whole number from %(least)s to %(most)s")
_RANKS = N_("a whole number of ranks per node, from 1 to %(most)s")
_OUTPUT = N_("a file path")

_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9._-]*)"
_ENDPOINT = re.compile(rf"{_HOST}(?::(\d{{1,5}}))?")
_ADDRESS = re.compile(rf"{_HOST}|[0-9A-Fa-f:.]+")


def _counted(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _crowded(ranks: int, threads: int, cpus: int) -> str:
    """The warning where ``ranks`` ranks of ``threads`` threads each outnumber the ``cpus`` this process may use."""
    return (
        f"{_counted(ranks, 'rank', 'ranks')} of {_counted(threads, 'thread', 'threads')} on "
        f"the {_counted(cpus, 'CPU', 'CPUs')} this process may use (its affinity and cgroup quota): "
        f"{'ranks share' if ranks > 1 else 'its threads share'} cores, slowing them and the measurement"
    )


def clip(text: str, most: int = 80) -> str:
    """``text`` cut short for a message."""
    return text if len(text) <= most else text[: most - 1] + "…"


def bounded(name: str, value: Any, least: int, most: int, accepted: str = RANGE) -> int:
    """``value`` if it is a whole number from ``least`` to ``most``, else InvalidInput naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise InvalidInput(name, value, accepted, params={"least": least, "most": most})
    return value


def writable(name: str, out: str | os.PathLike[str]) -> Path:
    """``out`` checked before any rank starts: a file that can be written, in a folder that is or can be made.

    A folder, a file one may not write, or a path through a file or an unwritable folder would
    otherwise fail only once the measurement is done, losing it.
    """
    text = out if isinstance(out, str) else os.fspath(out) if isinstance(out, os.PathLike) else None
    if not isinstance(text, str) or not text.strip() or "\0" in text:
        raise InvalidInput(name, clip(text) if isinstance(text, str) else out, _OUTPUT)
    shown = clip(text)
    path = Path(text)
    if path.is_dir():
        raise InvalidInput(name, shown, N_("a file path, not a folder"))
    if path.exists():
        if not os.access(path, os.W_OK):
            raise InvalidInput(name, shown, N_("a file you can write to"))
        return path
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # the folders that are missing are made
        folder = folder.parent
    if not folder.is_dir():
        raise InvalidInput(
            name, shown, N_("a path through folders (%(part)s is a file)"), params={"part": clip(str(folder))}
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(
            name,
            shown,
            N_("a file in a folder you can write to (not %(folder)s)"),
            params={"folder": clip(str(folder))},
        )
    return path


def _address(name: str, value: Any, pattern: re.Pattern[str], accepted: str) -> None:
    text = value if isinstance(value, str) else None
    match = pattern.fullmatch(text) if text is not None and len(text) <= 255 else None
    port = match.groups()[0] if match is not None and match.groups() else None
    if match is None or (port is not None and not 1 <= int(port) <= 65535):
        raise InvalidInput(name, clip(value) if isinstance(value, str) else value, accepted)


@dataclass(frozen=True)
class Launch:
    """Where and how to run: ranks per node, torchrun's multi-node flags, backend, limits.

    Checked when made (InvalidInput): 1 to :data:`MAX_RANKS_PER_NODE` ranks per node, 1 to
    :data:`MAX_NODES` nodes with a node rank among them and a rendezvous endpoint when there are
    several, a known backend, a timeout from 1 s to 24 h and 1 to :data:`MAX_THREADS` threads.
    """

    nproc_per_node: int = 1
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: str | None = None
    rdzv_id: str = "dpscale"
    local_addr: str | None = None  # this node's address, as the others reach it (torchrun's --local-addr)
    backend: str = "auto"
    timeout: float = 120.0
    threads: int | None = None
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        bounded("nproc", self.nproc_per_node, 1, MAX_RANKS_PER_NODE, _RANKS)
        if isinstance(self.nnodes, bool) or not isinstance(self.nnodes, int) or self.nnodes < 1:
            raise InvalidInput("nnodes", self.nnodes, WHOLE_NUMBER, params={"minimum": 1})
        bounded("nnodes", self.nnodes, 1, MAX_NODES)
        if self.nnodes > 1 and self.rdzv_endpoint is None:
            raise MissingInput("rdzv_endpoint", N_("host:port of node 0, with --nnodes above 1"))
        rank = self.node_rank
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < self.nnodes:
            raise InvalidInput("node_rank", rank, N_("a rank from 0 to %(last)s"), params={"last": self.nnodes - 1})
        if self.rdzv_endpoint is not None:
            _address("rdzv_endpoint", self.rdzv_endpoint, _ENDPOINT, N_("host:port of node 0, such as 10.0.0.1:29500"))
        if self.local_addr is not None:
            _address("local_addr", self.local_addr, _ADDRESS, N_("a host name or an IP address, such as 10.0.0.2"))
        if self.backend not in ("auto", "gloo", "nccl"):
            raise InvalidInput("backend", self.backend, N_("auto, gloo or nccl"))
        if self.threads is not None:
            bounded("threads", self.threads, 1, MAX_THREADS)
        timeout = self.timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT
        ):
            raise InvalidInput(
                "timeout",
                timeout,
                N_("a duration from %(least)s s to %(most)s h"),
                params={"least": f"{MIN_TIMEOUT:g}", "most": f"{MAX_TIMEOUT / 3600:g}"},
            )

    @property
    def world_size(self) -> int:
        return self.nproc_per_node * self.nnodes

    def resolved_backend(self) -> str:
        import torch

        if self.backend == "nccl" and not torch.cuda.is_available():
            raise InvalidInput("backend", "nccl", "gloo on a machine without a CUDA GPU (NCCL needs one)")
        if self.backend == "nccl" and self.nproc_per_node > torch.cuda.device_count():
            raise InvalidInput(
                "nproc",
                self.nproc_per_node,
                N_("at most %(gpus)s ranks per node, one per GPU"),
                params={"gpus": torch.cuda.device_count()},
            )
        if self.backend == "auto":
            return "nccl" if torch.cuda.is_available() and self.nproc_per_node <= torch.cuda.device_count() else "gloo"
        return self.backend

    def threads_per_rank(self, ranks: int | None = None, cpus: int | None = None) -> int:
        """CPU threads for each rank: ``threads`` as given, else the usable CPUs shared among the ranks.

        The CPUs are those this process may use (:func:`~dpscale.measure.cpus.usable_cpus`: its
        affinity and cgroup quota, as srun or a container set them), not the machine's; ``ranks``
        is the most ranks a node runs (this launch's by default), ``cpus`` a count already made.
        """
        if self.threads is not None:
            return self.threads
        return max(1, (usable_cpus() if cpus is None else cpus) // (ranks or self.nproc_per_node))

    def settled(self, ranks: int | None = None) -> Launch:
        """This launch with its threads per rank fixed for up to ``ranks`` ranks per node, warned about once.

        Fixed before the runs, so that a "device" on a CPU is the same share of the CPUs at every
        size (the 1-rank run is one device, not the whole machine). Where the ranks' threads
        outnumber the usable CPUs, a RuntimeWarning says so: they share cores and every rank,
        hence the efficiency measured, is slowed.
        """
        most = ranks or self.nproc_per_node
        cpus = usable_cpus()
        threads = self.threads_per_rank(most, cpus)
        if most * threads > cpus:
            warnings.warn(_crowded(most, threads, cpus), RuntimeWarning, stacklevel=3)
        return dataclasses.replace(self, threads=threads)

    def _endpoint(self) -> str:
        """The rendezvous as host:port, the port c10d's default where none is given (static needs one)."""
        endpoint = str(self.rdzv_endpoint)
        found = _ENDPOINT.fullmatch(endpoint)
        return endpoint if found is not None and found.group(1) else f"{endpoint}:{DEFAULT_RDZV_PORT}"

    def torchrun(self, logs: Path) -> list[str]:
        """torchrun's command line (``python -m torch.distributed.run``), its own files going to ``logs``."""
        argv = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            f"--nproc-per-node={self.nproc_per_node}",
            f"--log-dir={logs}",
        ]
        if self.nnodes == 1 and self.rdzv_endpoint is None:
            return [*argv, "--standalone"]
        local = [f"--local-addr={self.local_addr}"] if self.local_addr else []
        return [
            *argv,
            *local,
            f"--nnodes={self.nnodes}",
            f"--node-rank={self.node_rank}",
            # The static rendezvous keeps each node's rank: node 0 hosts the store at the endpoint
            # and its ranks are 0 to nproc - 1. The c10d one ignores --node-rank and numbers the
            # nodes by host name, then process id: node 1 could become node 0, its launcher then
            # holding the result while node 0's found none ("rank 0 never joined").
            "--rdzv-backend=static",
            f"--rdzv-endpoint={self._endpoint()}",
            f"--rdzv-id={self.rdzv_id}",
            f"--rdzv-conf=timeout={max(1, int(self.timeout))}",
        ]
