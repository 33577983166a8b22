"""One rank of a measured run; torchrun starts one per device (``python -m dpscale.measure.worker``).

Internal: ``dpscale measure`` and ``dpscale probe`` start it, through torchrun, and turn what it
writes (raw step or all-reduce times, not a record ``dpscale fit`` reads) into records and
profiles; its options and output may change from one version to the next. Run those commands,
under srun too, rather than this. Started by srun all the same (one task per device, no
torchrun), it takes its rank, world size, local rank and rendezvous from Slurm's variables
(:class:`dpscale.slurm.SlurmStep`). A path it cannot use (``--status`` not an existing folder,
``--result`` in a missing one) or a Slurm variable out of place is refused in one line on stderr,
exit status 2, before the rank joins any other.

Two jobs: ``train`` (a synthetic workload under DDP or PyTorch's FSDP, its step times and each
rank's peak memory gathered on rank 0) and ``probe``
(all-reduce times over message sizes). Rank 0 writes the result as JSON to ``--result``; every
rank notes in ``--status`` when it has joined and how many steps it has done, so that the launcher
can say which rank failed or hung, and its pid, so that the launcher can end it if torchrun could
not. A thread watches torchrun, the launcher and the run's folder, and ends the rank once any of
them is gone (see :mod:`dpscale.measure._lifeline`).

``DPSCALE_FAULT`` injects faults for the launcher's tests: ``crash:RANK:STEP`` exits with status 3
at that step, ``hang:RANK:STEP`` stops there for good, ``absent:RANK`` never joins.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn

import torch
import torch.distributed as dist
from torch import nn

from dpscale.errors import DpscaleError, InvalidInput
from dpscale.measure import _lifeline
from dpscale.measure.cpus import usable_cpus
from dpscale.measure.launch import clip
from dpscale.measure.workloads import build, count
from dpscale.slurm import SlurmStep


def _fault(rank: int, step: int | None) -> None:
    spec = os.environ.get("DPSCALE_FAULT", "")
    if not spec:
        return
    kind, _, rest = spec.partition(":")
    target, _, at = rest.partition(":")
    if int(target or -1) != rank:
        return
    if kind == "absent" and step is None:
        time.sleep(3600)
    if step is not None and at and int(at) == step:
        if kind == "crash":
            os._exit(3)
        if kind == "hang":
            time.sleep(3600)


def _note(status: Path, rank: int, name: str, value: object) -> None:
    (status / f"{name}-{rank}").write_text(str(value), encoding="utf-8")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _pieces(module: nn.Module) -> list[nn.Module]:
    """The blocks FSDP shards one by one: each layer holding weights (a transformer's layer whole)."""
    out: list[nn.Module] = []
    for child in module.children():
        has_weights = any(p.requires_grad for p in child.parameters())
        nested = any(any(p.requires_grad for p in c.parameters()) for c in child.children())
        if has_weights and (isinstance(child, nn.TransformerEncoderLayer) or not nested):
            out.append(child)
        elif nested:
            out.extend(_pieces(child))
    return out


def _wrapped(model: nn.Module, sharding: str, world: int, device: torch.device) -> nn.Module:
    """``model`` kept in step as ``sharding`` says: DDP, or FSDP (fully_shard) per block and whole.

    zero3 reshards each block's weights after its forward pass (FULL_SHARD), zero2 keeps them
    gathered until the backward pass is done (SHARD_GRAD_OP), hybrid shards inside a node and
    replicates across nodes (HSDP, a 2-D device mesh).
    """
    if world == 1:
        return model
    if sharding == "ddp":
        return nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    if sharding == "hybrid":
        local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
        mesh = init_device_mesh(device.type, (world // local, local), mesh_dim_names=("replicate", "shard"))
    else:
        mesh = init_device_mesh(device.type, (world,))
    reshard = sharding != "zero2"
    for piece in _pieces(model):
        fully_shard(piece, mesh=mesh, reshard_after_forward=reshard)
    fully_shard(model, mesh=mesh, reshard_after_forward=reshard)
    return model


def _peak_memory(device: torch.device) -> float:
    """Bytes this rank held at most: the allocator's peak on a GPU, the resident size on a CPU."""
    if device.type == "cuda":
        return float(torch.cuda.max_memory_allocated(device))
    import resource

    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux counts kilobytes


def train(args: argparse.Namespace, rank: int, world: int, device: torch.device, status: Path) -> dict[str, Any] | None:
    model, x, y = build(args.workload, args.params, args.batch, device)
    params = count(model)
    net = _wrapped(model, args.sharding, world, device)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    times: list[float] = []
    for step in range(args.warmup + args.steps):
        _fault(rank, step)
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss_fn(net(x), y).backward()
        optimizer.step()
        _sync(device)
        elapsed = time.perf_counter() - start
        if step >= args.warmup:
            times.append(elapsed)
        _note(status, rank, "step", step + 1)
    gathered: list[Any] = [None] * world
    mine = (times, _peak_memory(device))
    if world > 1:
        dist.all_gather_object(gathered, mine)
    else:
        gathered = [mine]
    if rank != 0:
        return None
    return {
        "params": params,
        "step_times": [rank_times for rank_times, _ in gathered],
        "peak_memory": [peak for _, peak in gathered],
        "sharding": args.sharding,
    }


def _sweep_sizes(
    args: argparse.Namespace, rank: int, world: int, device: torch.device, status: Path, group: Any, members: list[int]
) -> list[dict[str, float]]:
    """All-reduce times over message sizes within ``group`` (ranks not in it only keep step)."""
    results = []
    size = 8
    step = 0
    inside = rank in members
    while size <= args.max_bytes:
        tensor = torch.ones(max(1, size // 4), dtype=torch.float32, device=device)
        samples = []
        for i in range(args.warmup + args.reps):
            _fault(rank, step)
            step += 1
            dist.barrier()
            _sync(device)
            start = time.perf_counter()
            if inside:
                dist.all_reduce(tensor, group=group)
            _sync(device)
            if i >= args.warmup and inside:
                samples.append(time.perf_counter() - start)
        samples.sort()
        median = samples[len(samples) // 2] if samples else 0.0
        slowest = [0.0] * world
        dist.all_gather_object(slowest, median)  # the collective ends when the last rank is done
        results.append({"bytes": tensor.numel() * 4, "seconds": max(slowest[r] for r in members)})
        _note(status, rank, "step", step)
        size *= 4
    return results


def probe(args: argparse.Namespace, rank: int, world: int, device: torch.device, status: Path) -> dict[str, Any] | None:
    everyone = list(range(world))
    result: dict[str, Any] = {"sizes": _sweep_sizes(args, rank, world, device, status, None, everyone)}
    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    nodes = world // max(1, local)
    if nodes > 1 and local > 1:
        # Each tier alone: every node's ranks among themselves (at once, as a job's first step
        # does), then one rank per node across the network. Every rank creates every group.
        node_groups = [list(range(n * local, (n + 1) * local)) for n in range(nodes)]
        handles = [dist.new_group(members) for members in node_groups]
        leaders = [members[0] for members in node_groups]
        across = dist.new_group(leaders)
        mine = rank // local
        result["intra_sizes"] = _sweep_sizes(args, rank, world, device, status, handles[mine], node_groups[mine])
        result["inter_sizes"] = _sweep_sizes(args, rank, world, device, status, across, leaders)
        result["local_world_size"] = local
    return result if rank == 0 else None


PROG = "dpscale.measure.worker"
_INTERNAL = "dpscale measure and dpscale probe start this worker; run them instead"


class _Parser(argparse.ArgumentParser):
    """argparse, its complaint in one line (exit status 2) rather than after the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} ({_INTERNAL})\n")


def _refused(exc: DpscaleError) -> NoReturn:
    print(f"{PROG}: {exc} ({_INTERNAL})", file=sys.stderr)
    raise SystemExit(2)


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def _check_paths(args: argparse.Namespace) -> None:
    """``--status`` an existing folder and ``--result`` a file in one, both writable: else InvalidInput.

    Checked before the rank joins the others: found out later, a bad path would stop every rank
    with a traceback, or lose a finished measurement.
    """
    status, result = Path(args.status), Path(args.result)
    if not args.status.strip() or not _writable(status):
        raise InvalidInput("--status", clip(args.status), "an existing folder this rank can write to")
    if not args.result.strip() or result.is_dir():
        raise InvalidInput("--result", clip(args.result), "a file path, not a folder")
    if not _writable(result.parent):
        raise InvalidInput("--result", clip(args.result), "a file in an existing folder this rank can write to")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog=PROG, description=f"One rank of a measured run. Internal: {_INTERNAL}.")
    parser.add_argument("job", choices=["train", "probe"])
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--workload", default="mlp")
    parser.add_argument("--sharding", default="ddp", choices=["ddp", "zero2", "zero3", "hybrid"])
    parser.add_argument("--params", type=float, default=1e6)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--max-bytes", type=int, default=2**26)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--result", required=True)
    parser.add_argument("--status", required=True)
    args = parser.parse_args(argv)
    try:
        _check_paths(args)
        step = None if "RANK" in os.environ else SlurmStep.from_env(os.environ)  # srun, not torchrun
    except DpscaleError as exc:
        _refused(exc)
    if step is not None:  # Slurm says who is who
        os.environ.update(step.torch_env())
    _lifeline.watch()
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    status = Path(args.status)
    _note(status, rank, "pid", os.getpid())
    torch.set_num_threads(int(os.environ.get("DPSCALE_THREADS", "1")))
    _fault(rank, None)
    dist.init_process_group(args.backend, timeout=timedelta(seconds=args.timeout))
    _note(status, rank, "joined", time.time())
    device = torch.device("cuda", local_rank) if args.backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    job = train if args.job == "train" else probe
    result = job(args, rank, world, device, status)
    written: InvalidInput | None = None
    if result is not None:
        result.update(
            world_size=world,
            nodes=world // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", world))),
            backend=args.backend,
            device_type=device.type,
            device_name=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            torch=torch.__version__,
            threads_per_rank=torch.get_num_threads(),
            cpus_usable=usable_cpus(),
        )
        try:
            Path(args.result).write_text(json.dumps(result), encoding="utf-8")
        except OSError as exc:  # the folder went away or the disk filled up: said in one line, below
            written = InvalidInput("--result", clip(args.result), f"a file that can be written ({exc.strerror})")
    dist.barrier()
    if written is not None:
        print(f"{PROG}: {written}", file=sys.stderr)
    # Every rank is done and the result is on disk (or said not to be). Leave without tearing the process group
    # down or finalizing CPython: a gloo worker thread that takes the GIL after finalization began is ended by
    # pthread_exit where C++ may not unwind, std::terminate aborts the rank (SIGABRT), and a measurement that
    # completed must not be reported as failed for it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if written is None else 2)


if __name__ == "__main__":
    sys.exit(main())
