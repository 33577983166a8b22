"""``dpscale measure``: every input checked, torchrun at each size, a record for each.

The command is a few steps: its inputs checked into a plan (:func:`plan_measure`), the output
path included, before any rank starts; then the runs of each size, each supervised by
:mod:`dpscale.measure.supervise` (a session of its own, ended whole by a timeout or a signal; a
failure named by :mod:`dpscale.measure.diagnosis`); then each size's repeats summed up by
:mod:`dpscale.measure.summary` into a typed record (:class:`~dpscale.records.Measurement`),
added to the output as soon as it is measured. Nothing is written as complete unless every rank
finished. ``dpscale probe`` is :mod:`dpscale.measure.probing`'s (its names are here too).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpscale.errors import N_, InvalidInput, RunFailed
from dpscale.measure import summary, supervise
from dpscale.measure.alphabeta import fit_alpha_beta
from dpscale.measure.launch import MAX_RANKS_PER_NODE, MAX_STEPS, Launch, bounded, clip, writable
from dpscale.measure.probing import MAX_PROBE_BYTES, ProbePlan, plan_probe, probe, run_probe
from dpscale.measure.supervise import Terminated
from dpscale.records import Measurement, append, finite_or_none, timestamp, unwritten

__all__ = [
    "MAX_BATCH",
    "MAX_PARAMS",
    "MAX_PROBE_BYTES",
    "MAX_REPEATS",
    "MAX_STEPS",
    "MEASURED_SHARDINGS",
    "Launch",
    "MeasurePlan",
    "ProbePlan",
    "Terminated",
    "fit_alpha_beta",
    "measure",
    "plan_measure",
    "plan_probe",
    "probe",
    "run_measurement",
    "run_probe",
]


MAX_PARAMS = 1e9  # 4 GB of fp32 weights and as much again of gradients, on every rank
MAX_BATCH = 65536  # samples per rank per step
MAX_REPEATS = 1000
MEASURED_SHARDINGS = ("ddp", "zero2", "zero3", "hybrid")  # what PyTorch's DDP and FSDP run (FSDP has no ZeRO-1)

Progress = Callable[[int, int], None]  # runs done, runs in all


@dataclass(frozen=True, slots=True)
class MeasurePlan:
    """A measurement checked and ready to run: the sizes, the workload, how and where it runs, where it is written."""

    sizes: tuple[int, ...]  # ranks per node, each once, smallest first
    workload: str
    params: float
    batch: int
    steps: int
    warmup: int
    repeats: int
    sharding: str  # ddp, zero2, zero3 or hybrid
    launch: Launch  # its threads per rank fixed for the largest size
    out: str | Path | None  # the JSON-lines file the records are added to, as given (None: returned only)

    @property
    def runs(self) -> int:
        """torchrun's runs in all: each size, ``repeats`` times."""
        return len(self.sizes) * self.repeats

    def worker_options(self) -> list[str]:
        """The worker's options for each run."""
        return [
            f"--workload={self.workload}",
            f"--params={self.params}",
            f"--batch={self.batch}",
            f"--steps={self.steps}",
            f"--warmup={self.warmup}",
            f"--sharding={self.sharding}",
        ]


def measure(
    sizes: Sequence[int],
    *,
    workload: str = "mlp",
    params: float = 1e6,
    batch: int = 32,
    steps: int = 20,
    warmup: int = 5,
    repeats: int = 3,
    sharding: str = "ddp",
    cluster: Launch | None = None,
    out: str | Path | None = None,
    progress: Progress | None = None,
) -> tuple[Measurement, ...]:
    """Run the synthetic workload at each size (ranks per node; ``cluster.nnodes`` nodes), ``repeats`` times.

    Returns one record per size (none on the nodes other than node 0): cluster throughput with a
    95 % confidence interval over the repeats, per-rank throughput, step-time statistics, and E
    against the 1-rank run when one was measured. Records are appended to ``out`` as JSON lines
    (:meth:`~dpscale.records.Measurement.to_dict`). ``sharding`` runs the workload under DDP or
    PyTorch's FSDP (``zero2``, ``zero3``, ``hybrid``, or FSDP's own names); each record says
    which, with the most memory a rank held. ``progress(done, total)`` is told after each run.
    """
    plan = plan_measure(
        sizes,
        workload=workload,
        params=params,
        batch=batch,
        steps=steps,
        warmup=warmup,
        repeats=repeats,
        sharding=sharding,
        cluster=cluster,
        out=out,
    )
    return run_measurement(plan, progress)


def plan_measure(
    sizes: Sequence[int],
    *,
    workload: str = "mlp",
    params: float = 1e6,
    batch: int = 32,
    steps: int = 20,
    warmup: int = 5,
    repeats: int = 3,
    sharding: str = "ddp",
    cluster: Launch | None = None,
    out: str | Path | None = None,
) -> MeasurePlan:
    """:func:`measure`'s inputs checked (InvalidInput names the first that is not fine), before any rank starts.

    The threads per rank are fixed here, the same at every size, from the CPUs this process may
    use (a RuntimeWarning where the ranks of the largest size outnumber them).
    """
    base = cluster or Launch()
    sharding = _measured_sharding(sharding)
    for name, value, least, most in (
        ("steps", steps, 1, MAX_STEPS),
        ("warmup", warmup, 0, MAX_STEPS),
        ("repeats", repeats, 1, MAX_REPEATS),
        ("batch", batch, 1, MAX_BATCH),
    ):
        bounded(name, value, least, most)
    if isinstance(params, bool) or not (isinstance(params, int | float) and 1e3 <= params <= MAX_PARAMS):
        raise InvalidInput(
            "params",
            params,
            N_("from 1k to %(most)s (every rank holds the model and its gradients)"),
            params={"most": f"{MAX_PARAMS:.0e}"},
        )
    counts = _rank_counts(sizes)
    if out is not None and base.node_rank == 0:
        writable("out", out)
    from dpscale.measure.workloads import KINDS  # torch, which the runs need anyway

    if workload not in KINDS:
        shown = clip(workload) if isinstance(workload, str) else workload
        raise InvalidInput("workload", shown, N_("one of %(choices)s"), params={"choices": ", ".join(KINDS)})
    return MeasurePlan(
        sizes=counts,
        workload=workload,
        params=params,
        batch=batch,
        steps=steps,
        warmup=warmup,
        repeats=repeats,
        sharding=sharding,
        launch=base.settled(max(counts)),
        out=out if base.node_rank == 0 else None,  # node 0 writes the records
    )


def run_measurement(plan: MeasurePlan, progress: Progress | None = None) -> tuple[Measurement, ...]:
    """Each size of ``plan`` run and summed up into its record, added to ``plan.out`` as soon as it is measured."""
    found: list[Measurement] = []
    single: summary.Repeats | None = None  # the 1-rank run, which E is relative to
    for index, n in enumerate(plan.sizes):
        runs = _run_size(plan, n, index, progress, found)
        if not runs[0]:
            continue  # not rank 0's node: nothing to record here
        measured = summary.repeats([run["step_times"] for run in runs], plan.batch)
        if measured.devices == 1:
            single = measured
        record = _record(plan, runs, measured, single)
        if plan.out is not None:
            try:
                append(plan.out, record)
            except OSError as exc:
                raise unwritten("out", clip(os.fspath(plan.out)), exc) from None
        found.append(record)
    return tuple(found)


def _run_size(
    plan: MeasurePlan, n: int, index: int, progress: Progress | None, recorded: Sequence[Measurement]
) -> list[dict[str, Any]]:
    """The repeats at ``n`` ranks per node (the ``index``-th size): rank 0's result of each (``{}`` on other nodes).

    A run that fails says what the sizes measured before it left (``recorded``).
    """
    launch = dataclasses.replace(plan.launch, nproc_per_node=n)
    runs = []
    for repeat in range(plan.repeats):
        try:
            runs.append(supervise.run("train", launch, plan.worker_options()))
        except RunFailed as exc:
            raise RunFailed(f"{exc}; {_measured_before(recorded, plan.out)}") from None
        if progress is not None:
            progress(index * plan.repeats + repeat + 1, plan.runs)
    return runs


def _record(
    plan: MeasurePlan, runs: Sequence[Mapping[str, Any]], measured: summary.Repeats, single: summary.Repeats | None
) -> Measurement:
    """One size's record: ``measured`` (its repeats summed up), what its runs said, E against ``single``."""
    e, e_ci = (None, None) if single is None else summary.efficiency(measured, single)
    first = runs[0]
    peaks = [peak for run in runs for peak in run.get("peak_memory", ())]
    return Measurement(
        devices=measured.devices,
        throughput=measured.throughput,
        throughput_ci=(finite_or_none(measured.low), finite_or_none(measured.high)),
        per_rank_throughput=measured.per_rank,
        nodes=first["nodes"],
        backend=first["backend"],
        device_type=first["device_type"],
        device_name=first["device_name"],
        torch=first["torch"],
        threads_per_rank=first["threads_per_rank"],
        cpus_usable=first.get("cpus_usable"),
        workload=plan.workload,
        params=first["params"],
        batch=plan.batch,
        steps=plan.steps,
        warmup=plan.warmup,
        repeats=plan.repeats,
        step_time=measured.step_time,
        complete=True,
        time=timestamp(),
        efficiency=e,
        efficiency_ci=e_ci,
        sharding=first.get("sharding", plan.sharding),
        peak_memory=max(peaks) if peaks else None,
    )


def _rank_counts(sizes: Sequence[int]) -> tuple[int, ...]:
    """The sizes (ranks per node) each once, smallest first; InvalidInput naming nproc unless each is within bounds."""
    listed = list(sizes) if isinstance(sizes, Sequence) and not isinstance(sizes, str) else None
    if not listed or any(
        isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_RANKS_PER_NODE for n in listed
    ):
        raise InvalidInput(
            "nproc",
            listed if listed is not None and len(str(listed)) <= 80 else clip(str(sizes)),
            N_("one or more rank counts per node, each from 1 to %(most)s"),
            params={"most": MAX_RANKS_PER_NODE},
        )
    return tuple(sorted(set(listed)))


def _measured_sharding(value: object) -> str:
    """``value`` as one of :data:`MEASURED_SHARDINGS` (FSDP's own names and predict's synonyms read too)."""
    from dpscale.predict.defaults import SHARDING_SYNONYMS

    name = value.strip().lower() if isinstance(value, str) else value
    name = dict(SHARDING_SYNONYMS).get(name, name) if isinstance(name, str) else name
    if name not in MEASURED_SHARDINGS:
        shown = clip(value) if isinstance(value, str) else value
        accepted = ", ".join(MEASURED_SHARDINGS)
        raise InvalidInput(
            "sharding", shown, N_("one of %(choices)s (FSDP runs no ZeRO-1)"), params={"choices": accepted}
        )
    return str(name)


def _measured_before(recorded: Sequence[Measurement], out: str | Path | None) -> str:
    """What a failed measurement leaves: the records of the sizes done before it, if any."""
    devices = [record.devices for record in recorded]
    if not devices or out is None:
        return "no record written"
    several = len(devices) > 1
    sizes = ", ".join(map(str, devices[:-1])) + f" and {devices[-1]}" if several else str(devices[0])
    what = f"the record{'s' if several else ''} for {sizes} rank{'' if devices == [1] else 's'}"
    where = clip(os.fspath(out))
    return f"no record written at this size; {what}, measured before, {'are' if several else 'is'} in {where}"
