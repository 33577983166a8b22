"""Trace files of made-up runs whose breakdown is known, for the tests of /explain (page, API, browser)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

from tests.explain.test_explain import GLOO, op, step, write


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


def random_run(folder: Path, seed: int) -> list[Path]:
    """Two or three ranks of random steps: nested operators, annotations and collectives on two
    threads, sometimes GPU kernels, events out of order, and events the core must skip (a time
    that is text, a bool, a thread named by a list, a category that is a list)."""
    rng = random.Random(seed)  # noqa: S311 (made-up data, not secrets)
    folder.mkdir(parents=True, exist_ok=True)
    gpu = rng.random() < 0.3
    names = ["aten::mm", "aten::add", "gloo:all_reduce", "c10d::allreduce_", "Optimizer.step", "nccl:all_reduce"]
    cats = ["cpu_op", "user_annotation", "cpu_op", "operator", None]
    files = []
    for rank in range(rng.choice([2, 3])):
        events: list[Any] = []
        t = rng.uniform(0, 1e4)
        for number in range(3):
            length = rng.uniform(200, 2000)
            events.append(step(number + 1, round(t, 3), round(length, 3)))
            for _ in range(rng.randint(5, 25)):
                start = round(t + rng.uniform(-50, length), 3)
                event = op(
                    rng.choice(names),
                    start,
                    round(rng.uniform(0, length / 2), 3),
                    tid=rng.choice([10, 10, 11]),
                    cat=rng.choice(cats),  # type: ignore[arg-type]
                )
                if gpu and rng.random() < 0.4:
                    event["cat"] = "kernel"
                    event["name"] = rng.choice(["sm90_gemm", "ncclDevKernel_AllReduce"])
                    if "nccl" in event["name"]:
                        event["args"] = {
                            "In msg nelems": rng.randint(1, 10**6),
                            "dtype": rng.choice(["Float", "BFloat16"]),
                        }
                odd = rng.random()
                if odd < 0.03:
                    event["ts"] = "soon"
                elif odd < 0.05:
                    event["pid"] = [1]
                elif odd < 0.07:
                    event["cat"] = ["cpu_op"]
                elif odd < 0.08:
                    event["dur"] = True
                events.append(event)
            t += length + rng.uniform(0, 100)
        if rng.random() < 0.4:
            rng.shuffle(events)
        files.append(write(folder / f"rank{rank}.json", events, rank=rank, world=3))
    return files
