"""Slurm's view of a job step, read from srun's environment, and what torch.distributed needs from it.

``srun`` starts each task with ``SLURM_PROCID`` (its rank among the step's ``SLURM_NTASKS``),
``SLURM_LOCALID`` (among its node's tasks), ``SLURM_NODEID`` (its node among ``SLURM_NNODES``) and
the step's nodes as a compressed host list (``SLURM_STEP_NODELIST``, else ``SLURM_NODELIST`` or
``SLURM_JOB_NODELIST``: ``gpu[01-03,07],login2``). ``SLURM_STEP_ID`` tells a task of srun from the
batch script itself, which also sees the job's variables but is one process on the first node.

torch.distributed wants ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` and a
rendezvous at ``MASTER_ADDR:MASTER_PORT``: the step's first host (node 0) and ``MASTER_PORT`` as
given, else torchrun's 29500. Pure: the edges pass the environment in.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dpscale.errors import N_, InvalidInput, MissingInput

__all__ = ["DEFAULT_PORT", "MAX_HOSTS", "SlurmStep", "expand_nodelist"]

MAX_HOSTS = 65536  # hosts in one list: as many nodes as dpscale measure accepts
MAX_LIST = 64 * 2**10  # characters of a host list
DEFAULT_PORT = 29500  # torchrun's
_NAME = re.compile(r"[A-Za-z0-9._-]*")
_RANGE = re.compile(r"([0-9]{1,18})(?:-([0-9]{1,18}))?")
_LIST = N_("a Slurm host list such as node[01-04,07],login1 of at most %(most)s hosts")
_WHOLE = re.compile(r"[0-9]{1,9}")


Span = tuple[int, int, int]  # low, high, width (zero padding as the lower bound is written)


def _refused(text: str) -> InvalidInput:
    return InvalidInput("nodelist", text, _LIST, params={"most": MAX_HOSTS})


def _spans(inside: str, text: str) -> list[Span]:
    """``01-03,7`` as spans, each checked (a bound written backwards, or past MAX_HOSTS, is refused)."""
    spans = []
    for item in inside.split(","):
        found = _RANGE.fullmatch(item)
        if found is None:
            raise _refused(text)
        low, high = int(found.group(1)), int(found.group(2) or found.group(1))
        if high < low or high - low >= MAX_HOSTS:
            raise _refused(text)
        spans.append((low, high, len(found.group(1))))
    return spans


def _groups(entry: str, text: str) -> list[str | list[Span]]:
    """An entry's parts in order: plain text, and each ``[…]`` as its spans."""
    parts: list[str | list[Span]] = []
    rest = entry
    while rest:
        opening = rest.find("[")
        head = rest if opening < 0 else rest[:opening]
        if _NAME.fullmatch(head) is None:
            raise _refused(text)
        if head:
            parts.append(head)
        if opening < 0:
            break
        closing = rest.find("]", opening)
        if closing < 0:
            raise _refused(text)
        parts.append(_spans(rest[opening + 1 : closing], text))
        rest = rest[closing + 1 :]
    if not parts:
        raise _refused(text)
    return parts


def _count(parts: list[str | list[Span]], text: str) -> int:
    """Hosts an entry names, refused as soon as they pass MAX_HOSTS (nothing is expanded)."""
    total = 1
    for part in parts:
        if not isinstance(part, str):
            total *= sum(high - low + 1 for low, high, _ in part)
            if total > MAX_HOSTS:
                raise _refused(text)
    return total


def _names(part: str | list[Span]) -> Iterator[str]:
    if isinstance(part, str):
        yield part
        return
    for low, high, width in part:
        yield from (str(i).zfill(width) for i in range(low, high + 1))


def _entries(text: str) -> list[str]:
    """The list split at its commas outside brackets; brackets neither nested nor unbalanced."""
    entries, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            raise _refused(text)
        if char == "," and depth == 0:
            entries.append(text[start:i])
            start = i + 1
    if depth:
        raise _refused(text)
    entries.append(text[start:])
    return entries


def expand_nodelist(text: str) -> tuple[str, ...]:
    """Slurm's compressed host list, expanded: ``gpu[01-03,07],login2`` → gpu01 gpu02 gpu03 gpu07 login2.

    Zero padding follows the lower bound (``[08-10]`` → 08 09 10); brackets may follow one
    another (``r[1-2]n[1-2]``). A list of more than MAX_HOSTS hosts, or of more than MAX_LIST
    characters, is refused (InvalidInput) before anything is expanded.
    """
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_LIST:
        shown = text[:40] + "…" if isinstance(text, str) and len(text) > 40 else text
        raise InvalidInput("nodelist", shown, _LIST, params={"most": MAX_HOSTS})
    shown = text if len(text) <= 80 else text[:79] + "…"
    entries = [_groups(entry.strip(), shown) for entry in _entries(text.strip())]
    total = 0
    for parts in entries:
        total += _count(parts, shown)
        if total > MAX_HOSTS:
            raise _refused(shown)
    return tuple("".join(names) for parts in entries for names in itertools.product(*map(_names, parts)))


def _whole(env: Mapping[str, str], key: str, least: int, most: int) -> int:
    value = env.get(key)
    if value is None:
        raise MissingInput(key, N_("a whole number, as srun sets it"))
    if _WHOLE.fullmatch(value.strip()) is None or not least <= int(value) <= most:
        raise InvalidInput(
            key, value[:40], N_("a whole number from %(least)s to %(most)s"), params={"least": least, "most": most}
        )
    return int(value)


@dataclass(frozen=True)
class SlurmStep:
    """One task of an srun step: its rank, the step's tasks and nodes, and the step's hosts (node 0's first)."""

    rank: int
    world_size: int
    local_rank: int
    nodes: int
    node_rank: int
    hosts: tuple[str, ...]
    port: int = DEFAULT_PORT

    @property
    def master_addr(self) -> str:
        return self.hosts[0]

    @property
    def ranks_per_node(self) -> int:
        return self.world_size // self.nodes

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SlurmStep | None:
        """The task srun started, from its environment; None outside an srun step (no SLURM_STEP_ID or SLURM_PROCID).

        InvalidInput or MissingInput names the variable that is missing or out of place: a rank
        past the tasks, a node past the nodes, tasks not spread evenly over the nodes, fewer hosts
        than nodes.
        """
        if "SLURM_STEP_ID" not in env or "SLURM_PROCID" not in env:
            return None
        nodes = _whole(env, "SLURM_NNODES", 1, MAX_HOSTS)
        tasks = _whole(env, "SLURM_NTASKS", 1, MAX_HOSTS * 1024)
        if tasks % nodes:
            raise InvalidInput(
                "SLURM_NTASKS",
                tasks,
                N_("as many tasks on every node (a multiple of %(nodes)s)"),
                params={"nodes": nodes},
            )
        key = next((k for k in ("SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NODELIST") if k in env), None)
        if key is None:
            raise MissingInput("SLURM_STEP_NODELIST", N_("the step's host list, as srun sets it"))
        try:
            hosts = expand_nodelist(env[key])
        except InvalidInput as exc:
            raise exc.as_given(key, exc.value) from None
        if len(hosts) < nodes:
            raise InvalidInput(
                key, env[key][:80], N_("at least %(nodes)s hosts (SLURM_NNODES)"), params={"nodes": nodes}
            )
        port = _whole(env, "MASTER_PORT", 1, 65535) if "MASTER_PORT" in env else DEFAULT_PORT
        return cls(
            rank=_whole(env, "SLURM_PROCID", 0, tasks - 1),
            world_size=tasks,
            local_rank=_whole(env, "SLURM_LOCALID", 0, tasks // nodes - 1),
            nodes=nodes,
            node_rank=_whole(env, "SLURM_NODEID", 0, nodes - 1),
            hosts=hosts[:nodes],
            port=port,
        )

    def torch_env(self) -> dict[str, str]:
        """The variables torchrun would give this task: rank, world size, local rank, node, rendezvous."""
        return {
            "RANK": str(self.rank),
            "WORLD_SIZE": str(self.world_size),
            "LOCAL_RANK": str(self.local_rank),
            "LOCAL_WORLD_SIZE": str(self.ranks_per_node),
            "GROUP_RANK": str(self.node_rank),
            "MASTER_ADDR": self.master_addr,
            "MASTER_PORT": str(self.port),
        }

    def placement(self) -> tuple[int, int, str | None]:
        """Nodes, this node's rank and the rendezvous (host:port) for ``dpscale measure`` and ``probe``.

        dpscale starts each node's ranks itself (torchrun), so srun starts one dpscale per node;
        more tasks than nodes would start each rank several times and is refused. The advice
        works inside an allocation of more tasks (``salloc -n2``, ``sbatch --ntasks=8``), where
        srun takes the allocation's task count and ignores ``--ntasks-per-node=1`` alone.
        """
        if self.world_size != self.nodes:
            one = N_("one task per node, 1 task on 1 node (srun -n1 dpscale …): dpscale starts the node's ranks")
            several = N_(
                "one task per node, %(nodes)s tasks on %(nodes)s nodes "
                "(srun --ntasks=$SLURM_NNODES --ntasks-per-node=1 dpscale …): dpscale starts each node's ranks"
            )
            raise InvalidInput(
                "SLURM_NTASKS", self.world_size, one if self.nodes == 1 else several, params={"nodes": self.nodes}
            )
        endpoint = None if self.nodes == 1 else f"{self.master_addr}:{self.port}"
        return self.nodes, self.node_rank, endpoint
