"""Trace files of made-up runs whose breakdown is known, for the tests of /explain (page, API, browser)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from tests.test_explain import GLOO, op, step, write


def cpu_run(folder: Path) -> list[Path]:
    """Three ranks, four steps: nested operators, annotations, gloo's collective on its own thread.

    Rank 2 computes more each step and the others wait for it inside the all-reduce; rank 1's
    file is gzipped and its events out of order (read twice by the core); rank 0's holds events
    that cannot be read.
    """
    files = []
    for rank in range(3):
        events: list[Any] = []
        t = 1000.0 * (rank + 1)  # each rank's clock is its own
        for number in range(4):
            work = 300 + 80 * rank + 17 * number
            events += [
                step(number + 5, t, work + 260),
                op("aten::linear", t + 5, work / 2),
                op("aten::addmm", t + 12, work / 4),
                op("DistributedDataParallel.forward", t + 10 + work / 2, 60, cat="user_annotation"),
                op("aten::relu", t + 20 + work / 2, 25.5),
                op("aten::mul", t + 90 + work / 2, work / 2 - 100),
                op("gloo:all_reduce", t + work - 40, 290 - 8 * rank, tid=GLOO, cat="user_annotation"),
            ]
            t += work + 270
        if rank == 0:
            events += [op("aten::bad", "soon", 5), {"ph": "X", "name": ["x"]}, 7]
        if rank == 1:
            events.reverse()
        path = write(folder / f"rank{rank}.json", events, rank=rank, world=3)
        if rank == 1:
            zipped = folder / "rank1.json.gz"
            zipped.write_bytes(gzip.compress(path.read_bytes()))
            path.unlink()
            path = zipped
        files.append(path)
    return files


def gpu_run(folder: Path) -> list[Path]:
    """Two ranks of kernels and sized NCCL kernels (a bandwidth), without ranks in the files."""
    files = []
    for rank in range(2):
        events: list[Any] = []
        for number in range(3):
            t = 5000.0 * number
            events += [
                step(number, t, 4000),
                op(f"ProfilerStep#{number}", t + 10, 3900, tid=7, cat="gpu_user_annotation"),
                op("sm90_gemm", t + 100, 1800 + 300 * rank, tid=7, cat="kernel"),
                op("elementwise", t + 2000 + 300 * rank, 200, tid=7, cat="kernel"),
                op(
                    "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                    t + 1500,
                    1700,
                    tid=8,
                    cat="kernel",
                    **{"In msg nelems": 250_000, "dtype": "Float"},
                ),
            ]
        files.append(write(folder / f"gpu{rank}.json", events, rank=None))
    return files
