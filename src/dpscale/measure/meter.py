"""``Meter``: time the steps of your own training loop on every rank, and write the record.

    from dpscale import Meter

    meter = Meter("runs.jsonl", batch=32)
    for batch in loader:
        with meter.step():
            train_step(batch)
    meter.close()          # gathers every rank's times (torch.distributed) and rank 0 writes

It adds one clock read and one list append per step (and one device synchronisation on a GPU,
so that the time is the step's and not the launch's). Records are those of ``dpscale measure``.

Where the time goes, without the profiler: ``meter.watch(ddp_model)`` replaces DDP's gradient
all-reduce by the same all-reduce timed (a communication hook: two clock reads per bucket). Each
step then also records the time some bucket's all-reduce was in flight (communication) and the
time from the last bucket's launch, when the backward pass has made its last gradients, to the
last bucket's end (exposed communication: nothing left to compute behind it). The record gains
their means per step over the ranks, ``communication_time`` and ``exposed_communication``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpscale import _validate, records
from dpscale.measure import summary
from dpscale.records import Measurement

__all__ = ["Meter"]


class Meter:
    """Step timer for a data-parallel loop; ``warmup`` first steps are left out."""

    def __init__(self, out: str | Path, *, batch: int, warmup: int = 5, sync: bool = True, **extra: Any) -> None:
        self.out = Path(out)
        self.batch = _validate.whole("batch", batch)
        self.warmup = _validate.whole("warmup", warmup, minimum=0)
        self.sync = sync
        self.extra = extra
        self.times: list[float] = []
        self._buckets: list[tuple[float, float]] = []  # this step's all-reduces: (launched, done)
        self._communication: list[tuple[float, float]] = []  # per timed step: (in flight, exposed)
        self._watched = False
        self._seen = 0
        self._closed = False
        self._synchronize = self._synchronizer() if sync else None

    @staticmethod
    def _synchronizer() -> Any:
        import torch

        return torch.cuda.synchronize if torch.cuda.is_available() and torch.cuda.is_initialized() else None  # type: ignore[no-untyped-call]

    def watch(self, model: Any) -> Any:
        """Time ``model``'s gradient all-reduces (a ``DistributedDataParallel``): returns it, hooked.

        The hook is DDP's default all-reduce with a clock read when a bucket is launched and one
        when its result is ready; DDP accepts one hook per model, so this one replaces none other.
        """
        import torch
        import torch.distributed as dist
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        buckets = self._buckets

        def timed(state: object, bucket: Any) -> Any:
            launched = time.perf_counter()

            def done(future: Any) -> Any:
                buckets.append((launched, time.perf_counter()))
                return future.value()[0]

            return default_hooks.allreduce_hook(None, bucket).then(done)  # type: ignore[arg-type]

        # DDP checks a hook's annotations as objects; this module's are strings (postponed evaluation)
        timed.__annotations__ = {"bucket": dist.GradBucket, "return": torch.futures.Future[torch.Tensor]}  # type: ignore[attr-defined]
        model.register_comm_hook(None, timed)
        self._watched = True
        return model

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """Time one step: everything inside the ``with`` block."""
        self._buckets.clear()
        start = time.perf_counter()
        try:
            yield
        finally:
            if self._synchronize is not None:
                self._synchronize()
            elapsed = time.perf_counter() - start
            self._seen += 1
            if self._seen > self.warmup:
                self.times.append(elapsed)
                if self._watched:
                    self._communication.append(_in_flight(self._buckets))

    def close(self, *, complete: bool = True) -> dict[str, Any] | None:
        """Gather every rank's step times and write the record on rank 0 (returned there)."""
        if self._closed:
            return None
        self._closed = True
        import torch.distributed as dist

        world, rank = 1, 0
        mine = (self.times, self._communication)
        gathered: list[Any] = [mine]
        grouped = dist.is_available() and dist.is_initialized()
        if grouped:
            world, rank = dist.get_world_size(), dist.get_rank()
            gathered = [None] * world
            dist.all_gather_object(gathered, mine)
        try:
            return self._write(gathered, world, rank, complete) if rank == 0 else None
        finally:
            if grouped:
                dist.barrier()  # every rank leaves together: none tears the group down under another

    def _write(self, everything: list[Any], world: int, rank: int, complete: bool) -> dict[str, Any]:
        import torch
        import torch.distributed as dist

        gathered = [times for times, _ in everything]
        watched = [step for _, steps in everything for step in steps]
        breakdown = {}
        if watched:
            breakdown = {
                "communication_time": sum(flight for flight, _ in watched) / len(watched),
                "exposed_communication": sum(exposed for _, exposed in watched) / len(watched),
            }
        slowest = summary.slowest_steps(gathered)
        throughput = summary.rate(world * self.batch, slowest)
        measured = Measurement(
            devices=world,
            throughput=throughput,
            per_rank_throughput=tuple(summary.rate(self.batch, times) for times in gathered),
            backend=dist.get_backend() if dist.is_available() and dist.is_initialized() else None,
            device_type="cuda" if torch.cuda.is_available() and torch.cuda.is_initialized() else "cpu",  # type: ignore[no-untyped-call]
            torch=torch.__version__,
            batch=self.batch,
            steps=len(slowest),
            warmup=self.warmup,
            step_time=summary.step_time(slowest) if slowest else None,
            source="meter",
            complete=complete and throughput > 0,  # a loop that never stepped measured nothing
            time=records.timestamp(),
        )
        record = Measurement.from_dict({**measured.to_dict(), **breakdown, **self.extra})  # the caller's own keys
        if not measured.complete:
            record = dataclasses.replace(record, complete=False)
        records.append(self.out, record)
        return record.to_dict()

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.close(complete=kind is None)


def _in_flight(buckets: list[tuple[float, float]]) -> tuple[float, float]:
    """(time some all-reduce was in flight, time from the last launch to the last end) over one step's buckets."""
    if not buckets:
        return 0.0, 0.0
    total, reach = 0.0, float("-inf")
    for launched, done in sorted(buckets):  # the union of the intervals, swept in order
        if done > reach:
            total += done - max(launched, reach)
            reach = done
    last_launch = max(launched for launched, _ in buckets)
    return total, max(0.0, reach - last_launch)
