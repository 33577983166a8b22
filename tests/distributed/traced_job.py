"""A 2-rank gloo job under torch.profiler, rank 1 given extra work each step.

``python -m tests.distributed.traced_job OUT ddp|fsdp``: each rank writes its Chrome trace
(``OUT/traces/rank<r>.json``, rank 1's gzipped) and, in ``OUT/timed<r>.json``, what it timed itself:
each profiled step's wall time and the extra work's, for the test to hold the explanation against.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.gloo_exit import leave

STEPS = 6  # wait 1, warm-up 1, then 4 profiled steps
EXTRA_SECONDS = 0.15  # of operators rank 1 runs alone each step, before its backward's collectives


def _extra_work() -> float:
    """Matrix products, one after another, until EXTRA_SECONDS of wall time have passed.

    Held by the clock, not by a count of operations: however busy the machine, rank 1 spends at
    least this long in operators each step before it joins the step's collectives, and rank 0,
    whose own work is a few milliseconds, waits for it there. The test's claims (rank 1 is the
    slowest, rank 0 waits about this long) hold by construction rather than by how fast a core is.
    """
    import torch

    start = time.perf_counter()
    a = torch.randn(256, 256)
    while time.perf_counter() - start < EXTRA_SECONDS:
        a = torch.tanh(a @ a)
    return time.perf_counter() - start


def _rank(rank: int, out: str, kind: str) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{out}/rendezvous", rank=rank, world_size=2)
    torch.manual_seed(0)
    model: torch.nn.Module = torch.nn.Sequential(
        torch.nn.Linear(256, 512),
        torch.nn.ReLU(),
        torch.nn.Linear(512, 512),
        torch.nn.ReLU(),
        torch.nn.Linear(512, 256),
    )
    if kind == "fsdp":
        from torch.distributed.fsdp import fully_shard

        for layer in (model[0], model[2], model[4]):
            fully_shard(layer)
        fully_shard(model)
    else:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256)
    extra: list[float] = []
    steps: list[float] = []
    name = f"{out}/traces/rank{rank}.json" + (".gz" if rank == 1 else "")
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=STEPS - 2, repeat=1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=schedule,
        on_trace_ready=lambda prof: prof.export_chrome_trace(name),
    ) as prof:
        start = time.perf_counter()
        for _ in range(STEPS):
            if rank == 1:
                extra.append(_extra_work())
            loss = model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            steps.append(time.perf_counter() - start)  # as ProfilerStep#N spans: from one prof.step() to the next
            prof.step()  # the last one writes the trace: not part of any step
            start = time.perf_counter()
    Path(f"{out}/timed{rank}.json").write_text(json.dumps({"steps": steps[2:], "extra": extra[2:]}))
    dist.destroy_process_group()
    leave()  # not finalizing CPython: see tests/gloo_exit.py


def main() -> None:
    import torch.multiprocessing as mp

    out, kind = sys.argv[1], sys.argv[2]
    Path(out, "traces").mkdir(exist_ok=True)
    mp.spawn(_rank, args=(out, kind), nprocs=2, join=True)


if __name__ == "__main__":
    main()
