"""One rank of a 2-rank gloo DDP job under torch.profiler, its gradients all-reduced over the shaped link.

``python -m tests.testbed.traced_link OUT RANK PARAMS``, run once in each host's namespace (with
the host's GLOO_SOCKET_IFNAME, so that gloo talks over the veth): the ranks meet through a file
in ``OUT`` (namespaces share the file system), each writes its Chrome trace to
``OUT/traces/rank<RANK>.json``, and rank 0 writes ``OUT/job.json``: the parameters all-reduced
each step and their bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.gloo_exit import leave

STEPS = 6  # wait 1, warm-up 1, then 4 profiled steps
BATCH = 8  # samples per rank: compute small beside the link


def main() -> None:
    import torch
    import torch.distributed as dist

    from dpscale.measure.workloads import build, count

    out, rank, params = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{out}/rendezvous", rank=rank, world_size=2)
    model, x, y = build("mlp", params, BATCH, torch.device("cpu"))
    net = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.MSELoss()
    Path(out, "traces").mkdir(exist_ok=True)
    name = f"{out}/traces/rank{rank}.json"
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=STEPS - 2, repeat=1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=schedule,
        on_trace_ready=lambda prof: prof.export_chrome_trace(name),
    ) as prof:
        for _ in range(STEPS):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(net(x), y).backward()
            optimizer.step()
            prof.step()
    if rank == 0:
        gradients = count(model)
        Path(out, "job.json").write_text(json.dumps({"params": gradients, "bytes": 4 * gradients}))
    dist.barrier()
    dist.destroy_process_group()
    leave()  # not finalizing CPython: see tests/gloo_exit.py


if __name__ == "__main__":
    main()
