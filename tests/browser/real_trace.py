"""A real torch.profiler trace of a few training steps with gloo all-reduces (one rank), for the parity test.

Run apart (``python -m tests.browser.real_trace OUT.json``): the profiler is not at ease in a
process that also drives a browser.
"""

from __future__ import annotations

import sys

import torch
import torch.distributed as dist

from tests.gloo_exit import leave


def main(out: str) -> None:
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        schedule = torch.profiler.schedule(wait=0, warmup=1, active=3, repeat=1)
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=schedule,
            on_trace_ready=lambda prof: prof.export_chrome_trace(out),
        ) as prof:
            for _ in range(4):
                model(torch.randn(32, 64)).sum().backward()
                for p in model.parameters():
                    assert p.grad is not None
                    dist.all_reduce(p.grad)
                prof.step()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
    leave()  # the group destroyed, the trace written: not finalizing CPython (see tests/gloo_exit.py)
